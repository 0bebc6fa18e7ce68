/** Server errors said in the command's terms: its argument or option instead of the method and key path. */
import { describe, expect, it } from 'vitest';
import { inCommandTerms } from '../../src/cli/command-terms.js';

describe('inCommandTerms', () => {
  it("replaces the method and key path with the command's name for the parameter", () => {
    expect(inCommandTerms('conversation/update: params.title: at most 200 characters (got 201)', { title: '<title>' })).toBe('<title>: at most 200 characters (got 201)');
    expect(inCommandTerms('conversation/list: params.query: the query is not valid at its end', { query: '<query>' })).toBe('<query>: the query is not valid at its end');
  });

  it('drops the prefix when the parameter maps to nothing (the caller names the option already)', () => {
    expect(inCommandTerms('conversation/fork: params.fromItemId: item "x" is not stored', { fromItemId: '' })).toBe('item "x" is not stored');
  });

  it('keeps a message whose parameter it does not know, or that has no such prefix', () => {
    expect(inCommandTerms('conversation/update: params.workLocation: must be an array', { title: '<title>' })).toBe('conversation/update: params.workLocation: must be an array');
    expect(inCommandTerms('conversation "conv_x" does not exist', { title: '<title>' })).toBe('conversation "conv_x" does not exist');
    expect(inCommandTerms('params.title: too long', { title: '<title>' })).toBe('params.title: too long');
  });
});

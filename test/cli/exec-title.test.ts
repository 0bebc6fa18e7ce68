/** The title `openvaala exec` gives a new conversation from its prompt. */
import { describe, expect, it } from 'vitest';
import { titleOf } from '../../src/cli/exec.js';

describe('titleOf', () => {
  it('takes the first non-empty line, with white space folded', () => {
    expect(titleOf('\n\n  Why does   the build\tfail?  \nFix it.')).toBe('Why does the build fail?');
  });

  it('cuts a long line to 80 characters with an ellipsis, never inside a character', () => {
    const title = titleOf('é'.repeat(200));
    expect([...title]).toHaveLength(80);
    expect(title.endsWith('…')).toBe(true);
    expect(titleOf('x'.repeat(80))).toBe('x'.repeat(80));
  });

  it('is empty for a prompt of only white space', () => {
    expect(titleOf(' \n\t ')).toBe('');
  });
});

/**
 * A tag that selects none of a discriminated union's forms is told with the value found and the
 * values allowed, in configuration files and protocol params alike (zod says only "Invalid
 * discriminator value", whether the tag is missing or misspelled).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseParams } from '../../src/protocol/json-rpc.js';
import { explainIssue } from '../../src/validation-issues.js';

const Shape = z.object({ shape: z.discriminatedUnion('kind', [z.object({ kind: z.literal('circle'), radius: z.number() }), z.object({ kind: z.literal('square'), side: z.number() })]) });

describe('a discriminator that selects no form', () => {
  it('names the value given and the values allowed, with the nearest one', () => {
    expect(() => parseParams('shapes/add', Shape, { shape: { kind: 'circel', radius: 1 } })).toThrow('shapes/add: params.shape.kind: "circel" is not one of "circle", "square" (did you mean "circle"?)');
  });

  it('says it is missing when it is', () => {
    expect(() => parseParams('shapes/add', Shape, { shape: { radius: 1 } })).toThrow('shapes/add: params.shape.kind: required, but missing (one of "circle", "square")');
  });

  it('lists the values allowed when the parsed value is not known', () => {
    const parsed = Shape.safeParse({ shape: { kind: 'hexagon' } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.flatMap((issue) => explainIssue(issue))).toEqual([{ keyPath: ['shape', 'kind'], message: 'must be one of "circle", "square"' }]);
  });
});

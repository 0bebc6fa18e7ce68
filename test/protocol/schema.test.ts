import { describe, expect, it } from 'vitest';
import { buildProtocolJsonSchema } from '../../src/protocol/generate-schema.js';
import { methods, notifications } from '../../src/protocol/index.js';
import { describeParamsErrors, parseParams, RpcError } from '../../src/protocol/json-rpc.js';

describe('the protocol module', () => {
  it('exports every method and notification as JSON Schema', () => {
    const schema = buildProtocolJsonSchema() as { definitions: Record<string, { type?: string; properties?: Record<string, unknown> }> };
    for (const name of Object.keys(methods)) {
      expect(schema.definitions[`${name}.params`]?.type, name).toBe('object');
      expect(schema.definitions[`${name}.result`]?.type, name).toBe('object');
    }
    for (const name of Object.keys(notifications)) expect(schema.definitions[`notification:${name}`]?.type, name).toBe('object');
    expect(Object.keys(schema.definitions['conversation/create.params']?.properties ?? {})).toContain('cwd');
  });

  it('names the method and every failing field path in validation errors', () => {
    const error = (() => {
      try {
        parseParams('session/input', methods['session/input'].params, { conversationId: 7, input: '', mode: 'shout' });
      } catch (caught) {
        return caught as RpcError;
      }
      throw new Error('parseParams accepted invalid params');
    })();
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('session/input: params.conversationId:');
    expect(error.message).toContain('session/input: params.mode:');
    expect(error.message).toContain('session/input: params.input:');
    const issues = (error.data as { issues: { path: string[] }[] }).issues.map((issue) => issue.path.join('.'));
    expect(issues).toEqual(expect.arrayContaining(['conversationId', 'mode', 'input']));
  });

  it('treats missing params as an empty object, so required fields are reported by name', () => {
    const result = methods['conversation/get'].params.safeParse({});
    expect(result.success).toBe(false);
    if (!result.success) expect(describeParamsErrors('conversation/get', result.error)).toMatch(/^conversation\/get: params\.conversationId: /);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { buildProtocolJsonSchema, SCHEMA_PATH, schemaFileText } from '../../src/protocol/generate-schema.js';
import { ItemSchema, methods, notifications, serverRequests } from '../../src/protocol/index.js';
import { describeParamsErrors, ErrorCodes, parseParams, RpcError } from '../../src/protocol/json-rpc.js';
import { ConnectionMessageValidator, ProtocolSchema } from '../../src/protocol/message-validator.js';
import { pascalName } from '../../src/protocol/schema-names.js';

const root = path.resolve(import.meta.dirname, '../..');
const committedText = readFileSync(path.join(root, SCHEMA_PATH), 'utf8');
const committed = JSON.parse(committedText) as { $defs: Record<string, Record<string, unknown>> };
const defs = committed.$defs;

describe('the committed JSON Schema', () => {
  it('is what the zod definitions generate', () => {
    expect(committedText === schemaFileText(buildProtocolJsonSchema()), `${SCHEMA_PATH} is stale: run \`npm run generate:schema\` and commit the result`).toBe(true);
  });

  it('defines each shared entity once, by name, and refers to it with $ref', () => {
    const kinds = ItemSchema.options.map((option) => option.shape.kind.value);
    for (const name of ['Item', 'Conversation', 'Session', 'Turn', 'ApprovalRequest', 'ContentPart', 'TokenUsage', 'StoredItem', ...kinds.map((kind) => `${pascalName(kind)}Item`)]) {
      expect(defs[name], name).toBeDefined();
    }
    expect(defs.ConversationCreateResult?.properties).toEqual({ conversation: { $ref: '#/$defs/Conversation' }, session: { $ref: '#/$defs/Session' } });
    expect((defs.Item?.oneOf as unknown[]).length).toBe(kinds.length);
    // Each item kind is spelled out in exactly one place, whatever refers to it.
    for (const kind of kinds) expect(committedText.split(`"const": "${kind}"`).length - 1, kind).toBe(1);
  });

  it('has params, result and envelopes for every method, notification and server request', () => {
    for (const name of Object.keys(methods)) {
      for (const suffix of ['Params', 'Result', 'Request', 'Response']) expect(defs[`${pascalName(name)}${suffix}`], `${name} ${suffix}`).toBeDefined();
    }
    for (const name of Object.keys(notifications)) expect(defs[`${pascalName(name)}Notification`], name).toBeDefined();
    for (const name of Object.keys(serverRequests)) {
      expect(defs[`${pascalName(name)}ServerRequest`], name).toBeDefined();
      expect(defs[`${pascalName(name)}ServerRequestResponse`], name).toBeDefined();
    }
    expect(defs.ProtocolVersion).toMatchObject({ const: 2 });
  });

  it('validates whole wire messages at its root and names the failing path', () => {
    const schema = new ProtocolSchema(committed);
    const validator = new ConnectionMessageValidator(schema);
    expect(validator.check('sent', { jsonrpc: '2.0', id: 1, method: 'conversation/get', params: { conversationId: 'conv_1' } }).problems).toEqual([]);
    // The response is checked against the result of the request with the same id.
    const wrong = validator.check('received', { jsonrpc: '2.0', id: 1, result: { conversation: {}, sessions: [], turns: [] } });
    expect(wrong.definition).toBe('ConversationGetResponse');
    expect(wrong.method).toBe('conversation/get');
    expect(wrong.problems.join('\n')).toContain('result.conversation must have required property');
    expect(validator.check('received', { jsonrpc: '2.0', method: 'turn/started', params: { conversationId: 'conv_1', seq: 1 } }).problems).toEqual(["params must have required property 'turn'"]);
    expect(validator.check('received', { jsonrpc: '2.0', method: 'no/such', params: {} }).problems[0]).toContain('is not a notification of this protocol version');
    // A name whose definition would be a data type of the document (ApprovalRequest,
    // UserInputRequest), not a message of a method, is not a method either.
    expect(validator.check('sent', { jsonrpc: '2.0', id: 7, method: 'approval', params: {} }).problems[0]).toContain('is not a method of this protocol version');
    expect(validator.check('received', { jsonrpc: '2.0', id: 8, method: 'user_input', params: {} }).problems[0]).toContain('is not a server-to-client request of this protocol version');
    // Names that differ only in separators share a Pascal name; only the method's own passes.
    expect(validator.check('sent', { jsonrpc: '2.0', id: 9, method: 'conversation_get', params: { conversationId: 'conv_1' } }).problems[0]).toContain('is not a method of this protocol version');
    expect(validator.check('received', { jsonrpc: '2.0', id: 'x', error: { code: ErrorCodes.conflict, message: 'm' } }).problems.join()).toContain("must have required property 'data'");
    expect(validator.check('received', { jsonrpc: '2.0', id: 'x', error: { code: ErrorCodes.conflict, message: 'm', data: { reason: 'session_closed' } } }).problems).toEqual([]);
    expect(schema.check('ClientMessage', { jsonrpc: '1.0', id: 1, method: 'initialize', params: {} }).length).toBeGreaterThan(0);
    expect(schema.check('ServerMessage', { jsonrpc: '2.0', id: 3, result: {} })).toEqual([]);
    // The root itself, as another client would compile it.
    const root = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(committed);
    expect(root({ jsonrpc: '2.0', method: 'config/updated', params: { ok: true } })).toBe(true);
    expect(root({ jsonrpc: '2.0', method: 'config/updated', params: { ok: 'yes' } })).toBe(false);
  });
});

describe('protocol errors', () => {
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

  it('gives a conflict its machine-readable reason', () => {
    const error = RpcError.conflict('session/input: session sess_1 is closed', 'session_closed');
    expect(error.code).toBe(-32009);
    expect(error.data).toEqual({ reason: 'session_closed' });
  });
});

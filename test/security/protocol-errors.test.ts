/**
 * Client mistakes are refused at the protocol boundary, in protocol terms (-32602 invalid
 * params naming the field, -32004 not found), for every method; failures inside the server
 * reach the client as -32603 with a log reference only — no paths, no storage layout.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import { methods, PROTOCOL_VERSION, type MethodName } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
let client: RuntimeClient | undefined;
const logLines: string[] = [];
afterEach(async () => {
  await client?.close();
  await server?.stop();
  await environment?.dispose();
  client = undefined;
  server = undefined;
  environment = undefined;
  logLines.length = 0;
});

async function start(): Promise<RuntimeClient> {
  environment = await createTestEnvironment('responses: []\n');
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) }) });
  client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'test' });
  return client;
}

/** The error a request gets. @throws Error when it succeeds */
async function errorOf(connection: RuntimeClient, method: string, params: unknown): Promise<RuntimeClientError> {
  try {
    await connection.request(method as MethodName, params as never);
  } catch (error) {
    if (error instanceof RuntimeClientError) return error;
    throw error;
  }
  throw new Error(`${method} ${JSON.stringify(params)} succeeded`);
}

const methodsTakingAConversation = (Object.keys(methods) as MethodName[]).filter((method) => 'conversationId' in ((methods[method].params as unknown as { shape?: object }).shape ?? {}));

it('refuses malformed ids for every method that takes one, naming the field', async () => {
  const connection = await start();
  expect(methodsTakingAConversation.length).toBeGreaterThan(8);
  for (const method of methodsTakingAConversation) {
    for (const conversationId of ['conv_x\u0000y', '../../etc', 'conv_a/b', '']) {
      const error = await errorOf(connection, method, { conversationId, input: 'x', approvalId: 'appr_1', decision: 'deny', model: 'mock/mock-model' });
      expect(error.code, `${method} ${JSON.stringify(conversationId)}`).toBe(-32602);
      expect(error.message).toContain(`${method}: params.conversationId`);
    }
  }
  const { conversation } = await connection.request('conversation/create', { cwd: environment!.workDir });
  const error = await errorOf(connection, 'items/list', { conversationId: conversation.id, sessionId: 'sess_../../x' });
  expect(error.code).toBe(-32602);
  expect(error.message).toContain('params.sessionId');
  const afterSeq = await errorOf(connection, 'conversation/subscribe', { conversationId: conversation.id, afterSeq: { 'sess_a\u0000': 1 } });
  expect(afterSeq.code).toBe(-32602);
});

it('answers an unknown conversation with -32004 for every method that takes one', async () => {
  const connection = await start();
  // Unsubscribing from what one does not follow is a no-op, whatever the id names.
  for (const method of methodsTakingAConversation.filter((name) => name !== 'conversation/unsubscribe')) {
    // Each method gets the values of its own params only: a field it does not take is refused first.
    const values: Record<string, unknown> = { conversationId: 'conv_00000000000000000000000000', input: 'x', approvalId: 'appr_1', decision: 'deny', model: 'mock/mock-model', agent: 'default', requestId: 'input_1', answer: 'x', inputId: 'input_1', fromItemId: 'item_1', afterItemId: 'item_1', path: '.', cols: 80, rows: 24, commit: 'abc1234', read: true, write: true, run: true, name: 'x', prompt: 'x', schedule: { kind: 'once', at: 0 }, action: { kind: 'key', key: 'Enter' } };
    const own = Object.keys((methods[method].params as unknown as { shape: object }).shape);
    const error = await errorOf(connection, method, Object.fromEntries(Object.entries(values).filter(([key]) => own.includes(key))));
    expect(error.code, method).toBe(-32004);
    expect(error.message).toBe(`${method}: conversation "conv_00000000000000000000000000" does not exist`);
  }
});

it('refuses a cursor that is not one, and relative or duplicated work locations, as invalid params', async () => {
  const connection = await start();
  for (const cursor of ['bm90IGEgY3Vyc29y', 'not a cursor', 'eyJ2IjoxfQ']) {
    const error = await errorOf(connection, 'conversation/list', { cursor });
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('conversation/list: params.cursor: not a cursor returned by conversation/list');
  }
  expect((await errorOf(connection, 'conversation/create', { cwd: 'relative/dir' })).code).toBe(-32602);
  const twice = await errorOf(connection, 'conversation/create', { workLocation: [{ executor: 'local', cwd: '/tmp' }, { executor: 'local', cwd: '/srv' }] });
  expect(twice.code).toBe(-32602);
  expect(twice.message).toContain('params.workLocation[1].executor');
});

it('reports a failure inside the server as -32603 with a log reference, and no path or storage detail', async () => {
  const connection = await start();
  const { conversation } = await connection.request('conversation/create', { cwd: environment!.workDir });
  const failure = new Error(`EIO: i/o error, read '${path.join(environment!.paths.dataDir, 'conversations', conversation.id, 'metadata.jsonl')}'`);
  vi.spyOn(server!.runtime, 'getConversation').mockRejectedValue(failure);
  const error = await errorOf(connection, 'conversation/get', { conversationId: conversation.id });
  expect(error.code).toBe(-32603);
  expect(error.message).toMatch(/^conversation\/get: internal error \(reference [0-9a-f]{8} in the server log\)$/);
  expect(error.message).not.toContain(environment!.root);
  expect(error.message).not.toContain('metadata.jsonl');
  const reference = /reference ([0-9a-f]{8})/.exec(error.message)?.[1] as string;
  const logged = logLines.find((line) => line.includes(reference));
  expect(logged).toBeDefined();
  expect(logged).toContain('metadata.jsonl');
});

it('names a log that cannot be read by its place in the data directory, never by where that directory is', async () => {
  const connection = await start();
  // A conversation directory whose metadata log cannot be read.
  const conversationId = 'conv_01abcdefghjkmnpqrstvwxyz00';
  mkdirSync(path.join(environment!.paths.dataDir, 'conversations', conversationId, 'metadata.jsonl'), { recursive: true });
  const error = await errorOf(connection, 'conversation/get', { conversationId });
  expect(error.code).toBe(-32009);
  expect(error.message).toContain(`<data dir>/conversations/${conversationId}/metadata.jsonl`);
  expect(error.message).toContain('it is a directory');
  expect(error.message).not.toContain(environment!.root);
});

it('names the path inside a union param: the content part, its type or its text, or a missing input', async () => {
  const connection = await start();
  const { conversation } = await connection.request('conversation/create', { cwd: environment!.workDir });
  const conversationId = conversation.id;
  const notListNorText = await errorOf(connection, 'session/input', { conversationId, input: 5 });
  expect(notListNorText.code).toBe(-32602);
  expect(notListNorText.message).toBe('session/input: params.input: expected string or array, received number');
  const wrongType = await errorOf(connection, 'session/input', { conversationId, input: [{ type: 'txt', text: 'x' }] });
  expect(wrongType.message).toMatch(/^session\/input: params\.input\[0\](\.type)?: /);
  expect(wrongType.message).not.toContain('Invalid input');
  const wrongText = await errorOf(connection, 'session/input', { conversationId, input: [{ type: 'text', text: 5 }] });
  expect(wrongText.message).toBe('session/input: params.input[0].text: Invalid input: expected string, received number');
  const missing = await errorOf(connection, 'session/input', { conversationId });
  expect(missing.message).toBe('session/input: params.input: required, but missing (a string or a list expected)');
  expect(missing.data).toEqual({ issues: [{ path: ['input'], message: 'required, but missing (a string or a list expected)' }] });
});

it('names the method of a message that is no JSON-RPC 2.0 request, and never answers a response', async () => {
  await start();
  const socket = new WebSocket(`${server!.url.replace(/^http/, 'ws')}/api/v1/openvaala`, { headers: { authorization: `Bearer ${server!.token}` } });
  const received: { id?: unknown; error?: { message: string }; result?: unknown }[] = [];
  socket.on('message', (data) => received.push(JSON.parse(data.toString()) as (typeof received)[number]));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const answerTo = async (id: number) => {
    const deadline = Date.now() + 5000;
    while (!received.some((message) => message.id === id)) {
      if (Date.now() > deadline) throw new Error(`no answer to ${id}; got ${JSON.stringify(received)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return received.find((message) => message.id === id);
  };
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'raw' }, protocolVersion: PROTOCOL_VERSION, capabilities: {} } }));
  await answerTo(1);
  socket.send(JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'conversation/list' }));
  expect((await answerTo(7))?.error?.message).toMatch(/^conversation\/list: not a JSON-RPC 2\.0 request: jsonrpc: /);
  // A stray response, then a request: only the request is answered.
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 13, result: {} }));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 14, method: 'conversation/list', params: {} }));
  expect((await answerTo(14))?.result).toBeDefined();
  expect(received.filter((message) => message.id === 13)).toEqual([]);
  expect(logLines.some((line) => line.includes('a response to no request of the server was ignored'))).toBe(true);
  // Text that is no JSON (a binary file's bytes): the parse error quotes it without its control characters.
  socket.send('PK\u0003\u0004\u001b[2J\ufffd{');
  const deadline = Date.now() + 5000;
  while (!received.some((message) => message.id === null)) {
    if (Date.now() > deadline) throw new Error(`no parse error; got ${JSON.stringify(received)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const parseError = received.find((message) => message.id === null)?.error?.message ?? '';
  expect(parseError).toMatch(/^invalid JSON: /);
  expect(parseError).toContain('\\u001b[2J');
  // Control characters are what this pattern looks for.
  // eslint-disable-next-line no-control-regex
  expect(parseError).not.toMatch(/[\u0000-\u001f\ufffd]/);
  socket.close();
});

it('refuses params fields no schema names, naming each and the field likely meant, and creates nothing', async () => {
  const connection = await start();
  const misspelt = await errorOf(connection, 'conversation/create', { cwd: environment!.workDir, modle: 'nosuch/x' });
  expect(misspelt.code).toBe(-32602);
  expect(misspelt.message).toBe('conversation/create: params.modle: unknown field (did you mean "model"?)');
  expect((await connection.request('conversation/list', {})).conversations).toEqual([]);
  const listing = await errorOf(connection, 'conversation/list', { bogusField: 1 });
  expect(listing.message).toBe('conversation/list: params.bogusField: unknown field');
  const { conversation } = await connection.request('conversation/create', { cwd: environment!.workDir });
  const nested = await errorOf(connection, 'session/input', { conversationId: conversation.id, input: [{ type: 'text', text: 'hi', colour: 'red' }] });
  expect(nested.message).toBe('session/input: params.input[0].colour: unknown field');
  expect(nested.data).toEqual({ issues: [{ path: ['input', '0', 'colour'], message: 'unknown field' }] });
});

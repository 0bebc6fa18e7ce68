import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { observeProtocolMessages, RuntimeClient, type ProtocolMessageEvent } from '../../src/client/runtime-client.js';
import { API_PATH, PROTOCOL_VERSION } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { checkReceivedMessage, takeProtocolViolations } from '../setup/protocol-validation.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A WebSocket server at the API path that answers each request with `answer(method)`. */
async function fakeServer(answer: (message: { id: number; method: string }, socket: WebSocket) => void): Promise<string> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, path: API_PATH });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (socket) => socket.on('message', (data) => answer(JSON.parse(data.toString()) as { id: number; method: string }, socket)));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

it('shows every message a client sends and receives to observers, in order and with its direction', async () => {
  const url = await fakeServer((message, socket) => {
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'config/updated', params: { ok: true } }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: message.method === 'initialize' ? { serverInfo: { name: 'fake', version: '0' }, protocolVersion: PROTOCOL_VERSION, capabilities: { features: [] } } : { models: [] } }));
  });
  const seen: Omit<ProtocolMessageEvent, 'client' | 'text'>[] = [];
  cleanups.push(observeProtocolMessages(({ direction, message }) => seen.push({ direction, message })));
  const client = await RuntimeClient.connect({ url, token: 't', clientName: 'observed' });
  cleanups.push(() => client.close());
  await client.request('models/list', {});
  expect(seen.map(({ direction, message }) => `${direction} ${(message as { method?: string }).method ?? `response ${String((message as { id: number }).id)}`}`)).toEqual([
    'sent initialize',
    'received config/updated',
    'received response 1',
    'sent models/list',
    'received config/updated',
    'received response 2',
  ]);
  expect(seen[0]?.message).toMatchObject({ params: { protocolVersion: 2 } });
  expect(takeProtocolViolations()).toEqual([]);
});

it('records a message that does not match the schema with its method and the key path of each error', async () => {
  const url = await fakeServer((message, socket) => {
    if (message.method === 'initialize') socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { serverInfo: { name: 'fake', version: '0' }, protocolVersion: PROTOCOL_VERSION, capabilities: { features: [] } } }));
    else {
      socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'turn/started', params: { conversationId: 'conv_1', turn: { id: 'turn_1' }, seq: 1 } }));
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { models: 'none' } }));
    }
  });
  const client = await RuntimeClient.connect({ url, token: 't', clientName: 'checked' });
  cleanups.push(() => client.close());
  await client.request('models/list', {});
  const violations = takeProtocolViolations();
  expect(violations).toHaveLength(2);
  expect(violations[0]).toMatch(/^received turn\/started does not match TurnStartedNotification .* params\.turn must have required property 'sessionId'/);
  expect(violations[1]).toMatch(/^received models\/list does not match ModelsListResponse .* result\.models must be array/);
});

it('refuses initialize with another protocol version, naming both versions', async () => {
  const environment: TestEnvironment = await createTestEnvironment('responses: []\n');
  cleanups.push(() => environment.dispose());
  const server: RunningServer = await startRuntimeServer({ paths: environment.paths, port: 0, logger: pino({ level: 'silent' }) });
  cleanups.push(() => server.stop());
  const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}${API_PATH}`, { headers: { authorization: `Bearer ${server.token}` } });
  cleanups.push(() => socket.close());
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const answers: string[] = [];
  socket.on('message', (data) => {
    answers.push(data.toString());
    checkReceivedMessage(socket, data.toString());
  });
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'old' }, protocolVersion: 1 } }));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { clientInfo: { name: 'current' }, protocolVersion: 2 } }));
  await expect.poll(() => answers.length).toBe(2);
  const [refused, accepted] = answers.map((text) => JSON.parse(text) as { error?: { code: number; message: string }; result?: { protocolVersion: number } });
  expect(refused?.error?.code).toBe(-32602);
  expect(refused?.error?.message).toBe('initialize: params.protocolVersion: this server speaks protocol version 2, the client asked for version 1; use a client for version 2');
  expect(accepted?.result?.protocolVersion).toBe(2);
});

/**
 * Authentication by a first `initialize` carrying the token (SPEC §5): an upgrade with no
 * token at all is accepted unauthenticated, and then nothing but `initialize` with the right
 * token gets through. Anything else is `-32001` naming the method followed by a close with
 * 1008; silence is closed after the authentication deadline; a wrong token in the upgrade is
 * still refused with HTTP 401 before any WebSocket exists.
 */
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AUTHENTICATION_TIMEOUT_CLOSE_REASON, ErrorCodes, UNAUTHORIZED_CLOSE_CODE, UNAUTHORIZED_CLOSE_REASON } from '../../src/protocol/index.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../src/server/rpc-connection.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { rawConnect, upgradeRequest } from '../helpers/raw-websocket.js';

const AUTHENTICATION_TIMEOUT_MS = 400;

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await server?.stop();
  await environment?.dispose();
  server = undefined;
  environment = undefined;
});

async function start(): Promise<RunningServer> {
  environment = await createTestEnvironment('responses: []\n');
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: pino({ level: 'silent' }), connectionLimits: { authenticationTimeoutMs: AUTHENTICATION_TIMEOUT_MS } });
  return server;
}

interface Peer {
  socket: WebSocket;
  /** Messages received, parsed, in order. */
  messages: { id?: unknown; method?: string; result?: unknown; error?: { code: number; message: string } }[];
  /** Resolves with the close code and reason, and how long after opening it came. */
  closed: Promise<{ code: number; reason: string; afterMs: number; messagesBefore: number }>;
  /** Resolves with the response to request `id`. */
  response(id: number): Promise<Peer['messages'][number]>;
}

/** Opens a WebSocket as a browser page of the server's own origin would, with no token unless given. */
async function open(running: RunningServer, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<Peer> {
  const socket = new WebSocket(`ws://127.0.0.1:${running.port}/api/v1/openvaala`, options.protocols ?? [], { headers: { origin: `http://127.0.0.1:${running.port}`, ...options.headers } });
  sockets.push(socket);
  const messages: Peer['messages'] = [];
  const openedAt = Date.now();
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as Peer['messages'][number]));
  const closed = new Promise<{ code: number; reason: string; afterMs: number; messagesBefore: number }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString(), afterMs: Date.now() - openedAt, messagesBefore: messages.length })),
  );
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const response = async (id: number) => {
    const deadline = Date.now() + 5000;
    for (;;) {
      const found = messages.find((message) => message.id === id);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no response to ${id}; received ${JSON.stringify(messages)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { socket, messages, closed, response };
}

const initialize = (id: number, token?: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { clientInfo: { name: 'page' }, ...(token !== undefined ? { token } : {}) } });

/** The status line of the server's answer to an upgrade request with these headers. */
async function upgradeStatus(port: number, token: string | undefined, headers: Record<string, string> = {}): Promise<string> {
  const connection = await rawConnect(port, upgradeRequest(port, token, headers));
  await connection.closed(1000);
  connection.socket.destroy();
  return connection.received().toString('latin1').split('\r\n')[0] ?? '';
}

it('accepts an upgrade without a token, and then a first initialize carrying the token (requests right after it included)', async () => {
  const running = await start();
  const page = await open(running);
  page.socket.send(initialize(1, running.token));
  page.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'conversation/list', params: {} }));
  expect((await page.response(1)).result).toMatchObject({ protocolVersion: 2 });
  expect((await page.response(2)).result).toMatchObject({ conversations: [] });
  // Authenticated: the deadline no longer applies.
  await new Promise((resolve) => setTimeout(resolve, AUTHENTICATION_TIMEOUT_MS + 200));
  expect(page.socket.readyState).toBe(WebSocket.OPEN);
  page.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'models/list' }));
  expect((await page.response(3)).error).toBeUndefined();
});

it('answers any other first method with -32001 naming it, then closes with 1008', async () => {
  const running = await start();
  for (const method of ['conversation/list', 'server/status', 'config/get', 'no/such/method']) {
    const page = await open(running);
    page.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} }));
    const close = await page.closed;
    expect(page.messages, method).toHaveLength(1);
    expect(page.messages[0]).toMatchObject({ id: 7, error: { code: ErrorCodes.unauthorized } });
    expect(page.messages[0]?.error?.message).toMatch(new RegExp(`^${method}: unauthorized: .*initialize`));
    // The error came before the close.
    expect(close.messagesBefore).toBe(1);
    expect(close).toMatchObject({ code: UNAUTHORIZED_CLOSE_CODE, reason: UNAUTHORIZED_CLOSE_REASON });
  }
  // Refused connections leave nothing behind in the server.
  const health = (await (await fetch(`http://127.0.0.1:${running.port}/healthz`, { headers: { authorization: `Bearer ${running.token}` } })).json()) as { connections: number };
  expect(health.connections).toBe(0);
});

it('refuses initialize without a token or with a wrong one (-32001, then 1008)', async () => {
  const running = await start();
  for (const token of [undefined, 'x'.repeat(43), running.token.slice(0, -1), '']) {
    const page = await open(running);
    page.socket.send(initialize(1, token));
    const close = await page.closed;
    expect(close).toMatchObject({ code: UNAUTHORIZED_CLOSE_CODE, messagesBefore: 1 });
    expect(page.messages[0]).toMatchObject({ id: 1, error: { code: ErrorCodes.unauthorized } });
    expect(page.messages[0]?.error?.message).toMatch(/^initialize: unauthorized: params\.token: /);
  }
  // A wrong token in initialize is refused even after the upgrade carried the right one.
  const client = await open(running, { headers: { authorization: `Bearer ${running.token}` } });
  client.socket.send(initialize(1, 'not-the-token'));
  expect(await client.closed).toMatchObject({ code: UNAUTHORIZED_CLOSE_CODE });
  expect(client.messages[0]).toMatchObject({ id: 1, error: { code: ErrorCodes.unauthorized } });
});

it('refuses non-JSON, binary, responses and notifications sent before authenticating', async () => {
  const running = await start();
  const cases: { name: string; data: string | Buffer; answered: boolean }[] = [
    { name: 'not JSON', data: 'not json', answered: true },
    { name: 'binary', data: Buffer.from([1, 2, 3]), answered: true },
    { name: 'a response', data: JSON.stringify({ jsonrpc: '2.0', id: 'server-1', result: {} }), answered: true },
    { name: 'a notification', data: JSON.stringify({ jsonrpc: '2.0', method: 'conversation/list' }), answered: false },
    { name: 'a batch', data: JSON.stringify([JSON.parse(initialize(1, running.token))]), answered: true },
  ];
  for (const { name, data, answered } of cases) {
    const page = await open(running);
    page.socket.send(data);
    const close = await page.closed;
    expect(close, name).toMatchObject({ code: UNAUTHORIZED_CLOSE_CODE, reason: UNAUTHORIZED_CLOSE_REASON });
    if (answered) expect(page.messages, name).toMatchObject([{ id: null, error: { code: ErrorCodes.unauthorized } }]);
    else expect(page.messages, name).toEqual([]);
  }
});

it('closes an unauthenticated connection that sends nothing after the deadline (default 10 s)', async () => {
  expect(DEFAULT_CONNECTION_LIMITS.authenticationTimeoutMs).toBe(10_000);
  const running = await start();
  const page = await open(running);
  const close = await page.closed;
  expect(close).toMatchObject({ code: UNAUTHORIZED_CLOSE_CODE, reason: AUTHENTICATION_TIMEOUT_CLOSE_REASON, messagesBefore: 0 });
  expect(close.afterMs).toBeGreaterThanOrEqual(AUTHENTICATION_TIMEOUT_MS - 50);
  expect(close.afterMs).toBeLessThan(AUTHENTICATION_TIMEOUT_MS + 2000);
  // A connection authenticated by its upgrade has no such deadline.
  const client = await open(running, { headers: { authorization: `Bearer ${running.token}` } });
  await new Promise((resolve) => setTimeout(resolve, AUTHENTICATION_TIMEOUT_MS + 200));
  expect(client.socket.readyState).toBe(WebSocket.OPEN);
});

it('sends nothing to an unauthenticated connection (config/updated goes to authenticated ones only)', async () => {
  const running = await start();
  const page = await open(running);
  const client = await open(running, { headers: { authorization: `Bearer ${running.token}` } });
  client.socket.send(initialize(1));
  await client.response(1);
  client.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'config/reload' }));
  await client.response(2);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(client.messages.some((message) => message.method === 'config/updated')).toBe(true);
  expect(page.messages).toEqual([]);
});

it('keeps a connection authenticated by initialize open when its other params are refused', async () => {
  const running = await start();
  const page = await open(running);
  page.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'page' }, protocolVersion: 1, token: running.token } }));
  expect((await page.response(1)).error).toMatchObject({ code: ErrorCodes.invalidParams });
  // Authenticated but not initialized.
  page.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'conversation/list', params: {} }));
  expect((await page.response(2)).error).toMatchObject({ code: ErrorCodes.notInitialized });
  page.socket.send(initialize(3));
  expect((await page.response(3)).result).toMatchObject({ protocolVersion: 2 });
});

it('still refuses an upgrade carrying a wrong token with 401, and a foreign origin with 403', async () => {
  const running = await start();
  const { port, token } = running;
  expect(await upgradeStatus(port, 'x'.repeat(43))).toMatch(/^HTTP\/1\.1 401/);
  expect(await upgradeStatus(port, '')).toMatch(/^HTTP\/1\.1 401/);
  expect(await upgradeStatus(port, undefined, { 'Sec-WebSocket-Protocol': 'openvaala.token.wrong' })).toMatch(/^HTTP\/1\.1 401/);
  expect(await upgradeStatus(port, undefined, { 'Sec-WebSocket-Protocol': 'openvaala.token.' })).toMatch(/^HTTP\/1\.1 401/);
  // Every token given must be right.
  expect(await upgradeStatus(port, token, { 'Sec-WebSocket-Protocol': 'openvaala.token.wrong' })).toMatch(/^HTTP\/1\.1 401/);
  // An Authorization header that is not `Bearer <token>` is not taken for "no token".
  expect(await upgradeStatus(port, undefined, { Authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` })).toMatch(/^HTTP\/1\.1 401/);
  expect(await upgradeStatus(port, undefined, { Authorization: 'Bearer' })).toMatch(/^HTTP\/1\.1 401/);
  // Without a token, Host and Origin are checked as before.
  expect(await upgradeStatus(port, undefined, { Origin: 'http://evil.example' })).toMatch(/^HTTP\/1\.1 403/);
  expect(await upgradeStatus(port, undefined, { Host: 'evil.example' })).toMatch(/^HTTP\/1\.1 421/);
  // No token at all, acceptable Host and Origin: accepted.
  expect(await upgradeStatus(port, undefined, { Origin: `http://127.0.0.1:${port}` })).toMatch(/^HTTP\/1\.1 101/);
  expect(await upgradeStatus(port, token, { 'Sec-WebSocket-Protocol': `openvaala.token.${token}` })).toMatch(/^HTTP\/1\.1 101/);
});

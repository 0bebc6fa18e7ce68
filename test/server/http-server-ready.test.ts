import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { API_PATH, createHttpServer } from '../../src/server/http-server.js';

const TOKEN = 'test-token';

/** One GET; its status and body. */
function get(port: number, pathname: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: pathname, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    outgoing.once('error', reject);
    outgoing.end();
  });
}

/** An HTTP server whose readiness the test settles; counts what reached its handlers. */
async function gatedServer(extra: Partial<Parameters<typeof createHttpServer>[0]> = {}) {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  const reached: string[] = [];
  const warnings: string[] = [];
  // Every token the server asked about (the real server makes its token only once listening).
  const tokensChecked: string[] = [];
  const { server, webSockets } = createHttpServer({
    isServerToken: (given) => {
      tokensChecked.push(given);
      return given === TOKEN;
    },
    allowedOrigins: [],
    allowedHosts: [],
    ready,
    health: () => ({ pid: process.pid }),
    logger: { warn: (_details, message) => void warnings.push(message) },
    routes: {
      '/api/v1/uploads': {
        methods: ['POST'],
        handle: (_request, response) => {
          reached.push('upload');
          response.end('uploaded');
        },
      },
    },
    onConnection: (socket) => {
      reached.push('websocket');
      socket.send('hello');
    },
    ...extra,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    for (const client of webSockets.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  };
  return { port, open, fail, reached, warnings, tokensChecked, close };
}

describe('an HTTP server that listens before its services are open', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('answers /healthz "starting" at once, holds other requests and upgrades, and serves them once ready', async () => {
    const server = await gatedServer();
    close = server.close;
    expect(await get(server.port, '/healthz')).toEqual({ status: 200, body: '{"status":"starting"}' });
    // With the token it says no more than that: the pid comes once ready.
    expect(await get(server.port, '/healthz', { authorization: `Bearer ${TOKEN}` })).toEqual({ status: 200, body: '{"status":"starting"}' });
    const upload = get(server.port, '/api/v1/uploads');
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}${API_PATH}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const greeting = new Promise<string>((resolve, reject) => {
      socket.once('message', (data: Buffer) => resolve(data.toString()));
      socket.once('error', reject);
    });
    // Both have reached the server (its /healthz still answers), and neither was handled yet.
    expect(await get(server.port, '/healthz')).toEqual({ status: 200, body: '{"status":"starting"}' });
    expect(server.reached).toEqual([]);
    // No token was checked before ready: the server may make it after listening.
    expect(server.tokensChecked).toEqual([]);
    server.open();
    expect(await upload).toEqual({ status: 200, body: 'uploaded' });
    expect(await greeting).toBe('hello');
    expect(server.reached.sort()).toEqual(['upload', 'websocket']);
    expect(JSON.parse((await get(server.port, '/healthz', { authorization: `Bearer ${TOKEN}` })).body)).toEqual({ status: 'ok', pid: process.pid });
    socket.close();
  });

  it('refuses held and later requests with 503 when the services fail to open', async () => {
    const server = await gatedServer();
    close = server.close;
    const held = get(server.port, '/api/v1/uploads');
    // The held request has reached the server before the failure.
    expect((await get(server.port, '/healthz')).status).toBe(200);
    server.fail(new Error('the configuration is invalid'));
    expect(await held).toEqual({ status: 503, body: '{"error":"the server failed to start"}' });
    expect(await get(server.port, '/web/v1/')).toEqual({ status: 503, body: '{"error":"the server failed to start"}' });
    expect(await get(server.port, '/healthz')).toEqual({ status: 503, body: '{"status":"failed"}' });
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${server.port}${API_PATH}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('error', () => undefined);
    });
    expect(refused).toBe(503);
    expect(server.reached).toEqual([]);
  });

  it('holds an upgrade that arrives once ready but before the WebSocket endpoint is loaded, and serves it when it is', async () => {
    let endpointLoaded!: () => void;
    const loading = new Promise<void>((resolve) => (endpointLoaded = resolve));
    const server = await gatedServer({
      loadWebSocketEndpoint: async () => {
        await loading;
        return new WebSocketServer({ noServer: true });
      },
    });
    close = server.close;
    server.open();
    expect(await get(server.port, '/healthz')).toMatchObject({ status: 200 });
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}${API_PATH}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const greeting = new Promise<string>((resolve, reject) => {
      socket.once('message', (data: Buffer) => resolve(data.toString()));
      socket.once('error', reject);
    });
    // The upgrade has reached the server (a later request was answered) and waits for the endpoint.
    expect(JSON.parse((await get(server.port, '/healthz')).body)).toEqual({ status: 'ok' });
    expect(server.reached).toEqual([]);
    endpointLoaded();
    expect(await greeting).toBe('hello');
    expect(server.reached).toEqual(['websocket']);
    socket.close();
  });

  it('refuses upgrades with 503 and logs why when the WebSocket endpoint cannot be loaded', async () => {
    const server = await gatedServer({ loadWebSocketEndpoint: () => Promise.reject(new Error('Cannot find package ws')) });
    close = server.close;
    server.open();
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${server.port}${API_PATH}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('error', () => undefined);
    });
    expect(refused).toBe(503);
    expect(server.warnings).toContain('loading the WebSocket endpoint failed');
    expect(server.reached).toEqual([]);
  });
});

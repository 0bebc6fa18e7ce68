/**
 * Browser pages and network attackers without the token cannot reach the API: requests must
 * name this server in `Host` (a DNS-rebinding page names its own host), pages of other origins
 * are refused, and `/healthz` tells an anonymous caller only that the server is up.
 */
import { createServer } from 'node:net';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { rawConnect, upgradeRequest } from '../helpers/raw-websocket.js';

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  await environment?.dispose();
  server = undefined;
  environment = undefined;
});

async function start(options: { allowedHosts?: string[]; allowedOrigins?: string[] } = {}): Promise<{ port: number; token: string }> {
  environment = await createTestEnvironment('responses: []\n');
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: pino({ level: 'silent' }), ...options });
  return { port: server.port, token: server.token };
}

/** The status line of the server's answer to raw request bytes. */
async function statusOf(port: number, request: string): Promise<string> {
  const connection = await rawConnect(port, request);
  await connection.closed(1000);
  connection.socket.destroy();
  return connection.received().toString('latin1').split('\r\n')[0] ?? '';
}

it('refuses a WebSocket whose Host is not this server, even with a matching Origin and the token (DNS rebinding)', async () => {
  const { port, token } = await start();
  expect(await statusOf(port, upgradeRequest(port, token, { Host: 'evil.example', Origin: 'http://evil.example' }))).toMatch(/^HTTP\/1\.1 421/);
  expect(await statusOf(port, upgradeRequest(port, token, { Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` }))).toMatch(/^HTTP\/1\.1 421/);
  expect(await statusOf(port, upgradeRequest(port, token, { Host: 'localhost.evil.example' }))).toMatch(/^HTTP\/1\.1 421/);
  // Loopback names and their own origins pass.
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
    expect(await statusOf(port, upgradeRequest(port, token, { Host: host, Origin: `http://${host}` }))).toMatch(/^HTTP\/1\.1 101/);
  }
});

it('refuses plain HTTP requests naming another host, so a rebinding page cannot read /healthz', async () => {
  const { port } = await start();
  expect(await statusOf(port, `GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 421/);
});

it('accepts hosts and origins it was configured with', async () => {
  const { port, token } = await start({ allowedHosts: ['vaala.internal'], allowedOrigins: ['http://localhost:5173'] });
  expect(await statusOf(port, upgradeRequest(port, token, { Host: `vaala.internal:${port}`, Origin: `https://vaala.internal:${port}` }))).toMatch(/^HTTP\/1\.1 101/);
  expect(await statusOf(port, upgradeRequest(port, token, { Origin: 'http://localhost:5173' }))).toMatch(/^HTTP\/1\.1 101/);
  expect(await statusOf(port, upgradeRequest(port, token, { Origin: 'http://localhost:5174' }))).toMatch(/^HTTP\/1\.1 403/);
  expect(await statusOf(port, upgradeRequest(port, token, { Origin: 'null' }))).toMatch(/^HTTP\/1\.1 403/);
});

it('tells an anonymous /healthz only that the server is up', async () => {
  const { port, token } = await start();
  const anonymous = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
  expect(anonymous).toEqual({ status: 'ok' });
  const wrong = await (await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { authorization: 'Bearer nope' } })).json();
  expect(wrong).toEqual({ status: 'ok' });
  const known = await (await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { authorization: `Bearer ${token}` } })).json();
  expect(known).toMatchObject({ status: 'ok', pid: process.pid });
});

it('warns when asked to listen on every interface', async () => {
  environment = await createTestEnvironment('responses: []\n');
  // The port is taken on loopback, so the server fails to listen right after its warning and
  // never listens beyond loopback.
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  await expect(startRuntimeServer({ paths: environment.paths, host: '0.0.0.0', port, logger })).rejects.toThrow();
  await new Promise<void>((resolve) => blocker.close(() => resolve()));
  expect(lines.join('')).toContain('listening on every network interface');
});

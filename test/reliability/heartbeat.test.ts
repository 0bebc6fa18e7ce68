/**
 * The server pings every connection; a peer that stops answering is dropped, one that answers
 * stays.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { afterEach, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { rawWebSocket } from '../helpers/raw-websocket.js';

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  await environment?.dispose();
  server = undefined;
  environment = undefined;
});

it('drops a peer that does not answer pings and keeps one that does', async () => {
  environment = await createTestEnvironment('responses: []\n');
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: pino({ level: 'silent' }), connectionLimits: { heartbeatIntervalMs: 200 } });
  const alive = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'alive' });
  // A raw connection never answers the pings it is sent.
  const dead = await rawWebSocket(server.port, server.token);
  expect(await dead.closed(3000)).toBe(true);
  // Pings arrived before the drop.
  expect(dead.afterHandshake()[0]).toBe(0x89);
  // Several intervals later the client that answers is still served.
  await new Promise((resolve) => setTimeout(resolve, 800));
  expect((await alive.request('models/list', {})).models).toBeDefined();
  await alive.close();
});

it('keeps a client that answered while the server was held up past an interval', async () => {
  environment = await createTestEnvironment('responses: []\n');
  const intervalMs = 200;
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: pino({ level: 'silent' }), connectionLimits: { heartbeatIntervalMs: intervalMs } });
  // The client runs in its own process (the built client: `npm run build` first), so it answers
  // while this one is held up.
  const clientModule = pathToFileURL(path.resolve('dist/src/client/runtime-client.js')).href;
  const script = `
    const { RuntimeClient } = await import(${JSON.stringify(clientModule)});
    const client = await RuntimeClient.connect({ url: process.argv[1], token: process.argv[2], clientName: 'elsewhere' });
    console.log('ready');
    process.stdin.once('data', async () => {
      try {
        const { models } = await client.request('models/list', {});
        console.log(Array.isArray(models) ? 'served' : 'no models');
      } catch (error) {
        console.log('failed: ' + error.message);
      }
      process.exit(0);
    });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, server.url, server.token], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  try {
    expect((await lines.next()).value).toBe('ready');
    // Hold the server up for several intervals right after it sends a ping, in the loop's check
    // phase, as a long callback or collection would: the next turn of the loop starts with its
    // timers, before it reads the pong that arrived meanwhile.
    const ping = WebSocket.prototype.ping;
    let held = 0;
    WebSocket.prototype.ping = function (this: WebSocket, ...args: Parameters<WebSocket['ping']>) {
      ping.apply(this, args);
      if (held++ > 0) return;
      setImmediate(() => {
        const until = Date.now() + 3 * intervalMs;
        while (Date.now() < until);
      });
    };
    try {
      // A second ping goes only to a client still connected.
      await expect.poll(() => held, { timeout: 5_000 }).toBeGreaterThan(1);
    } finally {
      WebSocket.prototype.ping = ping;
    }
    child.stdin.write('go\n');
    expect((await lines.next()).value).toBe('served');
  } finally {
    child.kill();
  }
});

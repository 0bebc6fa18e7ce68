/**
 * The server pings every connection; a peer that stops answering is dropped, one that answers
 * stays.
 */
import { pino } from 'pino';
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

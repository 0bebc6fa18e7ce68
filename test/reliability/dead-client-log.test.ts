/**
 * A client that dies with messages still queued for it costs one log line, not one per
 * unsent message.
 */
import { afterEach, expect, it } from 'vitest';
import { pino } from 'pino';
import WebSocket from 'ws';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';
import { checkReceivedMessage } from '../setup/protocol-validation.js';

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  await environment?.dispose();
  server = undefined;
  environment = undefined;
});

it('logs one line for a client that dies with thousands of messages queued', async () => {
  const words = Array.from({ length: 30_000 }, (_, index) => `word${index}`).join(' ');
  // The answer holds after two thirds of its words until the client that stopped reading is
  // reset: thousands of deltas are sent to it before, thousands more after.
  environment = await createTestEnvironment(`delayMs: 0\nresponses:\n  - text: "${words}"\n    holds: [{ afterDeltas: 20000, gate: reset }]\n`);
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger });
  const driver = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'driver' });
  const { conversation } = await driver.request('conversation/create', { cwd: environment.workDir });

  const dying = new WebSocket(`${server.url.replace('http', 'ws')}/api/v1/openvaala`, { headers: { authorization: `Bearer ${server.token}` } });
  await new Promise((resolve) => dying.once('open', resolve));
  dying.on('error', () => undefined);
  let answered = 0;
  dying.on('message', (data) => {
    checkReceivedMessage(dying, data.toString());
    answered++;
  });
  dying.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'dying' } } }));
  dying.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'conversation/subscribe', params: { conversationId: conversation.id } }));
  await until(() => answered >= 2, 5000, 'the subscription');
  const transport = (dying as unknown as { _socket: import('node:net').Socket })._socket;
  transport.pause();

  let streamed = '';
  driver.onNotification((event) => {
    if (event.method === 'item/delta') streamed += event.params.delta.text ?? '';
  });
  await driver.request('conversation/subscribe', { conversationId: conversation.id });
  await driver.request('session/input', { conversationId: conversation.id, input: 'talk a lot' });
  // Once the driver has the last delta before the hold, the server has queued every one of them
  // for the client that no longer reads too; then that client is reset.
  const live = await server.runtime.getConversation(conversation.id);
  await environment.mock.waitForHold('reset', 30_000);
  await until(() => streamed.includes('word19999 '), 30_000, 'the deltas before the hold');
  expect(live.isBusy).toBe(true);
  transport.resetAndDestroy();
  environment.mock.release('reset');

  await until(() => !live.isBusy, 60_000, 'the turn to end');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const sendFailures = lines.filter((line) => line.includes('could not send'));
  expect(sendFailures.length).toBeLessThanOrEqual(1);
  await driver.close();
});

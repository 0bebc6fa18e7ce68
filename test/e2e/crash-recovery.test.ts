/**
 * A server killed in the middle of a turn: after a restart the turn is recorded as
 * interrupted (crash_recovery), the transcript stays valid and the conversation goes on.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
let leftoverPid: number | undefined;
afterEach(async () => {
  await serve?.stop();
  if (leftoverPid) {
    try {
      process.kill(leftoverPid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await environment?.dispose();
  serve = undefined;
  environment = undefined;
  leftoverPid = undefined;
});

describe('crash recovery', () => {
  it('records a turn cut by a killed server as interrupted and continues', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "Starting the long command."
    toolCalls: [{ name: exec_command, arguments: { command: "echo $$ > long.pid; exec sleep 30" }, id: call_cut }]
  - text: "continuing after the restart"
`);
    serve = await startServe(environment);
    let client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'before' });
    const { conversation, session } = await client.request('conversation/create', { cwd: environment.workDir });
    await client.request('session/input', { conversationId: conversation.id, input: 'run it' });
    const pidFile = path.join(environment.workDir, 'long.pid');
    const deadline = Date.now() + 10_000;
    while (!(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim())) {
      if (Date.now() > deadline) throw new Error('the command did not start');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    leftoverPid = Number(readFileSync(pidFile, 'utf8').trim());
    serve.child.kill('SIGKILL');
    await serve.stop();
    await client.close();

    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'after' });
    const state = await client.request('conversation/get', { conversationId: conversation.id });
    expect(state.turns).toHaveLength(1);
    expect(state.turns[0]).toMatchObject({ status: 'interrupted' });
    expect(state.sessions[0]).toMatchObject({ status: 'idle', activeTurnId: null });
    const items = (await client.request('items/list', { conversationId: conversation.id })).items.map((entry) => entry.item);
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'assistant_message', 'interruption']);
    expect(items.at(-1)).toMatchObject({ reason: 'crash_recovery' });

    // Opening it again does not add a second marker.
    await serve.stop();
    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'again' });
    const events: string[] = [];
    client.onNotification((event) => {
      if (event.method === 'turn/completed') events.push(event.params.turn.status);
    });
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'go on' });
    while (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toEqual(['completed']);
    const after = (await client.request('items/list', { conversationId: conversation.id, sessionId: session.id })).items.map((entry) => entry.item.kind);
    expect(after.filter((kind) => kind === 'interruption')).toHaveLength(1);
    // The request after the crash holds no tool call without its result.
    const body = JSON.stringify(environment.mock.requests[1]?.body);
    expect(body).not.toContain('call_cut');
    expect(body).toContain('go on');
    await client.close();
  });
});

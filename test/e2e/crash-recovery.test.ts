/**
 * A server killed in the middle of a turn: after a restart the turn is recorded as
 * interrupted (crash_recovery), the transcript stays valid and the conversation goes on;
 * approvals and questions that were waiting are dropped, not shown to anyone again.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createTestEnvironment, spawnCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';

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

  it('exec whose server dies mid-turn says so and how to continue the conversation', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "Starting the long command."
    toolCalls: [{ name: exec_command, arguments: { command: "echo $$ > long.pid; exec sleep 30" } }]
`);
    serve = await startServe(environment);
    const exec = spawnCli(['exec', 'run it'], { env: environment.env, cwd: environment.workDir });
    const pidFile = path.join(environment.workDir, 'long.pid');
    const deadline = Date.now() + 15_000;
    while (!(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim())) {
      if (Date.now() > deadline) throw new Error(`the command did not start: ${exec.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    leftoverPid = Number(readFileSync(pidFile, 'utf8').trim());
    serve.child.kill('SIGKILL');
    const result = await exec.done;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the server closed the connection before the turn ended');
    expect(result.stderr).toMatch(/continue it with: openvaala exec --resume conv_\S+ "…"/);
  });

  it('drops the approvals and questions that were waiting when the server was killed', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch approved.txt" }, id: call_wait_approval }]
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which database?", choices: ["sqlite", "postgres"] }, id: call_wait_question }]
`);
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  default:\n    default: true\n    approvals:\n      default: allow\n      rules:\n        - { tool: exec_command, decision: ask }\n');
    serve = await startServe(environment);
    let client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'before' });
    const pendingOf = async (conversationId: string) => (await client.request('conversation/get', { conversationId })).sessions[0];
    const waitFor = async (condition: () => Promise<boolean>, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const approving = (await client.request('conversation/create', { cwd: environment.workDir })).conversation.id;
    await client.request('session/input', { conversationId: approving, input: 'touch it' });
    await waitFor(async () => ((await pendingOf(approving))?.pendingApprovals.length ?? 0) > 0, 'the approval request');
    const asking = (await client.request('conversation/create', { cwd: environment.workDir })).conversation.id;
    await client.request('session/input', { conversationId: asking, input: 'ask me' });
    await waitFor(async () => ((await pendingOf(asking))?.pendingUserInputs.length ?? 0) > 0, 'the question');
    const approvalId = (await pendingOf(approving))?.pendingApprovals[0]?.approvalId as string;
    const requestId = (await pendingOf(asking))?.pendingUserInputs[0]?.requestId as string;
    serve.child.kill('SIGKILL');
    await serve.stop();
    await client.close();

    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'after', capabilities: { approvals: true, userInput: true } });
    const asked: string[] = [];
    client.handleServerRequest('approval/request', async (request) => {
      asked.push(request.approvalId);
      return { decision: 'allow_once' };
    });
    client.handleServerRequest('input/request', async (request) => {
      asked.push(request.requestId);
      return { answer: 'sqlite' };
    });
    const announced: string[] = [];
    client.onNotification((event) => {
      if (event.method === 'approval/requested' || event.method === 'input/requested') announced.push(event.method);
    });
    for (const conversationId of [approving, asking]) {
      const state = await client.request('conversation/get', { conversationId });
      expect(state.turns[0]).toMatchObject({ status: 'interrupted' });
      expect(state.sessions[0]).toMatchObject({ status: 'idle', activeTurnId: null, pendingApprovals: [], pendingUserInputs: [] });
      await client.request('conversation/subscribe', { conversationId });
    }
    // The session entries written by the recovery hold no waiting request either.
    for (const conversationId of [approving, asking]) {
      const metadata = readFileSync(path.join(environment.paths.dataDir, 'conversations', conversationId, 'metadata.jsonl'), 'utf8');
      const lastSession = metadata.split('\n').filter((line) => line.includes('"type":"session"')).at(-1);
      expect(lastSession).toContain('"pendingApprovals":[]');
      expect(lastSession).toContain('"pendingUserInputs":[]');
    }
    const markers = await Promise.all([approving, asking].map(async (conversationId) => (await client.request('items/list', { conversationId })).items.map((entry) => entry.item).find((item) => item.kind === 'interruption')));
    expect(markers[0]).toMatchObject({ reason: 'crash_recovery', message: expect.stringContaining('1 approval request') });
    expect(markers[1]).toMatchObject({ reason: 'crash_recovery', message: expect.stringContaining('1 question for the user') });
    // Answering what was waiting before the crash is refused: nobody waits for it.
    expect(await client.request('approval/respond', { conversationId: approving, approvalId, decision: 'allow_once' })).toEqual({ accepted: false });
    expect(await client.request('input/respond', { conversationId: asking, requestId, answer: 'sqlite' })).toEqual({ accepted: false });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(asked).toEqual([]);
    expect(announced).toEqual([]);
    expect(existsSync(path.join(environment.workDir, 'approved.txt'))).toBe(false);
    await client.close();
  });
});

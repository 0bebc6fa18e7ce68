/**
 * `request_user_input` over a real WebSocket against a real server: the question reaches
 * clients like an approval (`input/requested`, `input/request` to those that declared
 * `userInput`), the first answer wins and becomes the tool result, late subscribers see it
 * pending and are asked, a wrong answer is refused, and interrupting the turn cancels it.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import type { AnyNotification, ClientCapabilities, UserInputRequest } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await harness?.stop();
  harness = undefined;
});

async function connect(name: string, capabilities: ClientCapabilities): Promise<{ client: RuntimeClient; events: AnyNotification[] }> {
  const client = await RuntimeClient.connect({ url: harness!.server.url, token: harness!.server.token, clientName: name, capabilities });
  clients.push(client);
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  return { client, events };
}

const QUESTION = `
responses:
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which database?", choices: ["sqlite", "postgres"], allow_free_text: false } }]
  - text: "going with it"
`;

function toolResultSentBack(): string {
  return JSON.stringify(harness!.environment.mock.requests[1]?.body);
}

async function requested(): Promise<UserInputRequest> {
  const event = (await harness!.waitFor((candidate) => candidate.method === 'input/requested')) as Extract<AnyNotification, { method: 'input/requested' }>;
  return event.params.request;
}

describe('request_user_input', () => {
  it('asks the clients that declared userInput; the first answer becomes the tool result and everyone is told', async () => {
    harness = await startInProcessServer(QUESTION);
    const conversationId = await harness.conversation();
    const fast = await connect('fast', { userInput: true });
    const slow = await connect('slow', { userInput: true });
    const watcher = await connect('watcher', {});
    const asked: string[] = [];
    fast.client.handleServerRequest('input/request', async (request) => {
      asked.push(`fast:${request.question}`);
      return { answer: 'postgres' };
    });
    slow.client.handleServerRequest('input/request', async () => {
      asked.push('slow');
      // Answers only once the server has taken the fast client's answer, however loaded the machine.
      await until(() => slow.events.some((event) => event.method === 'input/resolved'), 10_000, 'the question to be resolved');
      return { answer: 'sqlite' };
    });
    watcher.client.handleServerRequest('input/request', async () => {
      asked.push('watcher');
      return { answer: 'sqlite' };
    });
    for (const { client } of [fast, slow, watcher]) await client.request('conversation/subscribe', { conversationId });
    await harness.client.request('session/input', { conversationId, input: 'set it up' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(asked.sort()).toEqual(['fast:Which database?', 'slow']);
    const call = harness.completedItems().find((item) => item.kind === 'tool_call');
    expect(call).toMatchObject({ toolName: 'request_user_input', output: 'postgres', isError: false, status: 'completed' });
    expect(toolResultSentBack()).toContain('postgres');
    const resolved = watcher.events.find((event) => event.method === 'input/resolved');
    expect(resolved?.params).toMatchObject({ conversationId, outcome: 'answered', answer: 'postgres', decidedBy: 'client:fast', itemId: call?.id });
    const request = watcher.events.find((event) => event.method === 'input/requested') as Extract<AnyNotification, { method: 'input/requested' }>;
    expect(request.params.request).toMatchObject({ question: 'Which database?', choices: ['sqlite', 'postgres'], allowFreeText: false, itemId: call?.id });
  });

  it('is listed as pending in the session, and a connection that subscribes later is asked', async () => {
    harness = await startInProcessServer(QUESTION);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'set it up' });
    const pending = await requested();
    const snapshot = await harness.client.request('conversation/get', { conversationId });
    expect(snapshot.sessions[0]?.pendingUserInputs.map((request) => request.requestId)).toEqual([pending.requestId]);

    const late = await connect('late', { userInput: true });
    late.client.handleServerRequest('input/request', async (request) => {
      expect(request.requestId).toBe(pending.requestId);
      return { answer: 'sqlite' };
    });
    await late.client.request('conversation/subscribe', { conversationId });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(harness.completedItems().find((item) => item.kind === 'tool_call')).toMatchObject({ output: 'sqlite' });
    const after = await harness.client.request('conversation/get', { conversationId });
    expect(after.sessions[0]?.pendingUserInputs).toEqual([]);
    // A second answer is too late.
    expect((await harness.client.request('input/respond', { conversationId, requestId: pending.requestId, answer: 'postgres' })).accepted).toBe(false);
  });

  it('refuses an answer outside the choices when free text is not allowed, and a malformed request id', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer(QUESTION);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'set it up' });
    const pending = await requested();
    const refused = await harness.client.request('input/respond', { conversationId, requestId: pending.requestId, answer: 'mysql' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RuntimeClientError);
    expect((refused as RuntimeClientError).code).toBe(-32602);
    expect((refused as RuntimeClientError).message).toMatch(/^input\/respond: params\.answer: the answer must be one of the choices/);
    const malformed = await harness.client.request('input/respond', { conversationId, requestId: '../etc', answer: 'sqlite' }).catch((error: unknown) => error);
    expect((malformed as RuntimeClientError).code).toBe(-32602);
    expect((malformed as RuntimeClientError).message).toContain('params.requestId');
    expect((await harness.client.request('input/respond', { conversationId, requestId: pending.requestId, answer: 'sqlite' })).accepted).toBe(true);
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
  });

  it('accepts free text when allowed, and tells the model when a client says no user can answer', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: request_user_input, arguments: { question: "Any name?" } }]
  - toolCalls: [{ name: request_user_input, arguments: { question: "And a colour?", choices: ["red"], allow_free_text: true } }]
  - text: "ok"
`);
    const conversationId = await harness.conversation();
    const headless = await connect('headless', { userInput: true });
    let count = 0;
    headless.client.handleServerRequest('input/request', async () => (++count === 1 ? { declined: 'no terminal here' } : { answer: 'teal' }));
    await headless.client.request('conversation/subscribe', { conversationId });
    await harness.client.request('session/input', { conversationId, input: 'name it' });
    await harness.turnsCompleted(1);
    const calls = harness.completedItems().filter((item) => item.kind === 'tool_call');
    expect(calls.map((call) => (call.kind === 'tool_call' ? call.output : ''))).toEqual(['no user can answer (no terminal here): decide yourself and say what you assumed', 'teal']);
    expect(harness.events.find((event) => event.method === 'input/resolved')?.params).toMatchObject({ outcome: 'cancelled', decidedBy: 'client:headless' });
  });

  it('is cancelled when the turn is interrupted', async () => {
    harness = await startInProcessServer(QUESTION);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'set it up' });
    const pending = await requested();
    await harness.client.request('session/interrupt', { conversationId });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('interrupted');
    expect(harness.completedItems().find((item) => item.kind === 'tool_call')).toMatchObject({ status: 'interrupted', isError: true });
    const resolved = harness.events.find((event) => event.method === 'input/resolved');
    expect(resolved?.params).toMatchObject({ requestId: pending.requestId, outcome: 'cancelled', decidedBy: 'interruption' });
    expect((await harness.client.request('input/respond', { conversationId, requestId: pending.requestId, answer: 'sqlite' })).accepted).toBe(false);
  });

  it('refuses a question with neither choices nor free text, and input/respond for an unknown conversation', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: request_user_input, arguments: { question: "Yes?", allow_free_text: false } }]
  - text: "ok"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'ask' });
    await harness.turnsCompleted(1);
    expect(harness.completedItems().find((item) => item.kind === 'tool_call')).toMatchObject({ isError: true, output: expect.stringContaining('request_user_input: argument "allow_free_text": without choices') });
    expect(harness.events.some((event) => event.method === 'input/requested')).toBe(false);
    const unknown = await harness.client.request('input/respond', { conversationId: 'conv_0000000000', requestId: 'input_0000000000', answer: 'x' }).catch((error: unknown) => error);
    expect((unknown as RuntimeClientError).code).toBe(-32004);
  });

  it('is asked without approval under `default: ask` and wildcard rules; a rule naming it exactly still applies', async () => {
    const withAgents = (rules: string) => ({
      beforeStart: (environment: { paths: { configDir: string } }) =>
        writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), `agents:\n  default:\n    default: true\n    approvals:\n      default: ask\n      rules:\n${rules}`),
    });
    // `default: ask` and a `*` rule: the question goes straight to the user.
    harness = await startInProcessServer(QUESTION, withAgents('        - { tool: "*", decision: deny }\n'));
    let conversationId = await harness.conversation();
    let user = await connect('user', { userInput: true, approvals: true });
    const approvalsAsked: string[] = [];
    user.client.handleServerRequest('approval/request', async (request) => {
      approvalsAsked.push(request.toolName);
      return { decision: 'allow_once' };
    });
    user.client.handleServerRequest('input/request', async () => ({ answer: 'sqlite' }));
    await user.client.request('conversation/subscribe', { conversationId });
    await harness.client.request('session/input', { conversationId, input: 'set it up' });
    let [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(approvalsAsked).toEqual([]);
    expect(harness.completedItems().find((item) => item.kind === 'tool_call')).toMatchObject({ toolName: 'request_user_input', output: 'sqlite', isError: false });
    expect(harness.completedItems().some((item) => item.kind === 'approval')).toBe(false);
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await harness.stop();

    // A rule whose tool is exactly `request_user_input` decides as written.
    harness = await startInProcessServer(QUESTION, withAgents('        - { tool: request_user_input, decision: ask }\n'));
    conversationId = await harness.conversation();
    user = await connect('user', { userInput: true, approvals: true });
    user.client.handleServerRequest('approval/request', async (request) => {
      approvalsAsked.push(request.toolName);
      return { decision: 'allow_once' };
    });
    user.client.handleServerRequest('input/request', async () => ({ answer: 'postgres' }));
    await user.client.request('conversation/subscribe', { conversationId });
    await harness.client.request('session/input', { conversationId, input: 'set it up' });
    [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(approvalsAsked).toEqual(['request_user_input']);
    expect(harness.completedItems().find((item) => item.kind === 'tool_call')).toMatchObject({ output: 'postgres' });
  });
});

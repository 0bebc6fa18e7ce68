/**
 * Responsiveness of the loop while it works: steering, interruption of a streaming answer
 * and of a running command, retries that honour Retry-After, model changes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { processGone, until } from '../helpers/processes.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('steering', () => {
  it('reads steering input before the next model call and records it there', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "while [ ! -e go ]; do sleep 0.05; done; echo first-step" } }]
  - text: "adjusted"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'start the work' });
    await harness.waitFor((event) => event.method === 'item/started' && event.params.kind === 'tool_call');
    // The command waits for the file written below, so the steering arrives while it runs.
    const steer = await harness.client.request('session/input', { conversationId, input: 'also mention the colour blue', mode: 'steer' });
    expect(steer.queued).toBe(true);
    writeFileSync(path.join(harness.environment.workDir, 'go'), '');
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(harness.environment.mock.requests).toHaveLength(2);
    expect(JSON.stringify(harness.environment.mock.requests[0]?.body)).not.toContain('colour blue');
    expect(JSON.stringify(harness.environment.mock.requests[1]?.body)).toContain('also mention the colour blue');
    const kinds = harness.completedItems().map((item) => (item.kind === 'user_message' ? `user:${item.mode}` : item.kind));
    expect(kinds).toEqual(['user:input', 'tool_call', 'user:steer', 'assistant_message']);
  });
});

describe('interruption', () => {
  it('stops a streaming answer, keeps the text received so far, and the next turn works', async () => {
    harness = await startInProcessServer(`
responses:
  - deltas: ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight "]
    holds: [{ afterDeltas: 1, gate: never-opened }]
  - text: "recovered"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'count slowly' });
    // The answer stops after its first delta (the gate is never opened), so it is interrupted mid-stream.
    await harness.waitFor((event) => event.method === 'item/delta');
    const interrupted = await harness.client.request('session/interrupt', { conversationId });
    expect(interrupted.interrupted).toBe(true);
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('interrupted');
    const partial = harness.completedItems().find((item): item is Extract<Item, { kind: 'assistant_message' }> => item.kind === 'assistant_message');
    expect(partial?.status).toBe('interrupted');
    expect(partial?.text).toBe('one ');
    expect(harness.completedItems().at(-1)).toMatchObject({ kind: 'interruption', reason: 'user' });

    const session = (await harness.client.request('session/list', { conversationId })).sessions[0];
    expect(session?.status).toBe('idle');
    await harness.client.request('session/input', { conversationId, input: 'again' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    expect(harness.completedItems().at(-1)).toMatchObject({ kind: 'assistant_message', text: 'recovered' });
  });

  it('kills a running command, pairs the call with a result, and the next request is a valid transcript', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo $$ > command.pid; exec sleep 30" }, id: call_long }]
  - text: "fine, stopping"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'run the long thing' });
    const pidFile = path.join(harness.environment.workDir, 'command.pid');
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 10_000, 'the command to start');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const started = Date.now();
    await harness.client.request('session/interrupt', { conversationId });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('interrupted');
    expect(Date.now() - started).toBeLessThan(5000);
    await until(() => processGone(pid), 5000, `process ${pid} to end`);

    const call = harness.completedItems().find((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
    expect(call).toMatchObject({ callId: 'call_long', status: 'interrupted' });
    expect(harness.completedItems().at(-1)).toMatchObject({ kind: 'interruption', reason: 'user' });

    await harness.client.request('session/input', { conversationId, input: 'never mind' });
    await harness.turnsCompleted(2);
    // Responses API: the call and its output both appear, paired by call id.
    const input = (harness.environment.mock.requests[1]?.body as { input: { type?: string; call_id?: string; role?: string }[] }).input;
    const calls = input.filter((entry) => entry.type === 'function_call').map((entry) => entry.call_id);
    const outputs = input.filter((entry) => entry.type === 'function_call_output').map((entry) => entry.call_id);
    expect(calls).toEqual(['call_long']);
    expect(outputs).toEqual(['call_long']);
  });
});

describe('model failures', () => {
  it('retries a 429 after the Retry-After delay, then succeeds', async () => {
    harness = await startInProcessServer(`
responses:
  - error: { status: 429, message: "slow down", retryAfterSeconds: 1 }
  - text: "made it"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'hello' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    const [first, second] = harness.environment.mock.requests;
    expect(Number(second?.receivedAt) - Number(first?.receivedAt)).toBeGreaterThanOrEqual(950);
    expect(harness.completedItems().map((item) => item.kind)).toEqual(['user_message', 'assistant_message']);
  });
});

describe('model changes', () => {
  it('records a model change at the start of the next turn and uses the new model', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "from the first model"
  - text: "from the second model"
`,
      { providersYaml: (baseURL) => `providers:\n  mock:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { mock-model: { contextWindow: 32000 }, other-model: { contextWindow: 64000, reasoning: true } }\ndefaultModel: mock/mock-model\n` },
    );
    const catalog = await harness.client.request('models/list', {});
    expect(catalog.defaultModel).toBe('mock/mock-model');
    expect(catalog.models.map((model) => [model.id, model.contextWindow])).toEqual([
      ['mock/mock-model', 32000],
      ['mock/other-model', 64000],
    ]);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'one' });
    await harness.turnsCompleted(1);
    const refused = await harness.client.request('session/setModel', { conversationId, model: 'nowhere/x' }).catch((error: Error) => error);
    expect((refused as Error).message).toContain('session/setModel');
    const { session } = await harness.client.request('session/setModel', { conversationId, model: 'mock/other-model' });
    expect(session.model).toBe('mock/other-model');
    await harness.client.request('session/input', { conversationId, input: 'two' });
    await harness.turnsCompleted(2);
    const change = harness.completedItems().find((item) => item.kind === 'model_change');
    expect(change).toMatchObject({ from: 'mock/mock-model', to: 'mock/other-model' });
    expect((harness.environment.mock.requests[1]?.body as { model: string }).model).toBe('other-model');
  });
});

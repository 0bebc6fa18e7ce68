/**
 * The agent loop inside a real in-process server, driven over the protocol with the mock
 * provider: concurrent tool calls, result order, queued input, unknown tools, usage.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import type { AnyNotification, Item, Turn } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment;
let server: RunningServer;
let client: RuntimeClient;
let events: AnyNotification[];

async function start(script: string): Promise<void> {
  environment = await createTestEnvironment(script);
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') });
  client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'turn-test' });
  events = [];
  client.onNotification((event) => events.push(event));
}

async function turnsCompleted(count: number, timeoutMs = 20_000): Promise<Turn[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const turns = events.flatMap((event) => (event.method === 'turn/completed' ? [event.params.turn] : []));
    if (turns.length >= count) return turns;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`only ${events.filter((event) => event.method === 'turn/completed').length} of ${count} turns completed`);
}

function completedItems(): Item[] {
  return events.flatMap((event) => (event.method === 'item/completed' ? [event.params.item] : []));
}

beforeEach(() => {
  events = [];
});
afterEach(async () => {
  await client?.close();
  await server?.stop();
  await environment?.dispose();
});

describe('a turn', () => {
  it('runs the tool calls of one response concurrently and records results in the order requested', async () => {
    // The first call waits for the file the second one writes: it can only end if both run at once.
    await start(`
responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: "while [ ! -e fast.done ]; do sleep 0.05; done; sleep 0.2; echo slow" } }
      - { name: exec_command, arguments: { command: "echo fast; touch fast.done" } }
    usage: { inputTokens: 100, outputTokens: 10 }
  - text: "both done"
    usage: { inputTokens: 150, outputTokens: 5 }
`);
    const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'go' });
    const [turn] = await turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(turn?.steps).toBe(2);
    expect(turn?.usage).toMatchObject({ inputTokens: 250, outputTokens: 15, totalTokens: 265 });

    const calls = completedItems().filter((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
    expect(calls.map((call) => call.output.split('\n')[0])).toEqual(['slow', 'fast']);
    const [slow, fast] = calls;
    // Overlap: the fast one started before the slow one ended, and finished first.
    expect(fast!.createdAt).toBeLessThan(slow!.completedAt);
    expect(fast!.createdAt + fast!.durationMs).toBeLessThan(slow!.createdAt + slow!.durationMs);
    // The second request sent both results, paired with their calls.
    const second = JSON.stringify(environment.mock.requests[1]?.body);
    expect(second).toContain('slow');
    expect(second).toContain('fast');
  });

  it('queues input sent during a turn and runs it next, in order', async () => {
    await start(`
responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: "while [ ! -e go ]; do sleep 0.05; done" } }
  - text: "first done"
  - text: "second done"
  - text: "third done"
`);
    const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    // The first turn's command waits for the file written once the other inputs are queued.
    const first = await client.request('session/input', { conversationId: conversation.id, input: 'one' });
    const second = await client.request('session/input', { conversationId: conversation.id, input: 'two' });
    const third = await client.request('session/input', { conversationId: conversation.id, input: 'three' });
    expect(first.queued).toBe(false);
    expect([second.queued, third.queued]).toEqual([true, true]);
    const queuedSeen = events.some((event) => event.method === 'session/updated' && event.params.session.queuedInputs.map((input) => input.text).join(',') === 'two,three');
    expect(queuedSeen).toBe(true);
    writeFileSync(path.join(environment.workDir, 'go'), '');
    const turns = await turnsCompleted(3);
    expect(turns.map((turn) => turn.status)).toEqual(['completed', 'completed', 'completed']);
    const userTexts = completedItems().flatMap((item) => (item.kind === 'user_message' ? [item.content.map((part) => (part.type === 'text' ? part.text : '')).join('')] : []));
    expect(userTexts).toEqual(['one', 'two', 'three']);
    const answers = completedItems().flatMap((item) => (item.kind === 'assistant_message' ? [item.text] : []));
    expect(answers).toEqual(['first done', 'second done', 'third done']);
  });

  it('answers a call to an unknown tool with an error result the model reads, and goes on', async () => {
    await start(`
responses:
  - toolCalls:
      - { name: teleport, arguments: { where: "mars" } }
      - { name: red_file, arguments: { path: "notes.txt" } }
  - text: "I cannot teleport."
`);
    const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'go to mars' });
    const [turn] = await turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    const call = completedItems().find((item) => item.kind === 'tool_call');
    expect(call).toMatchObject({ isError: true, status: 'failed' });
    expect(JSON.stringify(environment.mock.requests[1]?.body)).toContain('unknown tool \\"teleport\\"; available: read_file');
    // A misspelt name is told the tool it most likely meant.
    const misspelt = completedItems().find((item) => item.kind === 'tool_call' && item.toolName === 'red_file');
    expect(misspelt).toMatchObject({ isError: true, output: expect.stringMatching(/^unknown tool "red_file" \(did you mean "read_file"\?\); available: /) });
  });

  it('stops at the step limit with a limit interruption', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: list_dir, arguments: {} }]
    repeat: 5
`);
    server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent'), limits: { maxStepsPerTurn: 3 } });
    client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'limit' });
    client.onNotification((event) => events.push(event));
    const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'loop' });
    const [turn] = await turnsCompleted(1);
    expect(turn?.status).toBe('interrupted');
    expect(turn?.steps).toBe(3);
    expect(completedItems().at(-1)).toMatchObject({ kind: 'interruption', reason: 'limit' });
    expect(environment.mock.requests).toHaveLength(3);
  });
});

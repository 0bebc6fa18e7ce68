/**
 * A model stream that breaks after output was streamed is retried, for every provider kind over
 * real HTTP with the mock speaking that provider's wire format: the cut-off attempt stays in the
 * transcript marked `failed` and out of the model's context, clients are told of the retry, a
 * tool call is never run twice, and a stream that breaks on every attempt fails the turn saying
 * how many attempts were made and what was kept.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyNotification, Item, ItemOf } from '../../src/protocol/index.js';
import type { RetryPolicy } from '../../src/runtime/model-call.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

type ProviderKind = 'openai' | 'openai-compatible' | 'anthropic' | 'google';
const kinds: ProviderKind[] = ['openai', 'openai-compatible', 'anthropic', 'google'];

/** Short waits, so a test of several retries takes milliseconds. */
const FAST: RetryPolicy = { maxRetries: 4, baseDelayMs: 1, maxDelayMs: 5, streamIdleTimeoutMs: 300_000 };

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(kind: ProviderKind, script: string, retryPolicy: RetryPolicy = FAST): Promise<InProcessServer> {
  harness = await startInProcessServer(script, {
    providersYaml: (baseURL) => `providers:\n  p: { kind: ${kind}, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: p/mock-model\n`,
    limits: { retryPolicy },
  });
  return harness;
}

/** The text of request `index` (0-based) the mock received. */
function requestText(server: InProcessServer, index: number): string {
  const request = server.environment.mock.requests[index];
  if (!request) throw new Error(`the mock received no request #${index + 1}`);
  return JSON.stringify(request.body);
}

function itemsOf<K extends Item['kind']>(server: InProcessServer, kind: K): ItemOf<K>[] {
  return server.completedItems().filter((item): item is ItemOf<K> => item.kind === kind);
}

function indexOfEvent(events: AnyNotification[], predicate: (event: AnyNotification) => boolean): number {
  return events.findIndex(predicate);
}

/** The text deltas streamed into item `itemId`, joined. */
function streamedInto(server: InProcessServer, itemId: string): string {
  return server.events.flatMap((event) => (event.method === 'item/delta' && event.params.itemId === itemId ? [event.params.delta.text ?? ''] : [])).join('');
}

const faults = [
  { name: 'the connection drops', fault: 'disconnectAfterDeltas: 4', message: /connection to the provider dropped mid-answer/ },
  { name: 'a transient error event arrives', fault: 'streamError: { afterDeltas: 4, status: 500, type: server_error, message: "UPSTREAM-HICCUP-3" }', message: /UPSTREAM-HICCUP-3/ },
];

describe.each(kinds)('provider kind %s', (kind) => {
  it.each(faults)('retries an answer cut mid-way when $name, keeping the cut-off part marked failed and out of the context', async ({ fault, message }) => {
    const server = await start(
      kind,
      `
responses:
  - reasoning: "REASON-A1 REASON-A2"
    deltas: ["PARTIAL-1 ", "PARTIAL-2 ", "never-sent"]
    ${fault}
  - text: "FULL-ANSWER-9"
    toolCalls: [{ name: exec_command, arguments: { command: "echo tool-ran" }, id: call_after_retry }]
  - text: "done"
`,
    );
    const conversationId = await server.conversation();
    await server.client.request('session/input', { conversationId, input: 'answer' });
    const [turn] = await server.turnsCompleted(1);
    expect(turn?.status, turn?.error).toBe('completed');
    expect(server.environment.mock.requests).toHaveLength(3);

    // The cut-off attempt: its reasoning and text, ended as failed; then the retry's answer.
    const kinds = server.completedItems().map((item) => `${item.kind}:${item.status}`);
    expect(kinds).toEqual(['user_message:completed', 'reasoning:failed', 'assistant_message:failed', 'assistant_message:completed', 'tool_call:completed', 'assistant_message:completed']);
    const [cut, full] = itemsOf(server, 'assistant_message');
    expect(cut?.text).toBe('PARTIAL-1 PARTIAL-2 ');
    expect(full?.text).toBe('FULL-ANSWER-9');
    expect(JSON.stringify(itemsOf(server, 'reasoning')[0])).toContain('REASON-A1');
    // Each attempt streamed into its own item: the retried text never lands in the cut-off one.
    expect(streamedInto(server, cut?.id ?? '')).toBe('PARTIAL-1 PARTIAL-2 ');
    expect(streamedInto(server, full?.id ?? '')).toBe('FULL-ANSWER-9');

    // Clients are told: the cut-off item ends, then the retry is announced.
    const retrying = server.events.find((event) => event.method === 'turn/retrying');
    expect(retrying?.params).toMatchObject({ attempt: 1, maxRetries: 4 });
    expect(retrying?.method === 'turn/retrying' ? retrying.params.message : '').toMatch(message);
    const cutEnded = indexOfEvent(server.events, (event) => event.method === 'item/completed' && event.params.item.id === cut?.id);
    expect(cutEnded).toBeGreaterThan(-1);
    expect(cutEnded).toBeLessThan(server.events.indexOf(retrying as AnyNotification));

    // The next request is built from the items: the full answer is there, the cut-off one is not.
    const next = requestText(server, 2);
    expect(next).toContain('FULL-ANSWER-9');
    expect(next).toContain('tool-ran');
    expect(next).not.toContain('PARTIAL-1');
    expect(next).not.toContain('REASON-A1');
  });

  it('fails the turn after the policy\'s retries when every attempt breaks, saying how many attempts were made and what was kept', async () => {
    const server = await start(
      kind,
      `
responses:
  - deltas: ["PARTIAL-1 ", "PARTIAL-2 ", "never-sent"]
    disconnectAfterDeltas: 2
    repeat: 3
  - text: "never requested"
`,
      { ...FAST, maxRetries: 2 },
    );
    const conversationId = await server.conversation();
    await server.client.request('session/input', { conversationId, input: 'answer' });
    const [turn] = await server.turnsCompleted(1);
    expect(turn?.status).toBe('failed');
    expect(server.environment.mock.requests).toHaveLength(3);
    expect(server.events.filter((event) => event.method === 'turn/retrying').map((event) => (event.method === 'turn/retrying' ? event.params.attempt : 0))).toEqual([1, 2]);
    const cut = itemsOf(server, 'assistant_message');
    expect(cut.map((item) => `${item.status}:${item.text}`)).toEqual(Array.from({ length: 3 }, () => 'failed:PARTIAL-1 PARTIAL-2 '));
    const [failure] = itemsOf(server, 'model_error');
    expect(failure).toMatchObject({ httpStatus: null, retries: 2 });
    expect(failure?.message).toMatch(/^the connection to the provider dropped mid-answer/);
    expect(failure?.message).toContain('gave up after 3 attempts');
    expect(failure?.message).toContain('kept the 20 characters of text that arrived');
    expect(failure?.message).not.toContain('\n');
    expect(turn?.error).toBe(failure?.message);
  });

  it('runs a tool call streamed whole before the cut only once, from the retried answer', async () => {
    const server = await start(
      kind,
      `
responses:
  - text: "LOOKING "
    toolCalls: [{ name: exec_command, arguments: { command: "echo ran >> runs.txt" }, id: call_cut }]
    disconnectBeforeFinish: true
  - text: "LOOKING "
    toolCalls: [{ name: exec_command, arguments: { command: "echo ran >> runs.txt" }, id: call_retried }]
  - text: "done"
`,
    );
    const conversationId = await server.conversation();
    await server.client.request('session/input', { conversationId, input: 'run it' });
    const [turn] = await server.turnsCompleted(1);
    expect(turn?.status, turn?.error).toBe('completed');
    expect(readFileSync(path.join(server.environment.workDir, 'runs.txt'), 'utf8')).toBe('ran\n');
    const calls = itemsOf(server, 'tool_call');
    expect(calls).toHaveLength(1);
    // Gemini pairs calls by name, the others by id: the call that ran is the retried answer's.
    if (kind !== 'google') expect(calls[0]?.callId).toBe('call_retried');
    expect(requestText(server, 2)).not.toContain('call_cut');
  });

  it('treats a stream silent for longer than the idle timeout as dropped, and retries it', async () => {
    const server = await start(
      kind,
      `
responses:
  - deltas: ["SLOW-1 ", "never-sent"]
    holds: [{ afterDeltas: 1, gate: stalled }]
  - text: "AFTER-STALL"
`,
      { ...FAST, streamIdleTimeoutMs: 300 },
    );
    const conversationId = await server.conversation();
    await server.client.request('session/input', { conversationId, input: 'answer' });
    const [turn] = await server.turnsCompleted(1);
    expect(turn?.status, turn?.error).toBe('completed');
    expect(itemsOf(server, 'assistant_message').map((item) => `${item.status}:${item.text}`)).toEqual(['failed:SLOW-1 ', 'completed:AFTER-STALL']);
    const retrying = server.events.find((event) => event.method === 'turn/retrying');
    expect(retrying?.method === 'turn/retrying' ? retrying.params.message : '').toMatch(/no data from the provider for 0\.3 s/);
  });
});

describe('compaction', () => {
  it('retries a summary cut mid-way without streaming the retried summary after the cut-off text', async () => {
    const server = await start(
      'openai',
      `
responses:
  - text: "first answer"
  - deltas: ["SUMMARY-PART ", "never-sent"]
    disconnectAfterDeltas: 1
  - text: "SUMMARY-WHOLE-5d2"
`,
    );
    const conversationId = await server.conversation();
    await server.client.request('session/input', { conversationId, input: 'question' });
    await server.turnsCompleted(1);
    await server.client.request('session/compact', { conversationId });
    const turns = await server.turnsCompleted(2);
    expect(turns[1]?.status, turns[1]?.error).toBe('completed');
    const [summary] = itemsOf(server, 'context_summary');
    expect(summary?.text).toBe('SUMMARY-WHOLE-5d2');
    expect(streamedInto(server, summary?.id ?? '')).toBe('SUMMARY-PART ');
    expect(server.events.some((event) => event.method === 'turn/retrying')).toBe(true);
  });
});

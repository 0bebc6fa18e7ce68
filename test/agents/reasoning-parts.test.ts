/**
 * Reasoning as summary parts over a real WebSocket against a real server, with the mock
 * provider speaking each wire format that carries reasoning: the `reasoning` item's
 * `summaryParts` / `rawText`, `item/delta` `partIndex` / `reasoningRaw`, and the parts replayed
 * to a client that subscribes while the item is still in progress.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

type Kind = 'openai' | 'openai-compatible' | 'anthropic' | 'google';

let harness: InProcessServer | undefined;
const extraClients: RuntimeClient[] = [];
afterEach(async () => {
  for (const client of extraClients.splice(0)) await client.close();
  await harness?.stop();
  harness = undefined;
});

const providersFor = (kind: Kind) => (baseURL: string) => `providers:\n  p:\n    kind: ${kind}\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { thinker: { reasoning: true } }\ndefaultModel: p/thinker\n`;

function reasoningItem(): Extract<Item, { kind: 'reasoning' }> {
  const item = harness?.completedItems().find((candidate): candidate is Extract<Item, { kind: 'reasoning' }> => candidate.kind === 'reasoning');
  if (!item) throw new Error('no reasoning item was completed');
  return item;
}

/** The reasoning deltas of an item, as [partIndex, text] with consecutive deltas of one part joined. */
function partsStreamed(events: AnyNotification[], itemId: string): [number | undefined, string][] {
  const parts: [number | undefined, string][] = [];
  for (const event of events) {
    if (event.method !== 'item/delta' || event.params.itemId !== itemId || !event.params.delta.reasoning) continue;
    const last = parts.at(-1);
    if (last && last[0] === event.params.delta.partIndex) last[1] += event.params.delta.reasoning;
    else parts.push([event.params.delta.partIndex, event.params.delta.reasoning]);
  }
  return parts;
}

async function runOne(kind: Kind, script: string): Promise<void> {
  harness = await startInProcessServer(script, { providersYaml: providersFor(kind) });
  const conversationId = await harness.conversation();
  await harness.client.request('session/input', { conversationId, input: 'think' });
  const [turn] = await harness.turnsCompleted(1);
  expect(turn?.status, turn?.error).toBe('completed');
}

describe.each(['openai', 'anthropic'] as const)('summary parts over %s', (kind) => {
  it('records each part, streams each with its partIndex, and keeps summary as the joined text', async () => {
    await runOne(kind, 'responses:\n  - reasoningParts: ["PART-ONE first look", "PART-TWO then decide"]\n    text: "answer"\n');
    const item = reasoningItem();
    expect(item.summaryParts).toEqual(['PART-ONE first look', 'PART-TWO then decide']);
    expect(item.summary).toBe('PART-ONE first look\n\nPART-TWO then decide');
    expect(item.rawText).toBeUndefined();
    expect(partsStreamed(harness?.events ?? [], item.id)).toEqual([
      [0, 'PART-ONE first look'],
      [1, 'PART-TWO then decide'],
    ]);
  });
});

describe('thoughts over google', () => {
  it('records the thoughts as one summary part streamed with partIndex 0', async () => {
    await runOne('google', 'responses:\n  - reasoning: "GEMINI-THOUGHT weighing options"\n    text: "answer"\n');
    const item = reasoningItem();
    expect(item.summaryParts).toEqual(['GEMINI-THOUGHT weighing options']);
    expect(item.summary).toBe('GEMINI-THOUGHT weighing options');
    expect(partsStreamed(harness?.events ?? [], item.id)).toEqual([[0, 'GEMINI-THOUGHT weighing options']]);
  });
});

describe('reasoning_content over chat completions', () => {
  it('records it as raw reasoning, streamed as reasoningRaw', async () => {
    await runOne('openai-compatible', 'responses:\n  - reasoning: "RAW-REASONING step by step"\n    text: "answer"\n');
    const item = reasoningItem();
    expect(item.rawText).toBe('RAW-REASONING step by step');
    expect(item.summaryParts).toEqual([]);
    expect(item.summary).toBe('RAW-REASONING step by step');
    const deltas = (harness?.events ?? []).flatMap((event) => (event.method === 'item/delta' && event.params.itemId === item.id ? [event.params.delta] : []));
    expect(deltas.map((delta) => delta.reasoningRaw ?? '').join('')).toBe('RAW-REASONING step by step');
    expect(deltas.some((delta) => delta.reasoning !== undefined || delta.partIndex !== undefined)).toBe(false);
  });
});

describe('a client that subscribes while reasoning is in progress', () => {
  it('receives the parts so far, each with its partIndex', async () => {
    // The four reasoning deltas (one per word) and the first text delta go out, then the stream
    // holds until the late client has subscribed.
    harness = await startInProcessServer('responses:\n  - reasoningParts: ["EARLY-PART one", "LATER-PART two"]\n    deltas: ["a", "b", "c", "d", "e", "f"]\n    holds: [{ afterDeltas: 5, gate: subscribed }]\n', { providersYaml: providersFor('openai') });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'think' });
    // The answer's text is streaming: the reasoning item is complete on the wire but not yet recorded.
    await harness.waitFor((event) => event.method === 'item/delta' && event.params.delta.text !== undefined);
    const late = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'late' });
    extraClients.push(late);
    const lateEvents: AnyNotification[] = [];
    late.onNotification((event) => lateEvents.push(event));
    await late.request('conversation/subscribe', { conversationId });
    harness.environment.mock.release('subscribed');
    await harness.turnsCompleted(1);
    const item = reasoningItem();
    expect(partsStreamed(lateEvents, item.id)).toEqual([
      [0, 'EARLY-PART one'],
      [1, 'LATER-PART two'],
    ]);
  });
});

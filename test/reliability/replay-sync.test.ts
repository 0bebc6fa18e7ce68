/**
 * Subscriptions with an end to their replay: `conversation/subscribe` answers each session's
 * head, `afterSeq: "head"` skips what is stored, `conversation/synced` marks where live events
 * begin; subscribing while a turn streams neither loses nor repeats anything, and a client that
 * reconnects with `afterSeq` ends with exactly the log.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, Item, MethodResult, StoredItem } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await harness?.stop();
  harness = undefined;
});

/** A second client that records its events; `until` resolves when one matches (checked on arrival, no polling). */
async function watcher(server: InProcessServer): Promise<{ client: RuntimeClient; events: AnyNotification[]; until(predicate: (event: AnyNotification) => boolean): Promise<void> }> {
  const client = await RuntimeClient.connect({ url: server.server.url, token: server.server.token, clientName: 'watcher' });
  clients.push(client);
  const events: AnyNotification[] = [];
  const waiters: { predicate: (event: AnyNotification) => boolean; resolve: () => void }[] = [];
  client.onNotification((event) => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  return {
    client,
    events,
    until: (predicate) =>
      events.some(predicate)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no matching event; saw ${events.map((event) => event.method).join(', ')}`)), 20_000);
            waiters.push({
              predicate,
              resolve: () => {
                clearTimeout(timer);
                resolve();
              },
            });
          }),
  };
}

async function allItems(client: RuntimeClient, conversationId: string): Promise<StoredItem[]> {
  return (await client.request('items/list', { conversationId, limit: 1000 })).items;
}

function completed(events: AnyNotification[]): StoredItem[] {
  return events.flatMap((event) => (event.method === 'item/completed' ? [{ seq: event.params.seq, item: event.params.item }] : []));
}

/**
 * A turn of three model calls and three commands. The stream and the second command stop at named
 * gates until the test opens them (see {@link openGate}), so a test can act at an exact point:
 * `start` before the first text, `text` after "Let me ", `command` once the second command printed
 * "two" (it waits for the file `go`), `reasoning` after "The output ", `answer` after
 * "Both commands ran; ", `last` after "All three ".
 */
const STREAMING_TURN = `
responses:
  - deltas: ["Let ", "me ", "look ", "first. "]
    toolCalls: [{ name: exec_command, arguments: { command: "echo one" } }, { name: exec_command, arguments: { command: "echo two; while [ ! -e go ]; do sleep 0.05; done; echo three" } }]
    holds: [{ afterDeltas: 0, gate: start }, { afterDeltas: 2, gate: text }]
  - reasoningDeltas: ["The ", "output ", "is ", "fine."]
    deltas: ["Both ", "commands ", "ran; ", "now ", "a ", "third."]
    toolCalls: [{ name: exec_command, arguments: { command: "printf 'a\\\\nb\\\\n'" } }]
    holds: [{ afterDeltas: 2, gate: reasoning }, { afterDeltas: 7, gate: answer }]
  - deltas: ["All ", "three ", "commands ", "worked ", "as ", "expected ", "and ", "the ", "turn ", "is ", "over."]
    holds: [{ afterDeltas: 2, gate: last }]
`;

type Gate = 'start' | 'text' | 'command' | 'reasoning' | 'answer' | 'last';
const GATES: readonly Gate[] = ['start', 'text', 'command', 'reasoning', 'answer', 'last'];

/** Lets the turn go on past `gate`: the mock's gate, or for `command` the file the command waits for. */
function openGate(server: InProcessServer, gate: Gate): void {
  if (gate === 'command') writeFileSync(path.join(server.environment.workDir, 'go'), '');
  else server.environment.mock.release(gate);
}

/** The delta field that carries an item kind's streamed content. */
function deltaField(kind: string): 'text' | 'reasoning' | 'output' {
  return kind === 'reasoning' ? 'reasoning' : kind === 'tool_call' ? 'output' : 'text';
}

/** The latest item of `kind` a client saw start, and what its deltas carried so far. */
function progressOf(events: AnyNotification[], kind: string): { itemId: string; content: string } | undefined {
  const started = events.findLast((event) => event.method === 'item/started' && event.params.kind === kind);
  if (started?.method !== 'item/started') return undefined;
  const { itemId } = started.params;
  let content = '';
  for (const event of events) {
    if (event.method === 'item/delta' && event.params.itemId === itemId) content += event.params.delta[deltaField(kind)] ?? '';
  }
  return { itemId, content };
}

describe('conversation/subscribe heads and conversation/synced', () => {
  it('answers the heads, replays up to them, then says synced; "head" replays nothing stored', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "first answer"
  - text: "second answer"
`);
    const conversationId = await harness.conversation();
    const { sessionId } = await harness.client.request('session/input', { conversationId, input: 'one' });
    await harness.turnsCompleted(1);
    const stored = await allItems(harness.client, conversationId);
    const head = stored.at(-1)!.seq;

    const full = await watcher(harness);
    const fullResult = await full.client.request('conversation/subscribe', { conversationId });
    expect(fullResult.heads).toEqual({ [sessionId]: head });
    expect(fullResult.metadataSeq).toBeGreaterThan(0);
    await full.until((event) => event.method === 'conversation/synced');
    const synced = full.events.find((event) => event.method === 'conversation/synced');
    expect(synced?.params).toEqual({ conversationId, heads: { [sessionId]: head } });
    // Everything before synced is the replay: exactly the stored items.
    const syncedAt = full.events.findIndex((event) => event.method === 'conversation/synced');
    expect(completed(full.events.slice(0, syncedAt))).toEqual(stored);

    const fromHead = await watcher(harness);
    const headResult = await fromHead.client.request('conversation/subscribe', { conversationId, afterSeq: 'head' });
    expect(headResult.heads).toEqual({ [sessionId]: head });
    await fromHead.until((event) => event.method === 'conversation/synced');
    expect(fromHead.events.map((event) => event.method)).toEqual(['conversation/synced']);
    expect(fromHead.events[0]?.params).toEqual({ conversationId, heads: { [sessionId]: head } });

    const partial = await watcher(harness);
    await partial.client.request('conversation/subscribe', { conversationId, afterSeq: { [sessionId]: 1 } });
    await partial.until((event) => event.method === 'conversation/synced');
    expect(completed(partial.events)).toEqual(stored.filter((entry) => entry.seq > 1));

    // Live after synced: the "head" subscriber gets the next turn's items, with seqs after the head.
    await harness.client.request('session/input', { conversationId, input: 'two' });
    await fromHead.until((event) => event.method === 'turn/completed');
    const live = completed(fromHead.events);
    expect(live.map((entry) => entry.seq)).toEqual((await allItems(harness.client, conversationId)).filter((entry) => entry.seq > head).map((entry) => entry.seq));
  });

  it('refuses a malformed afterSeq naming the field', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer('responses:\n  - text: "x"\n');
    const conversationId = await harness.conversation();
    const error = await harness.client.request('conversation/subscribe', { conversationId, afterSeq: 'tail' as unknown as 'head' }).catch((failure: Error) => failure);
    expect((error as Error).message).toContain('conversation/subscribe: params.afterSeq');
  });
});

/**
 * What one subscriber saw, checked against the log: item/completed seqs run 1…n without a gap
 * or a repeat, and every item whose deltas it got has exactly its final text in them.
 */
function expectExactView(events: AnyNotification[], log: StoredItem[], from = 0): void {
  const seen = completed(events);
  expect(seen.map((entry) => entry.seq)).toEqual(log.filter((entry) => entry.seq > from).map((entry) => entry.seq));
  expect(seen.map((entry) => entry.item.id)).toEqual(log.filter((entry) => entry.seq > from).map((entry) => entry.item.id));
  const text = new Map<string, { text: string; reasoning: string; output: string }>();
  for (const event of events) {
    if (event.method === 'item/started') {
      expect(text.has(event.params.itemId)).toBe(false);
      text.set(event.params.itemId, { text: '', reasoning: '', output: '' });
    }
    if (event.method === 'item/delta') {
      const progress = text.get(event.params.itemId);
      // Every delta follows its item's item/started (replayed or live).
      expect(progress).toBeDefined();
      progress!.text += event.params.delta.text ?? '';
      progress!.reasoning += event.params.delta.reasoning ?? '';
      progress!.output += event.params.delta.output ?? '';
    }
  }
  for (const { item } of log) {
    const progress = text.get(item.id);
    if (!progress) continue;
    if (item.kind === 'assistant_message') expect(progress.text).toBe(item.text);
    if (item.kind === 'reasoning') expect(progress.reasoning).toBe(item.summary);
    // The stored output adds the exit status after what the command printed.
    if (item.kind === 'tool_call') expect(item.output.startsWith(progress.output) && progress.output !== '').toBe(true);
  }
}

describe('subscribing while a turn streams', () => {
  /** Where the turn is held, the item in progress there and what it streamed before the hold. */
  const holds: { gate: Exclude<Gate, 'start'>; kind: string; streamed: string }[] = [
    { gate: 'text', kind: 'assistant_message', streamed: 'Let me ' },
    { gate: 'command', kind: 'tool_call', streamed: 'two\n' },
    { gate: 'reasoning', kind: 'reasoning', streamed: 'The output ' },
    { gate: 'answer', kind: 'assistant_message', streamed: 'Both commands ran; ' },
    { gate: 'last', kind: 'assistant_message', streamed: 'All three ' },
  ];

  it('is atomic with the snapshot: each subscriber sees every item once and every delta once', async () => {
    harness = await startInProcessServer(STREAMING_TURN);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'run the commands' });
    const subscribers: { watcher: Awaited<ReturnType<typeof watcher>>; result: MethodResult<'conversation/subscribe'>; fromHead: boolean }[] = [];
    /** Subscribes one client replaying everything and one asking for live events only ("head"). */
    const subscribeBoth = async () => {
      const added: typeof subscribers = [];
      for (const fromHead of [false, true]) {
        const subscriber = await watcher(harness!);
        const result = await subscriber.client.request('conversation/subscribe', { conversationId, ...(fromHead ? { afterSeq: 'head' as const } : {}) });
        await subscriber.until((event) => event.method === 'conversation/synced');
        added.push({ watcher: subscriber, result, fromHead });
      }
      subscribers.push(...added);
      return added;
    };

    // Held before any text: the turn runs, nothing is in progress yet or the message just started.
    await harness.environment.mock.waitForHold('start', 20_000);
    await subscribeBoth();
    openGate(harness, 'start');

    for (const { gate, kind, streamed } of holds) {
      if (gate !== 'command') await harness.environment.mock.waitForHold(gate, 20_000);
      // Everything streamed before the hold has reached the first client, so the server has it in memory.
      await harness.waitFor(() => progressOf(harness!.events, kind)?.content === streamed);
      const itemId = progressOf(harness.events, kind)!.itemId;
      for (const { watcher: subscriber, result } of await subscribeBoth()) {
        expect(result.turns.map((turn) => turn.status)).toEqual(['running']);
        const syncedAt = subscriber.events.findIndex((event) => event.method === 'conversation/synced');
        const replay = subscriber.events.slice(0, syncedAt);
        // The item in progress is replayed from memory: started once, then its deltas so far, exactly.
        expect(replay.filter((event) => event.method === 'item/started' && event.params.itemId === itemId)).toHaveLength(1);
        expect(progressOf(replay, kind)).toEqual({ itemId, content: streamed });
        expect(replay.some((event) => event.method === 'item/completed' && event.params.item.id === itemId)).toBe(false);
      }
      openGate(harness, gate);
    }

    await harness.turnsCompleted(1);
    const log = await allItems(harness.client, conversationId);
    expect(log.map((entry) => entry.item.kind)).toEqual(['user_message', 'assistant_message', 'tool_call', 'tool_call', 'reasoning', 'assistant_message', 'tool_call', 'assistant_message']);
    expect(subscribers).toHaveLength(2 * (holds.length + 1));
    for (const { watcher: subscriber, result, fromHead } of subscribers) {
      await subscriber.until((event) => event.method === 'turn/completed');
      const from = fromHead ? Object.values(result.heads)[0] : 0;
      // Also: the item that was in progress when it subscribed ends with exactly its stored content.
      expectExactView(subscriber.events, log, from);
    }
  });
});

describe('reconnecting with afterSeq', () => {
  /** When the first connection drops: after the n-th event matching the predicate. */
  /** `gate` holds the turn from the drop until the second connection has synced, so it reconnects mid-turn. */
  const points: { name: string; drop: (event: AnyNotification) => boolean; nth: number; gate: Gate }[] = [
    { name: 'at the turn start', drop: (event) => event.method === 'turn/started', nth: 1, gate: 'start' },
    { name: 'in the first streamed text', drop: (event) => event.method === 'item/delta' && event.params.kind === 'assistant_message', nth: 2, gate: 'text' },
    { name: 'after the first tool call is stored', drop: (event) => event.method === 'item/completed' && event.params.item.kind === 'tool_call', nth: 1, gate: 'command' },
    { name: 'in the reasoning of the second call', drop: (event) => event.method === 'item/delta' && event.params.kind === 'reasoning', nth: 1, gate: 'reasoning' },
    { name: 'in the last answer', drop: (event) => event.method === 'item/delta' && event.params.kind === 'assistant_message', nth: 12, gate: 'last' },
  ];

  it.each(points)('ends with exactly the log when the connection drops $name', async ({ drop, nth, gate }) => {
    harness = await startInProcessServer(STREAMING_TURN);
    for (const other of GATES) if (other !== gate) openGate(harness, other);
    const { conversation, session } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir });
    const conversationId = conversation.id;
    const first = await watcher(harness);
    await first.client.request('conversation/subscribe', { conversationId });
    await first.until((event) => event.method === 'conversation/synced');
    let matches = 0;
    const dropped = first.until((event) => drop(event) && ++matches === nth);
    await harness.client.request('session/input', { conversationId, input: 'run the commands' });
    await dropped;
    await first.client.close();
    const kept = completed(first.events);
    const lastSeq = kept.at(-1)?.seq ?? 0;

    const second = await watcher(harness);
    const result = await second.client.request('conversation/subscribe', { conversationId, afterSeq: { [session.id]: lastSeq } });
    await second.until((event) => event.method === 'conversation/synced');
    expect(result.turns.map((turn) => turn.status)).toEqual(['running']);
    openGate(harness, gate);
    await second.until((event) => event.method === 'turn/completed');
    const log = await allItems(harness.client, conversationId);
    const received = completed(second.events);
    // Together: the log, in order, nothing twice, nothing missing.
    expect([...kept, ...received]).toEqual(log);
    expectExactView(second.events, log, lastSeq);
    const items: Item[] = log.map((entry) => entry.item);
    expect(items.at(-1)).toMatchObject({ kind: 'assistant_message', text: 'All three commands worked as expected and the turn is over.' });
  });
});

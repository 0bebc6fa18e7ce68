/**
 * The pieces that keep what waits for a slow client bounded (docs/protocol.md, "Backpressure"):
 * the send buffer's limits and merging, the in-progress text kept for late subscribers, and the
 * limit on what a replay holds back for a client that stopped reading.
 */
import { EventEmitter } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import type { AnyNotification } from '../../src/protocol/index.js';
import { attachSubscriber, type ConversationSnapshot, type SubscriptionSource } from '../../src/runtime/conversation-subscription.js';
import { StreamedText } from '../../src/runtime/streamed-text.js';
import { LAGGING_CLOSE_CODE, LAGGING_CLOSE_REASON, SendQueue } from '../../src/server/send-queue.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

/** A socket whose buffered bytes the test sets: above the threshold, everything waits in the outbox. */
function fakeSocket(bufferedAmount: number) {
  const socket = { OPEN: 1, readyState: 1, bufferedAmount, sent: [] as string[], closed: undefined as { code: number; reason: string } | undefined };
  return Object.assign(socket, {
    send: (text: string) => socket.sent.push(text),
    close: (code: number, reason: string) => (socket.closed = { code, reason }),
  });
}

function fakeTransport() {
  return Object.assign(new EventEmitter(), { cork: () => undefined, uncork: () => undefined });
}

const LIMITS = { writeThresholdBytes: 1024, limitBytes: 64 * 1024 };

function queueOn(socket: ReturnType<typeof fakeSocket>) {
  const overflows: { outboxBytes: number; socketBytes: number }[] = [];
  const transport = fakeTransport();
  const queue = new SendQueue(socket as unknown as WebSocket, transport, LIMITS, { overflow: (figures) => overflows.push(figures), writeFailed: () => undefined });
  return { queue, overflows, transport };
}

it('sends the merged deltas, in order, with the messages between them, once the socket drains', () => {
  const socket = fakeSocket(LIMITS.writeThresholdBytes);
  const { queue, transport } = queueOn(socket);
  for (let index = 0; index < 5000; index++) queue.send(delta('item_m', String(index % 10)));
  queue.send({ jsonrpc: '2.0', method: 'item/completed', params: { itemId: 'item_m' } });
  queue.send(delta('item_n', 'next'));
  socket.bufferedAmount = 0;
  transport.emit('drain');
  const sent = socket.sent.map((text) => JSON.parse(text) as { method: string; params: { itemId: string; delta?: { text: string } } });
  expect(sent.map((message) => message.method)).toEqual(['item/delta', 'item/completed', 'item/delta']);
  expect(sent[0]!.params).toEqual({ conversationId: 'conv_a', sessionId: 'sess_a', itemId: 'item_m', delta: { text: Array.from({ length: 5000 }, (_, index) => String(index % 10)).join('') } });
  expect(sent[2]!.params.delta).toEqual({ text: 'next' });
  expect(queue.waitingBytes).toBe(0);
});

it('batches the frames of one tick into one write but never makes a sender wait for frames it only holds back to batch them', async () => {
  // A socket whose kernel takes everything at once: what is buffered is what sits corked.
  const socket = fakeSocket(0);
  let corks = 0;
  let writes = 0;
  const transport = Object.assign(new EventEmitter(), {
    cork: () => void (corks += 1),
    uncork: () => {
      corks -= 1;
      if (corks === 0 && socket.bufferedAmount > 0) {
        writes += 1;
        socket.bufferedAmount = 0;
      }
    },
  });
  const corkedSend = (text: string) => {
    if (corks > 0) socket.bufferedAmount += Buffer.byteLength(text);
    return socket.sent.push(text);
  };
  socket.send = corkedSend;
  const queue = new SendQueue(socket as unknown as WebSocket, transport, LIMITS, { overflow: () => undefined, writeFailed: () => undefined });
  // Small frames of one tick go out in one write at the next.
  for (let index = 0; index < 3; index++) queue.send(delta('item_d', 'small'));
  expect(writes).toBe(0);
  await new Promise((resolve) => process.nextTick(resolve));
  expect(writes).toBe(1);
  expect(corks).toBe(0);
  // A paced sender (a replay) that has written past the threshold in one tick is not kept
  // waiting: the batch goes out and it may go on at once.
  for (let index = 0; index < 40; index++) {
    expect(queue.ready()).toBeUndefined();
    queue.send(delta('item_d', 'x'.repeat(100)));
  }
  expect(writes).toBeGreaterThan(1);
  expect(queue.waitingBytes).toBe(0);
  expect(socket.sent).toHaveLength(43);
});

const delta = (itemId: string, text: string) => ({ jsonrpc: '2.0', method: 'item/delta', params: { conversationId: 'conv_a', sessionId: 'sess_a', itemId, delta: { text } } });

it('merges the deltas of one item while the socket is full and closes with 4001 once the outbox passes its limit', () => {
  const socket = fakeSocket(LIMITS.writeThresholdBytes);
  const { queue, overflows } = queueOn(socket);
  for (let index = 0; index < 100; index++) queue.send(delta('item_a', 'x'.repeat(100)));
  // 100 deltas, one waiting message: its text, not 100 envelopes.
  expect(queue.waitingBytes).toBeLessThan(100 * 100 + 300);
  expect(socket.closed).toBeUndefined();
  for (let index = 0; index < 1000 && !socket.closed; index++) queue.send(delta('item_a', 'x'.repeat(100)));
  expect(socket.closed).toEqual({ code: LAGGING_CLOSE_CODE, reason: LAGGING_CLOSE_REASON });
  expect(overflows).toHaveLength(1);
  expect(overflows[0]!.outboxBytes).toBeGreaterThan(LIMITS.limitBytes);
  expect(overflows[0]!.outboxBytes).toBeLessThanOrEqual(LIMITS.limitBytes + 100);
  // Closed: nothing more is queued or sent.
  queue.send(delta('item_a', 'late'));
  expect(queue.waitingBytes).toBe(0);
  expect(socket.sent).toEqual([]);
});

it('lets one message larger than the whole limit wait without closing, but not two', () => {
  const socket = fakeSocket(LIMITS.writeThresholdBytes);
  const { queue, overflows } = queueOn(socket);
  const huge = { jsonrpc: '2.0', method: 'item/completed', params: { text: 'y'.repeat(LIMITS.limitBytes * 2) } };
  queue.send(huge);
  queue.send(delta('item_b', 'after the big one'));
  expect(socket.closed).toBeUndefined();
  expect(queue.largestMessageBytes).toBeGreaterThan(LIMITS.limitBytes * 2);
  queue.send(huge);
  expect(socket.closed?.code).toBe(LAGGING_CLOSE_CODE);
  expect(overflows).toHaveLength(1);
});

it('sends straight to the socket under the threshold and reports the peak waiting', () => {
  const socket = fakeSocket(0);
  const { queue } = queueOn(socket);
  queue.send(delta('item_c', 'hello'));
  queue.sendNotification({ method: 'item/delta', params: { conversationId: 'conv_a', sessionId: 'sess_a', itemId: 'item_c', delta: { text: 'again' } } });
  expect(socket.sent.map((text) => (JSON.parse(text) as { params: { delta: { text: string } } }).params.delta.text)).toEqual(['hello', 'again']);
  expect(queue.waitingBytes).toBe(0);
  socket.bufferedAmount = 5000;
  queue.send(delta('item_c', 'queued'));
  expect(queue.peakBytes).toBeGreaterThan(5000);
});

it('keeps 200,000 deltas of an item in progress as a few hundred strings, and reads any prefix back in pieces', () => {
  const text = new StreamedText();
  const pieces: string[] = [];
  for (let index = 0; index < 200_000; index++) {
    const piece = `${index} `;
    pieces.push(piece);
    text.append(piece);
    // Joined as it grows: never more than 512 parts.
    if (index % 997 === 0) expect(text.parts).toBeLessThan(512);
  }
  const whole = pieces.join('');
  expect(text.length).toBe(whole.length);
  expect(text.toString()).toBe(whole);
  const prefix = 1_000_003;
  const slices = [...text.slices(65_536, prefix)];
  expect(slices.every((slice) => slice.length <= 65_536)).toBe(true);
  expect(slices.join('')).toBe(whole.slice(0, prefix));
  // A surrogate pair is never cut in two.
  const emoji = new StreamedText();
  emoji.append('ab😀cd');
  expect([...emoji.slices(3)]).toEqual(['ab', '😀c', 'd']);
});

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

it('ends a subscription whose replay waits on a client that stopped reading once what it holds back passes the limit', async () => {
  harness = await startInProcessServer('responses: []\n');
  const conversationId = await harness.conversation();
  const conversation = await harness.server.runtime.getConversation(conversationId);
  const sessionId = conversation.rootSession.id;
  conversation.itemStarted(sessionId, 'turn_x', 'item_x', 'assistant_message', {});
  conversation.itemDelta(sessionId, 'turn_x', 'item_x', { text: 'so far ' });
  const subscribersBefore = conversation.subscriberCount;
  const received: string[] = [];
  let lagging = 0;
  // The client never becomes ready: the replay waits before its first message.
  const subscribed: Promise<unknown> = conversation.subscribe((event) => received.push(event.method), {}, { ready: () => new Promise<void>(() => undefined), holdLimitBytes: 10_000, lagging: () => (lagging += 1) });
  expect(conversation.subscriberCount).toBe(subscribersBefore + 1);
  for (let index = 0; index < 200 && lagging === 0; index++) conversation.itemDelta(sessionId, 'turn_x', 'item_x', { text: 'z'.repeat(100) });
  expect(lagging).toBe(1);
  // Detached at once: later events are not held for it.
  expect(conversation.subscriberCount).toBe(subscribersBefore);
  conversation.itemDelta(sessionId, 'turn_x', 'item_x', { text: 'more' });
  expect(lagging).toBe(1);
  expect(received).toEqual([]);
  // The replay stays parked on the client that never reads (the connection's close releases it).
  subscribed.catch(() => undefined);
});

/** A conversation source for `attachSubscriber` with one stored item, whose live events the test publishes. */
function liveSource() {
  const listeners = new Set<(event: AnyNotification) => void>();
  const source: SubscriptionSource = {
    id: 'conv_h',
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    snapshot: () => ({ conversation: {} as ConversationSnapshot['conversation'], sessions: [], turns: [] }),
    heads: () => ({ sess_h: 1 }),
    metadataSeq: 0,
    inProgress: () => [],
    approvals: () => [],
    userInputs: () => [],
    listItems: async () => [{ seq: 1, item: completed('item_0', 1, 'stored').params.item }],
  };
  const publish = (event: AnyNotification) => {
    for (const listener of listeners) listener(event);
  };
  return { source, publish, listeners };
}

const completed = (itemId: string, seq: number, text: string) => ({ method: 'item/completed' as const, params: { conversationId: 'conv_h', sessionId: 'sess_h', seq, item: { kind: 'assistant_message' as const, id: itemId, sessionId: 'sess_h', turnId: 'turn_h', createdAt: 0, completedAt: 0, status: 'completed' as const, model: 'mock/mock-model', text } } }) satisfies AnyNotification;

it('holds one event larger than the whole hold limit for a replay that is still running, as the send buffer lets one such message wait, but not two', async () => {
  // A client resubscribing while a long answer streams is still being replayed when the answer
  // completes: its item/completed (the whole text) is held like any live event. Closing for it
  // would cut off a client that keeps up, and its next replay would meet the same message.
  for (const count of [1, 2]) {
    const { source, publish, listeners } = liveSource();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting: Promise<void> | undefined = gate;
    const received: AnyNotification[] = [];
    let lagging = 0;
    const attachment = attachSubscriber(source, (event) => void received.push(event), {}, { ready: () => waiting, holdLimitBytes: 10_000, lagging: () => (lagging += 1) });
    const replayed = attachment.replay();
    // The replay waits for the client before its stored item; the answers complete meanwhile.
    await new Promise((resolve) => setImmediate(resolve));
    for (let index = 1; index <= count; index++) publish(completed(`item_${index}`, index + 1, 'w'.repeat(50_000)));
    publish(completed('item_small', count + 2, 'small'));
    waiting = undefined;
    release();
    await replayed;
    if (count === 1) {
      expect(lagging).toBe(0);
      expect(received.map((event) => (event.method === 'item/completed' ? event.params.item.id : event.method))).toEqual(['item_0', 'item_1', 'item_small', 'conversation/synced']);
      expect(listeners.size).toBe(1);
    } else {
      expect(lagging).toBe(1);
      expect(received).toEqual([]);
      expect(listeners.size).toBe(0);
    }
  }
});

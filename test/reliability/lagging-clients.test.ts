/**
 * Clients that stop reading while a turn streams 200,000 deltas: the server's memory stays
 * bounded (each connection's send buffer is), the laggards are closed with the documented
 * code and reason, and each, resubscribing with `afterSeq`, ends up with exactly the log's
 * items — nothing lost, nothing twice.
 */
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, StoredItem } from '../../src/protocol/index.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';
import { checkReceivedMessage } from '../setup/protocol-validation.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop();
  await environment?.dispose();
  serve = undefined;
  environment = undefined;
});

const DELTAS = 200_000;
/** Each delta is one word of this many characters (the mock splits text into words). */
const WORD_LENGTH = 100;
/** Peak growth of the server's resident memory allowed during the turn, bytes. */
const MEMORY_BOUND_BYTES = 768 * 1024 * 1024;

/** Resident memory of a process, bytes. */
function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) * 1024;
}

/** A subscriber speaking JSON-RPC on a plain WebSocket, whose reading can be paused. */
class Subscriber {
  readonly events: AnyNotification[] = [];
  closed: { code: number; reason: string } | undefined;
  private nextId = 1;
  private readonly answers = new Map<number, (value: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      checkReceivedMessage(socket, data.toString());
      const message = JSON.parse(data.toString()) as { id?: number; method?: string; params?: unknown; result?: unknown };
      if (message.id !== undefined && message.method === undefined) this.answers.get(message.id)?.(message.result);
      else if (message.method !== undefined && message.id === undefined) this.events.push(message as AnyNotification);
    });
    socket.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  static async connect(url: string, token: string): Promise<Subscriber> {
    const socket = new WebSocket(`${url.replace('http', 'ws')}/api/v1/openvaala`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const subscriber = new Subscriber(socket);
    await subscriber.request('initialize', { clientInfo: { name: 'laggard' } });
    return subscriber;
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.answers.set(id, resolve);
      this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** Stops reading from the TCP socket (the server's writes pile up behind it). */
  pause(): void {
    (this.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  resume(): void {
    (this.socket as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  /** Stored items received, in order. */
  items(): StoredItem[] {
    return this.events.flatMap((event) => (event.method === 'item/completed' ? [{ seq: event.params.seq, item: event.params.item }] : []));
  }
}

it('closes clients that stop reading during 200,000 deltas, with bounded memory, and they resume losslessly with afterSeq', { timeout: 400_000 }, async () => {
  const words = Array.from({ length: DELTAS }, (_, index) => String(index).padStart(WORD_LENGTH, 'w'));
  environment = await createTestEnvironment(`responses:\n  - text: "${words.join(' ')}"\n`);
  serve = await startServe(environment);
  let lagging = 0;
  serve.child.stderr?.on('data', (chunk: Buffer) => (lagging += chunk.toString().split('send buffer over its limit').length - 1));
  const pid = serve.child.pid as number;
  const driver = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'driver' });
  const { conversation, session } = await driver.request('conversation/create', { cwd: environment.workDir });

  const laggards = await Promise.all(Array.from({ length: 4 }, () => Subscriber.connect(serve!.info.url, serve!.info.token)));
  for (const laggard of laggards) await laggard.request('conversation/subscribe', { conversationId: conversation.id });
  for (const laggard of laggards) laggard.pause();

  const before = residentBytes(pid);
  let peak = before;
  let peakBuffered = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, residentBytes(pid));
    void fetch(`${serve!.info.url}/healthz`, { headers: { authorization: `Bearer ${serve!.info.token}` } })
      .then((response) => response.json() as Promise<{ sendBufferBytes?: number }>)
      .then((health) => (peakBuffered = Math.max(peakBuffered, health.sendBufferBytes ?? Infinity)))
      .catch(() => undefined);
  }, 250);
  try {
    await driver.request('session/input', { conversationId: conversation.id, input: 'stream a long answer' });

    // The server cuts each laggard once its buffer is full; caught up, each reads why.
    await until(() => lagging >= 4, 200_000, 'the server to close the four laggards');
    for (const laggard of laggards) laggard.resume();
    await until(() => laggards.every((laggard) => laggard.closed !== undefined), 30_000, 'the laggards to read their close');
    for (const laggard of laggards) expect(laggard.closed).toEqual({ code: 4001, reason: 'lagging: resubscribe with afterSeq' });

    const deadline = Date.now() + 200_000;
    while (!(await driver.request('conversation/get', { conversationId: conversation.id })).turns.some((turn) => turn.status === 'completed')) {
      if (Date.now() > deadline) throw new Error('the turn did not complete');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    clearInterval(sampler);
    // What waits for the clients stays within the documented bound: per connection, the
    // 4 MiB outbox plus what the socket holds past its 512 KiB write threshold (one frame).
    expect(peakBuffered).toBeLessThan(4 * (4 + 0.5 + 1) * 1024 * 1024);
    const growth = peak - before;
    // The turn itself costs a few hundred MiB here; unbounded buffers for the four laggards
    // (one queued frame per delta each) cost about as much again on top.
    expect(growth, `server RSS grew ${Math.round(growth / 1048576)} MiB`).toBeLessThan(MEMORY_BOUND_BYTES);

    // Each resubscribes from the last item it holds.
    const resumed = await Promise.all(
      laggards.map(async (laggard) => {
        const held = laggard.items();
        const again = await Subscriber.connect(serve!.info.url, serve!.info.token);
        await again.request('conversation/subscribe', { conversationId: conversation.id, ...(held.length > 0 ? { afterSeq: { [session.id]: (held.at(-1) as StoredItem).seq } } : {}) });
        return { held, again };
      }),
    );

    const log = (await driver.request('items/list', { conversationId: conversation.id, limit: 1000 })).items;
    expect(log.map((stored) => stored.item.kind)).toEqual(['user_message', 'assistant_message']);
    for (const { held, again } of resumed) {
      await until(() => held.length + again.items().length >= log.length, 20_000, 'the replay');
      const all = [...held, ...again.items()];
      expect(all.map((stored) => stored.seq)).toEqual(log.map((stored) => stored.seq));
      expect(all.map((stored) => stored.item.id)).toEqual(log.map((stored) => stored.item.id));
    }
    const answer = log[1]?.item;
    expect(answer?.kind === 'assistant_message' && answer.text.length).toBe(DELTAS * (WORD_LENGTH + 1) - 1);
  } finally {
    clearInterval(sampler);
  }
  await driver.close();
});

/**
 * The outgoing side of one client connection: a bounded send buffer (docs/protocol.md,
 * "Backpressure"). Messages go straight to the socket while it drains; once the socket holds
 * more than the write threshold they wait in an outbox, where consecutive deltas of one item
 * are merged. When the outbox passes its limit the client is too slow to follow: it is closed
 * with {@link LAGGING_CLOSE_CODE} and resubscribes with `afterSeq`, losing nothing.
 */
import { WebSocket } from 'ws';
import { StreamedText } from '../runtime/streamed-text.js';
import { textFrame } from './web-socket-frame.js';

// Defined with the protocol (clients need them); re-exported for the server's modules.
export { DEFAULT_SEND_BUFFER_LIMIT_BYTES, DEFAULT_WRITE_THRESHOLD_BYTES, LAGGING_CLOSE_CODE, LAGGING_CLOSE_REASON } from '../protocol/transport.js';
import { LAGGING_CLOSE_CODE, LAGGING_CLOSE_REASON } from '../protocol/transport.js';

const DELTA_KEYS = ['text', 'reasoning', 'reasoningRaw', 'output'] as const;

/** The delta fields of a merged delta, in the order the protocol lists them. */
function mergedFields(texts: Partial<Record<DeltaKey, StreamedText>>, partIndex: number | undefined): DeltaFields {
  const fields: DeltaFields = partIndex === undefined ? {} : { partIndex };
  for (const key of DELTA_KEYS) {
    const text = texts[key];
    if (text !== undefined) fields[key] = text.toString();
  }
  return fields;
}

/**
 * Notifications being fanned out, per event object (gone with the event), as a whole WebSocket
 * text frame around their UTF-8 JSON. Framed once: a string handed to `ws` is measured, encoded
 * and framed again for each client it goes to, which at 100 clients was most of what a delta
 * allocated (docs/performance.md, eleventh round).
 */
const framedNotifications = new WeakMap<object, { frame: Buffer; payloadOffset: number }>();

/** The TCP (or TLS) stream under a client's WebSocket: what the send queue corks, writes and watches for `drain`. */
export type SendTransport = NodeJS.EventEmitter & {
  cork(): void;
  uncork(): void;
  write?(chunk: Uint8Array, callback: (error?: Error | null) => void): boolean;
};

/** Limits of one connection's send buffer, in bytes. */
export interface SendBufferLimits {
  /** Socket bytes (`bufferedAmount`) above which messages wait in the outbox. */
  writeThresholdBytes: number;
  /** Outbox bytes above which the client is closed as lagging. */
  limitBytes: number;
}

type DeltaFields = { text?: string; reasoning?: string; partIndex?: number; reasoningRaw?: string; output?: string };

type DeltaKey = (typeof DELTA_KEYS)[number];

/**
 * A message waiting in the outbox: serialized, or a delta kept open for merging. A merged
 * delta's text is kept as {@link StreamedText} (joined as it grows): appending with `+=` would
 * keep one rope node per merged delta, so 4 MiB of one-character deltas would cost far more
 * than 4 MiB.
 */
type Waiting = { text: string; bytes: number } | { delta: { method: 'item/delta'; params: { itemId: string } & Record<string, unknown> }; texts: Partial<Record<DeltaKey, StreamedText>>; partIndex: number | undefined; bytes: number };

/** What a send queue tells its connection. */
export interface SendQueueEvents {
  /** The outbox passed its limit; the socket has been sent the lagging close. Gets the bytes waiting at that moment. */
  overflow(figures: { outboxBytes: number; socketBytes: number }): void;
  /** A write to the socket failed (the peer is gone); called once per queue. */
  writeFailed(error: Error): void;
}

/** The bounded send buffer of one WebSocket connection. */
export class SendQueue {
  private readonly outbox: Waiting[] = [];
  private outboxBytes = 0;
  private closed = false;
  private failed = false;
  private readonly waiters: (() => void)[] = [];
  private peak = 0;
  private largest = 0;
  /** Bytes and number of queued messages each larger than the limit on its own. */
  private oversizedBytes = 0;
  private oversizedCount = 0;
  /** Whether this queue holds the transport corked to batch frames (see {@link write}). */
  private corked = false;
  private uncorkScheduled = false;
  /**
   * Whether frames made once for all clients may be written to the transport directly: only
   * under a real `ws` socket without extensions (no permessage-deflate), whose own frames are
   * then always written whole and at once, so ours fall between them. A relayed cluster channel
   * is not a WebSocket on this transport and gets the JSON text through its `send`.
   */
  private readonly writesFrames: boolean;
  /** One callback for every write, instead of a closure per message. */
  private readonly afterWrite = (error?: Error | null): void => {
    if (!error || this.failed) return;
    this.failed = true;
    this.events.writeFailed(error);
  };

  /**
   * @param socket the client's WebSocket
   * @param transport the TCP socket under it (its `drain` event flushes the outbox)
   * @param limits byte limits
   * @param events overflow and write-failure callbacks
   */
  constructor(
    private readonly socket: WebSocket,
    private readonly transport: SendTransport,
    private readonly limits: SendBufferLimits,
    private readonly events: SendQueueEvents,
  ) {
    transport.on('drain', () => this.flush());
    this.writesFrames = socket instanceof WebSocket && socket.extensions === '' && typeof transport.write === 'function';
  }

  /** Bytes waiting in the outbox (not yet handed to the socket). */
  get waitingBytes(): number {
    return this.outboxBytes;
  }

  /** The most bytes ever waiting at once for this client (outbox plus socket), measured at each send. */
  get peakBytes(): number {
    return this.peak;
  }

  /** Bytes of the largest single message sent or queued (it may exceed the limits on its own). */
  get largestMessageBytes(): number {
    return this.largest;
  }

  /**
   * Queues a notification for the client. A conversation's event object is the same for every
   * subscriber, so its JSON text is made once and shared by all the connections it goes to.
   */
  sendNotification(event: { method: string; params: unknown }): void {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    if (this.outbox.length === 0 && this.hasRoom()) {
      let framed = framedNotifications.get(event);
      if (framed === undefined) {
        framed = textFrame(JSON.stringify({ jsonrpc: '2.0', method: event.method, params: event.params }));
        framedNotifications.set(event, framed);
      }
      if (this.writesFrames) this.writeFrame(framed.frame);
      else this.write(framed.frame.subarray(framed.payloadOffset));
      this.measure(framed.frame.length - framed.payloadOffset);
      return;
    }
    this.send({ jsonrpc: '2.0', method: event.method, params: event.params });
  }

  /** Queues a JSON-RPC message (object) for the client; dropped once the queue is closed. */
  send(message: { method?: string; params?: unknown } & Record<string, unknown>): void {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    if (this.outbox.length === 0 && this.hasRoom()) {
      const text = JSON.stringify(message);
      this.write(text);
      // Counting bytes costs a pass over the text: only for one that may be the largest yet.
      this.measure(text.length * 3 > this.largest ? Buffer.byteLength(text) : 0);
      return;
    }
    const last = this.outbox.at(-1);
    const incoming = message.params as { itemId: string; delta: DeltaFields };
    // Text of two reasoning parts stays apart: the client files each under its partIndex.
    if (message.method === 'item/delta' && last && 'delta' in last && last.delta.params.itemId === incoming.itemId && last.partIndex === incoming.delta.partIndex) {
      for (const key of DELTA_KEYS) {
        const piece = (message.params as { delta: DeltaFields }).delta[key];
        if (!piece) continue;
        (last.texts[key] ??= new StreamedText()).append(piece);
        const bytes = Buffer.byteLength(piece);
        last.bytes += bytes;
        this.outboxBytes += bytes;
      }
      this.measure(last.bytes);
    } else if (message.method === 'item/delta') {
      const { delta: fields, ...params } = message.params as { itemId: string; delta: DeltaFields } & Record<string, unknown>;
      const texts: Partial<Record<DeltaKey, StreamedText>> = {};
      for (const key of DELTA_KEYS) {
        if (fields[key] === undefined) continue;
        texts[key] = new StreamedText();
        texts[key].append(fields[key]);
      }
      this.enqueue({ delta: { method: 'item/delta', params }, texts, partIndex: fields.partIndex, bytes: Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', method: 'item/delta', params: message.params })) });
    } else {
      const text = JSON.stringify(message);
      this.enqueue({ text, bytes: Buffer.byteLength(text) });
    }
    if (this.outboxBytes - this.oversizedBytes > this.limits.limitBytes || this.oversizedCount > 1) this.overflow();
  }

  /**
   * Queues a message that is not merged. One larger than the whole limit (an item/completed of
   * a very long answer) is not counted against it: closing for it would cut off a client that
   * keeps up, and resubscribing would replay the same message. Only one may wait at a time.
   * Deltas are always counted: a long one can be (and in replays is) sent in pieces.
   */
  private enqueue(entry: Waiting): void {
    this.outbox.push(entry);
    this.outboxBytes += entry.bytes;
    if ('text' in entry && entry.bytes > this.limits.limitBytes) {
      this.oversizedBytes += entry.bytes;
      this.oversizedCount += 1;
    }
    this.measure(entry.bytes);
  }

  private measure(messageBytes: number): void {
    if (messageBytes > this.largest) this.largest = messageBytes;
    const waiting = this.outboxBytes + this.socket.bufferedAmount;
    if (waiting > this.peak) this.peak = waiting;
  }

  /**
   * Resolves when the client can take more (outbox empty, socket under the write threshold);
   * returns undefined when it already can. Used to pace replays. Also resolves on close.
   */
  ready(): Promise<void> | undefined {
    if (this.closed || (this.outbox.length === 0 && this.hasRoom())) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops sending: drops the outbox and releases anyone waiting in `ready`. */
  close(): void {
    this.closed = true;
    this.outbox.length = 0;
    this.outboxBytes = 0;
    this.oversizedBytes = 0;
    this.oversizedCount = 0;
    this.releaseWaiters();
  }

  /** Closes the client as lagging ({@link LAGGING_CLOSE_CODE}) for a buffer kept elsewhere (a replay's held events). */
  closeLagging(): void {
    if (!this.closed) this.overflow();
  }

  private overflow(): void {
    const figures = { outboxBytes: this.outboxBytes, socketBytes: this.socket.bufferedAmount };
    this.close();
    this.socket.close(LAGGING_CLOSE_CODE, LAGGING_CLOSE_REASON);
    this.events.overflow(figures);
  }

  private flush(): void {
    while (!this.closed && this.outbox.length > 0 && this.hasRoom()) {
      const next = this.outbox.shift() as Waiting;
      this.outboxBytes -= next.bytes;
      if (next.bytes > this.limits.limitBytes && 'text' in next) {
        this.oversizedBytes -= next.bytes;
        this.oversizedCount -= 1;
      }
      this.write('text' in next ? next.text : JSON.stringify({ jsonrpc: '2.0', method: next.delta.method, params: { ...next.delta.params, delta: mergedFields(next.texts, next.partIndex) } }));
    }
    if (this.outbox.length === 0) this.releaseWaiters();
  }

  private releaseWaiters(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /**
   * Whether the socket is under the write threshold. Frames corked only to batch them are sent
   * first when they are what puts it over: batching must never make a sender wait (a replay
   * paced by {@link ready} would otherwise wait for a `drain` that needs the batch written).
   */
  private hasRoom(): boolean {
    if (this.socket.bufferedAmount < this.limits.writeThresholdBytes) return true;
    if (!this.corked) return false;
    this.uncork();
    return this.socket.bufferedAmount < this.limits.writeThresholdBytes;
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.transport.uncork();
  }

  /** Sends one message as a text frame (`binary: false` also for an encoded one: it holds UTF-8 JSON). */
  private write(text: string | Buffer): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    this.corkUntilNextTick();
    this.socket.send(text, { binary: false }, this.afterWrite);
  }

  /** Writes a whole frame made by {@link textFrame} to the transport (see {@link writesFrames}). */
  private writeFrame(frame: Buffer): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    this.corkUntilNextTick();
    this.transport.write!(frame, this.afterWrite);
  }

  /**
   * A turn emits several events per tick (deltas, item ends): corking until the next tick turns
   * their frames into one write system call instead of one each. (Corking until the check phase
   * batched a little more but did not move the fan-out latency: see docs/performance.md, tenth
   * round.)
   */
  private corkUntilNextTick(): void {
    if (!this.corked) {
      this.corked = true;
      this.transport.cork();
      if (!this.uncorkScheduled) {
        this.uncorkScheduled = true;
        process.nextTick(() => {
          this.uncorkScheduled = false;
          this.uncork();
        });
      }
    }
  }
}

/**
 * The outgoing side of one client connection: a bounded send buffer (docs/protocol.md,
 * "Flow control"). Messages go straight to the socket while it drains; once the socket holds
 * more than the write threshold they wait in an outbox, where consecutive deltas of one item
 * are merged. When the outbox passes its limit the client is too slow to follow: it is closed
 * with {@link LAGGING_CLOSE_CODE} and resubscribes with `afterSeq`, losing nothing.
 */
import type { WebSocket } from 'ws';

// Defined with the protocol (clients need them); re-exported for the server's modules.
export { DEFAULT_SEND_BUFFER_LIMIT_BYTES, DEFAULT_WRITE_THRESHOLD_BYTES, LAGGING_CLOSE_CODE, LAGGING_CLOSE_REASON } from '../protocol/transport.js';
import { LAGGING_CLOSE_CODE, LAGGING_CLOSE_REASON } from '../protocol/transport.js';

/** Limits of one connection's send buffer, in bytes. */
export interface SendBufferLimits {
  /** Socket bytes (`bufferedAmount`) above which messages wait in the outbox. */
  writeThresholdBytes: number;
  /** Outbox bytes above which the client is closed as lagging. */
  limitBytes: number;
}

type DeltaFields = { text?: string; reasoning?: string; output?: string };

/** A message waiting in the outbox: serialized, or a delta kept open for merging. */
type Waiting = { text: string; bytes: number } | { delta: { method: 'item/delta'; params: { itemId: string; delta: DeltaFields } & Record<string, unknown> }; bytes: number };

/** What a send queue tells its connection. */
export interface SendQueueEvents {
  /** The outbox passed its limit; the socket has been sent the lagging close. */
  overflow(): void;
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

  /**
   * @param socket the client's WebSocket
   * @param transport the TCP socket under it (its `drain` event flushes the outbox)
   * @param limits byte limits
   * @param events overflow and write-failure callbacks
   */
  constructor(
    private readonly socket: WebSocket,
    private readonly transport: NodeJS.EventEmitter & { writableCorked: number; cork(): void; uncork(): void },
    private readonly limits: SendBufferLimits,
    private readonly events: SendQueueEvents,
  ) {
    transport.on('drain', () => this.flush());
  }

  /** Bytes waiting in the outbox (not yet handed to the socket). */
  get waitingBytes(): number {
    return this.outboxBytes;
  }

  /** Queues a JSON-RPC message (object) for the client; dropped once the queue is closed. */
  send(message: { method?: string; params?: unknown } & Record<string, unknown>): void {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    if (this.outbox.length === 0 && this.socket.bufferedAmount < this.limits.writeThresholdBytes) {
      this.write(JSON.stringify(message));
      return;
    }
    const last = this.outbox.at(-1);
    if (message.method === 'item/delta' && last && 'delta' in last && last.delta.params.itemId === (message.params as { itemId: string }).itemId) {
      const merged = last.delta.params.delta;
      for (const key of ['text', 'reasoning', 'output'] as const) {
        const piece = (message.params as { delta: DeltaFields }).delta[key];
        if (!piece) continue;
        merged[key] = (merged[key] ?? '') + piece;
        last.bytes += Buffer.byteLength(piece);
        this.outboxBytes += Buffer.byteLength(piece);
      }
    } else if (message.method === 'item/delta') {
      const params = message.params as { itemId: string; delta: DeltaFields } & Record<string, unknown>;
      // A copy: the event object is shared by every subscriber of the conversation.
      const delta = { method: 'item/delta' as const, params: { ...params, delta: { ...params.delta } } };
      const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', ...delta }));
      this.outbox.push({ delta, bytes });
      this.outboxBytes += bytes;
    } else {
      const text = JSON.stringify(message);
      const bytes = Buffer.byteLength(text);
      this.outbox.push({ text, bytes });
      this.outboxBytes += bytes;
    }
    if (this.outboxBytes > this.limits.limitBytes) this.overflow();
  }

  /**
   * Resolves when the client can take more (outbox empty, socket under the write threshold);
   * returns undefined when it already can. Used to pace replays. Also resolves on close.
   */
  ready(): Promise<void> | undefined {
    if (this.closed || (this.outbox.length === 0 && this.socket.bufferedAmount < this.limits.writeThresholdBytes)) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops sending: drops the outbox and releases anyone waiting in `ready`. */
  close(): void {
    this.closed = true;
    this.outbox.length = 0;
    this.outboxBytes = 0;
    this.releaseWaiters();
  }

  private overflow(): void {
    this.close();
    this.socket.close(LAGGING_CLOSE_CODE, LAGGING_CLOSE_REASON);
    this.events.overflow();
  }

  private flush(): void {
    while (!this.closed && this.outbox.length > 0 && this.socket.bufferedAmount < this.limits.writeThresholdBytes) {
      const next = this.outbox.shift() as Waiting;
      this.outboxBytes -= next.bytes;
      this.write('text' in next ? next.text : JSON.stringify({ jsonrpc: '2.0', ...next.delta }));
    }
    if (this.outbox.length === 0) this.releaseWaiters();
  }

  private releaseWaiters(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  private write(text: string): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    // A turn emits several events per tick (deltas, item ends): corking until the next tick
    // turns their frames into one write system call instead of one each.
    if (this.transport.writableCorked === 0) {
      this.transport.cork();
      process.nextTick(() => this.transport.uncork());
    }
    this.socket.send(text, (error) => {
      if (!error || this.failed) return;
      this.failed = true;
      this.events.writeFailed(error);
    });
  }
}

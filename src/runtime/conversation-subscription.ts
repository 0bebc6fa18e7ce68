/**
 * Subscribing to a live conversation (SPEC §5): a subscriber gets the stored items it missed,
 * then the items in progress, then the waiting approvals and questions, then live events, with
 * no gap and no duplicate. The conversation hands over only what the replay reads.
 */
import type { AnyNotification, ApprovalRequest, Conversation, Session, SessionHeads, StoredItem, Turn, UserInputRequest } from '../protocol/index.js';
import type { EventListener } from './event-bus.js';
import { heldEvents, holdEvent, type HeldEntry, type ItemInProgress } from './replay-buffer.js';

/** How a subscriber ends its subscription and paces its replay. */
export interface SubscribeOptions {
  /** Aborting it detaches the listener: during the replay (which then stops) or any time after. */
  signal?: AbortSignal;
  /**
   * Called before each replayed stored item; when it returns a promise the replay waits for it,
   * so a client that reads slowly slows its own replay instead of piling it up in memory.
   */
  ready?: () => Promise<void> | undefined;
  /**
   * Most bytes (about: characters of held deltas and of other held events) of live events held
   * back while the replay waits for the subscriber; past it the held events are dropped, the
   * listener is detached, the replay stops and `lagging` is called, so a client that stops
   * reading mid-replay costs a bounded amount. One event larger than the limit on its own is
   * held without counting against it, but never two at a time (docs/protocol.md,
   * "Backpressure"). Default: no limit.
   */
  holdLimitBytes?: number;
  /** Told (once) that the subscription ended because `holdLimitBytes` was passed. */
  lagging?: () => void;
}

/** Stored-state snapshot of a conversation (`conversation/get`). */
export interface ConversationSnapshot {
  conversation: Conversation;
  sessions: Session[];
  turns: Turn[];
}

/** What `attachSubscriber` returns: the state the subscriber starts from and its replay. */
export interface Attachment {
  snapshot: ConversationSnapshot;
  heads: SessionHeads;
  metadataSeq: number;
  /** Sends the replay, then lets live events through; resolves to the function that detaches the listener. */
  replay: () => Promise<() => void>;
}

/**
 * What a subscription reads from its conversation. Every read is synchronous except
 * `listItems`, so the start state can be taken in the same tick as subscribing.
 */
export interface SubscriptionSource {
  /** The conversation id (put in every replayed event). */
  readonly id: string;
  /** Registers a live listener; returns the function that removes it. */
  subscribe(listener: EventListener): () => void;
  snapshot(): ConversationSnapshot;
  /** Seq of each session's last stored item. */
  heads(): SessionHeads;
  /** Seq of the last entry written to `metadata.jsonl`. */
  readonly metadataSeq: number;
  /** Items announced but not stored yet. */
  inProgress(): Iterable<ItemInProgress>;
  /** Approvals waiting for a decision. */
  approvals(): ApprovalRequest[];
  /** Questions waiting for an answer. */
  userInputs(): UserInputRequest[];
  /** A page of a session's stored items after `cursor`, oldest first (the store's `listItems`). */
  listItems(sessionId: string, cursor: number, limit: number): Promise<StoredItem[]>;
}

/** Stored items read per page during a replay. */
const PAGE_SIZE = 500;

/**
 * Registers a subscriber and takes the state it starts from in one synchronous step, so
 * nothing published can fall between the two: the snapshot (conversation, sessions, turns),
 * each session's item head, the metadata seq, and the items in progress. Events published
 * from then on are held until `replay` has sent what came before them.
 *
 * `replay()` sends the stored items after `afterSeq` up to the heads (`"head"`: none), then
 * each item in progress (`item/started` and one `item/delta` with its text so far), then the
 * held events, then `conversation/synced` with the last seq sent per session; after it, events
 * go straight to the listener. The listener is removed on every way out: an error during the
 * replay (which `replay` then rethrows), or `options.signal` aborting (during the replay or at
 * any time after); `replay` resolves to the function that removes it.
 * The source's heads must be known (see `LiveConversation.loadHeads`).
 */
export function attachSubscriber(source: SubscriptionSource, listener: EventListener, afterSeq: Record<string, number> | 'head' = {}, options: SubscribeOptions = {}): Attachment {
  const { signal } = options;
  const conversationId = source.id;
  const held: HeldEntry[] = [];
  let heldBytes = 0;
  // One event larger than the whole limit on its own (the item/completed of a very long answer)
  // is not counted against it, as in the send buffer: closing for it would cut off a client that
  // keeps up, and its next replay would meet the same message. Only one may be held at a time.
  let oversizedBytes = 0;
  let oversizedCount = 0;
  const limit = options.holdLimitBytes;
  const isOversized = (entry: HeldEntry): boolean => limit !== undefined && 'event' in entry && entry.size > limit;
  let live = false;
  let overflowed = false;
  const unsubscribe = source.subscribe((event: AnyNotification) => {
    if (live) return listener(event);
    if (overflowed) return;
    const added = holdEvent(held, event);
    heldBytes += added;
    if (limit === undefined) return;
    // A non-delta event is held as an entry of its own, of the size returned.
    if (event.method !== 'item/delta' && added > limit) {
      oversizedBytes += added;
      oversizedCount += 1;
    }
    if (heldBytes - oversizedBytes <= limit && oversizedCount <= 1) return;
    // A subscriber that stops reading mid-replay costs a bounded amount: it is let go as lagging.
    overflowed = true;
    held.length = 0;
    unsubscribe();
    options.lagging?.();
  });
  // Everything below is read in the same tick as subscribing: later changes arrive in `held`.
  const snapshot = source.snapshot();
  const heads = source.heads();
  const metadataSeq = source.metadataSeq;
  const progressSnapshot = [...source.inProgress()].map((progress) => ({ started: progress.started, deltas: progress.mark() }));
  const approvals = source.approvals();
  const userInputs = source.userInputs();
  if (signal?.aborted) unsubscribe();
  else signal?.addEventListener('abort', unsubscribe, { once: true });
  const ended = () => signal?.aborted === true || overflowed;
  /** Waits until the subscriber can take more; false when the subscription ended meanwhile. */
  const paced = async (): Promise<boolean> => {
    const waiting = options.ready?.();
    if (waiting) await waiting;
    return !ended();
  };
  const replay = async (): Promise<() => void> => {
    if (ended()) return unsubscribe;
    try {
      const lastSent = new Map<string, number>();
      for (const [sessionId, head] of Object.entries(heads)) {
        const after = afterSeq === 'head' ? head : (afterSeq[sessionId] ?? 0);
        lastSent.set(sessionId, Math.max(after, 0));
        let cursor = after;
        while (cursor < head) {
          const page = await source.listItems(sessionId, cursor, PAGE_SIZE);
          if (ended()) return unsubscribe;
          for (const stored of page) {
            if (stored.seq > head) break;
            if (!(await paced())) return unsubscribe;
            listener({ method: 'item/completed', params: { conversationId, sessionId, seq: stored.seq, item: stored.item } });
            lastSent.set(sessionId, stored.seq);
          }
          if (page.length < PAGE_SIZE) break;
          cursor = page.at(-1)?.seq ?? head;
        }
      }
      // Items in progress at the snapshot are not stored yet (a stored item's id is never in progress).
      for (const { started, deltas } of progressSnapshot) {
        if (!(await paced())) return unsubscribe;
        listener(started);
        const { sessionId, turnId, itemId, kind } = started.params;
        for (const delta of deltas()) {
          if (!(await paced())) return unsubscribe;
          listener({ method: 'item/delta', params: { conversationId, sessionId, turnId, itemId, kind, seq: heads[sessionId] ?? 0, delta } });
        }
      }
      // A client that arrives while a call waits for approval or a question waits for its answer
      // is asked too (an answer, if any came since, is held below).
      for (const approval of approvals) listener({ method: 'approval/requested', params: { conversationId, approval } });
      for (const request of userInputs) listener({ method: 'input/requested', params: { conversationId, request } });
      // Events keep arriving in `held` while this waits for the subscriber; it goes live only
      // once `held` is empty, in the same tick, so nothing falls between the two.
      while (held.length > 0) {
        const entry = held.shift() as HeldEntry;
        heldBytes -= entry.size;
        if (isOversized(entry)) {
          oversizedBytes -= entry.size;
          oversizedCount -= 1;
        }
        if ('event' in entry && entry.event.method === 'item/completed') {
          const { sessionId, seq } = entry.event.params;
          if (seq <= (lastSent.get(sessionId) ?? 0)) continue;
          lastSent.set(sessionId, seq);
        }
        for (const event of heldEvents(entry)) {
          if (!(await paced())) return unsubscribe;
          listener(event);
        }
      }
      if (ended()) return unsubscribe;
      listener({ method: 'conversation/synced', params: { conversationId, heads: Object.fromEntries(lastSent) } });
      live = true;
      return unsubscribe;
    } catch (error) {
      unsubscribe();
      throw error;
    }
  };
  return { snapshot, heads, metadataSeq, replay };
}

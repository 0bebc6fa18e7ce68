/**
 * The table of open conversations: a cache, in front of storage, of the conversations being
 * used (SPEC §3: the runtime routes every request to its conversation). A conversation is
 * opened once however many requests ask for it at the same time, and closed again once nobody
 * uses it, within the bounds `conversationsToClose` applies. Kept apart from `Runtime` so that
 * what the runtime configures (models, executors, agents) and what it keeps open do not mix.
 */
import type { Logger } from '../logger.js';
import type { LiveConversation } from './conversation.js';
import { conversationsToClose, type IdleConversationBounds } from './conversation-eviction.js';

/**
 * A conversation used within this long is never closed for being idle, so a handler that just
 * got it never finds it closed under its feet, ms.
 */
export const EVICTION_GRACE_MS = 5_000;

/**
 * How often the table looks for conversations to close while any is open, ms. Short enough that
 * one over the bounds closes within about a second of another becoming idle, before the server's
 * idle collection gives the memory of both back (`src/server/idle-memory.ts`).
 */
export const EVICTION_CHECK_MS = 1_000;

/** What the table needs from its owner. */
export interface OpenConversationsOptions {
  /** Opens a conversation from storage. @throws what opening throws (not found, claimed elsewhere) */
  open(conversationId: string): Promise<LiveConversation>;
  /** The bounds in force (read at each eviction: a reload may change them). */
  bounds(): IdleConversationBounds;
  logger?: Logger | undefined;
}

/** The open conversations of a runtime, opened on first use and closed when idle. */
export class OpenConversations {
  private readonly opening = new Map<string, Promise<LiveConversation>>();
  /** The conversations whose opening has finished. */
  private readonly opened = new Map<string, LiveConversation>();
  /** When each open conversation was last asked for, ms since the epoch; least recent first. */
  private readonly lastUsed = new Map<string, number>();
  private evictionTimer: NodeJS.Timeout | undefined;
  private activityAt = Date.now();
  private closedAt = 0;

  constructor(private readonly options: OpenConversationsOptions) {}

  /**
   * Returns an open conversation, opening it when needed; marks it used now.
   * @throws what `open` throws (the table keeps nothing of a failed opening)
   */
  get(conversationId: string): Promise<LiveConversation> {
    this.activityAt = Date.now();
    this.lastUsed.delete(conversationId);
    this.lastUsed.set(conversationId, Date.now());
    this.scheduleEviction();
    let opening = this.opening.get(conversationId);
    if (!opening) {
      const started = this.options.open(conversationId);
      opening = started;
      this.opening.set(conversationId, started);
      // Only while it is still the table's opening: one taken meanwhile (a deletion) hands its
      // copy to the taker alone, and must neither come back nor remove the opening since.
      started.then(
        (live) => {
          if (this.opening.get(conversationId) === started) this.opened.set(conversationId, live);
        },
        () => {
          if (this.opening.get(conversationId) === started) this.opening.delete(conversationId);
        },
      );
    }
    return opening;
  }

  /**
   * Puts a conversation just created in the table. It is not marked used: like before any
   * request for it, it is not a candidate for closing until its first `get`.
   */
  add(live: LiveConversation): void {
    this.opening.set(live.id, Promise.resolve(live));
    this.opened.set(live.id, live);
  }

  /**
   * Takes a conversation out of the table (it is being deleted) and returns the live one, if
   * it was open, for the caller to shut down. A later `get` opens it from storage again. An
   * opening in progress is the caller's once it finishes: it never enters the table.
   */
  async take(conversationId: string): Promise<LiveConversation | undefined> {
    const opening = this.opening.get(conversationId);
    this.forget(conversationId);
    return opening?.catch(() => undefined);
  }

  /**
   * Closes open conversations nobody uses (see `LiveConversation.isEvictable`), past the grace
   * of {@link EVICTION_GRACE_MS}, as `conversationsToClose` chooses them (those still in their
   * grace count toward the bounds without being closed). Their MCP servers stop
   * and their items leave memory; the next use opens them from storage.
   * @param now the current time, ms (tests)
   * @returns the ids of the conversations closed
   */
  async evictIdle(now = Date.now()): Promise<string[]> {
    const bounds = this.options.bounds();
    const idle = [...this.lastUsed].flatMap(([conversationId, usedAt]) => {
      const live = this.opened.get(conversationId);
      const inGrace = now - usedAt < Math.min(EVICTION_GRACE_MS, bounds.idleConversationMs);
      return live?.isEvictable === true ? [{ conversationId, usedAt, historyChars: live.historyChars, inGrace }] : [];
    });
    const evicted = conversationsToClose(idle, bounds, now);
    // Out of the tables first, all in this tick: a request arriving meanwhile opens a fresh copy from storage.
    const closing = evicted.flatMap((conversationId) => {
      const live = this.opened.get(conversationId);
      this.forget(conversationId);
      return live ? [live.shutdown()] : [];
    });
    await Promise.all(closing);
    if (evicted.length > 0) this.closedAt = Date.now();
    if (this.opened.size > 0) this.scheduleEviction();
    return evicted;
  }

  /** The conversations whose opening has finished. */
  values(): IterableIterator<LiveConversation> {
    return this.opened.values();
  }

  /** The number of open conversations. */
  get size(): number {
    return this.opened.size;
  }

  /** When a conversation was last asked for, ms since the epoch. */
  get lastActivityAt(): number {
    return this.activityAt;
  }

  /** When idle conversations were last closed, ms since the epoch (0 before any). */
  get lastClosedAt(): number {
    return this.closedAt;
  }

  /** Stops evicting and shuts every open (or opening) conversation down. */
  async shutdown(): Promise<void> {
    clearTimeout(this.evictionTimer);
    const conversations = await Promise.allSettled(this.opening.values());
    await Promise.all(conversations.flatMap((result) => (result.status === 'fulfilled' ? [result.value.shutdown()] : [])));
  }

  private forget(conversationId: string): void {
    this.opening.delete(conversationId);
    this.opened.delete(conversationId);
    this.lastUsed.delete(conversationId);
  }

  private scheduleEviction(): void {
    if (this.evictionTimer) return;
    // Soon after a burst of use, and then while conversations stay open; never keeps the process alive.
    this.evictionTimer = setTimeout(() => {
      this.evictionTimer = undefined;
      this.evictIdle().catch((error: unknown) => this.options.logger?.warn({ error: (error as Error).message }, 'closing idle conversations failed'));
    }, Math.min(EVICTION_CHECK_MS, this.options.bounds().idleConversationMs));
    this.evictionTimer.unref();
  }
}

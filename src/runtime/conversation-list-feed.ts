/**
 * The live conversation list feed (SPEC §5 `conversations/subscribe`): every change of the
 * conversation index, told to each subscriber that its predicate admits. There are no users
 * yet, so subscribers pass a predicate that admits everything; a per-user filter is that
 * predicate.
 */
import type { ConversationIndexChange } from '../dao/conversation-store.js';
import type { AnyNotification, ConversationSummary } from '../protocol/index.js';

/** Decides whether a subscriber hears about a conversation (given its summary; undefined for a deletion without one). */
export type ConversationFeedPredicate = (conversationId: string, summary: ConversationSummary | undefined) => boolean;

/** The notification of an index change: `conversation/created`, `conversation/updated` or `conversation/deleted`. */
export function feedNotification(change: ConversationIndexChange): AnyNotification {
  if (change.kind === 'deleted') return { method: 'conversation/deleted', params: { conversationId: change.conversationId, ...(change.summary ? { summary: change.summary } : {}) } };
  if (change.kind === 'created') return { method: 'conversation/created', params: { conversation: change.conversation, summary: change.summary } };
  return { method: 'conversation/updated', params: { conversation: change.conversation, summary: change.summary } };
}

/** Fans index changes out to list subscribers. A subscriber that throws is dropped from this change only. */
export class ConversationListFeed {
  private readonly subscribers = new Map<(event: AnyNotification) => void, ConversationFeedPredicate>();

  /** Adds a subscriber; returns the function that removes it. */
  subscribe(listener: (event: AnyNotification) => void, predicate: ConversationFeedPredicate = () => true): () => void {
    this.subscribers.set(listener, predicate);
    return () => this.subscribers.delete(listener);
  }

  /** Tells every admitted subscriber about a change, synchronously. */
  publish(change: ConversationIndexChange): void {
    if (this.subscribers.size === 0) return;
    const event = feedNotification(change);
    const id = change.kind === 'deleted' ? change.conversationId : change.conversation.id;
    for (const [listener, predicate] of this.subscribers) {
      try {
        if (predicate(id, change.summary)) listener(event);
      } catch {
        // One subscriber's failure must not keep the change from the others.
      }
    }
  }

  /** Number of subscribers. */
  get size(): number {
    return this.subscribers.size;
  }
}

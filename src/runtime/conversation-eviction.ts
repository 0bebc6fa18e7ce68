/**
 * Which idle conversations the runtime closes (`Runtime.evictIdleConversations`). Open
 * conversations are a cache of what is in storage: closing one loses nothing (only conversations
 * that could close without anyone noticing are offered, see `LiveConversation.isEvictable`) and
 * the next use reads it again. The cache is bounded three ways: by number, by the text their
 * histories keep in memory, and by time unused.
 */

/** An idle conversation that could be closed. */
export interface IdleConversation {
  conversationId: string;
  /** When it was last used, ms since the epoch. */
  usedAt: number;
  /** Characters of text its histories keep in memory (`LiveConversation.historyChars`). */
  historyChars: number;
  /**
   * Used too recently to be closed (see `EVICTION_GRACE_MS`): it still counts toward the bounds,
   * so that older conversations beyond them close at once, but is never among those closed.
   */
  inGrace?: boolean;
}

/** The bounds of the idle conversations kept open (from `RuntimeLimits`). */
export interface IdleConversationBounds {
  /** Most idle conversations kept open. */
  maxIdleOpenConversations: number;
  /** Most characters of history text the idle conversations kept open hold together. */
  maxIdleHistoryChars: number;
  /** An idle conversation unused for this long is closed, ms. */
  idleConversationMs: number;
}

/**
 * Chooses the conversations to close: the most recently used are kept while they stay within
 * both the number and the text bounds and were used within `idleConversationMs`; every other
 * one is closed. A conversation whose history alone is over the text bound is thus never kept
 * idle: the text of a long answer leaves memory once nobody watches it. Conversations `inGrace`
 * take their place in the bounds like the others but are never returned: the 17th idle
 * conversation (with 16 allowed) closes as soon as the 1st becomes idle, not once the 1st is
 * past its grace.
 * @param idle the idle conversations, least recently used first
 * @param now the current time, ms since the epoch
 * @returns the ids to close, least recently used first
 */
export function conversationsToClose(idle: readonly IdleConversation[], bounds: IdleConversationBounds, now: number): string[] {
  const closing: string[] = [];
  let kept = 0;
  let keptChars = 0;
  for (let index = idle.length - 1; index >= 0; index--) {
    const conversation = idle[index] as IdleConversation;
    const fits = kept < bounds.maxIdleOpenConversations && keptChars + conversation.historyChars <= bounds.maxIdleHistoryChars && now - conversation.usedAt < bounds.idleConversationMs;
    if (fits) {
      kept++;
      keptChars += conversation.historyChars;
    } else if (conversation.inGrace !== true) closing.push(conversation.conversationId);
  }
  return closing.reverse();
}

/**
 * The folded metadata state of recently written conversations, so that a metadata write
 * (several per turn) folds only the entries it appended instead of re-reading and re-folding
 * the conversation's whole metadata log: that cost grew with every turn of a long conversation.
 */
import type { LogEntry } from '../storage/log-storage.js';
import { applyMetadataEntries, type ConversationState, type MetadataEntry } from './metadata-log.js';

/** How many conversations' states are kept; the least recently written go first. */
export const METADATA_STATE_CACHE_SIZE = 256;

/** A bounded map from conversation id to its folded metadata state. */
export class MetadataStateCache {
  private readonly states = new Map<string, ConversationState | undefined>();

  constructor(private readonly capacity = METADATA_STATE_CACHE_SIZE) {}

  /**
   * The state after `appended`, when the cached state is the one just before them (or the
   * log was empty before them); undefined = not known, fold the log.
   */
  advance(conversationId: string, appended: LogEntry<MetadataEntry>[]): { state: ConversationState | undefined } | undefined {
    const first = appended[0];
    if (first === undefined) return undefined;
    const known = this.states.has(conversationId);
    const cached = this.states.get(conversationId);
    const previousSeq = first.seq - 1;
    if (previousSeq === 0) return { state: applyMetadataEntries(undefined, appended) };
    if (!known || cached === undefined || cached.metadataSeq !== previousSeq) return undefined;
    return { state: applyMetadataEntries(cached, appended) };
  }

  /** Remembers the state folded after a write (or its absence, for a deleted conversation). */
  remember(conversationId: string, state: ConversationState | undefined): void {
    this.states.delete(conversationId);
    if (state === undefined) return;
    this.states.set(conversationId, state);
    if (this.states.size > this.capacity) {
      const oldest = this.states.keys().next().value;
      if (oldest !== undefined) this.states.delete(oldest);
    }
  }

  /** Forgets a conversation (its log was replaced, moved or deleted). */
  forget(conversationId: string): void {
    this.states.delete(conversationId);
  }
}

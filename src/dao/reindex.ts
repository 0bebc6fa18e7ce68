/**
 * Rebuilds the conversation index (`metadata.db`) from the logs (SPEC §4: the logs are the
 * source of truth; reindexing yields the same listing).
 */
import type { LogStorage } from '../storage/log-storage.js';
import type { RecordStorage } from '../storage/record-storage.js';
import { CONVERSATION_INDEX, ConversationStore, summarize, type InvalidEntryReport } from './conversation-store.js';

/** What a reindex did. */
export interface ReindexReport {
  /** Conversations indexed. */
  conversations: number;
  /** Conversation directories skipped (deleted, or no valid conversation entry), with why. */
  skipped: { conversationId: string; reason: string }[];
  /** Entries that did not match the schema and were left out. */
  invalidEntries: InvalidEntryReport[];
  /** Wall time, ms. */
  durationMs: number;
}

/**
 * Empties the index and refills it from every conversation's metadata log. Idempotent: two
 * runs over the same logs give the same index.
 */
export async function reindex(logs: LogStorage, index: RecordStorage): Promise<ReindexReport> {
  const started = performance.now();
  const invalidEntries: InvalidEntryReport[] = [];
  const store = new ConversationStore(logs, index, (report) => invalidEntries.push(report));
  const ids = await store.listConversationIds();
  const skipped: ReindexReport['skipped'] = [];
  const records: { key: string; value: unknown; updatedAt: number }[] = [];
  for (const id of ids) {
    const state = await store.loadConversation(id);
    if (!state) {
      skipped.push({ conversationId: id, reason: 'deleted or has no valid conversation entry' });
      continue;
    }
    records.push({ key: id, value: summarize(state), updatedAt: state.conversation.updatedAt });
  }
  await index.deleteRange(CONVERSATION_INDEX, '', '\uffff');
  if (records.length > 0) await index.mset(CONVERSATION_INDEX, records);
  return { conversations: records.length, skipped, invalidEntries, durationMs: performance.now() - started };
}

/**
 * Rebuilds the conversation index (`metadata.db`: listing records and conversation search)
 * from the logs (SPEC §4: the logs are the source of truth; reindexing yields the same
 * listing).
 */
import type { LogStorage } from '../storage/log-storage.js';
import type { RecordStorage } from '../storage/record-storage.js';
import { UnreadableStreamError } from '../storage/log-storage.js';
import { createLogConversationLoader, unreadableSessionLog, type ConversationLoader, type LoadedConversation } from './conversation-loader.js';
import type { ConversationSearchIndex, SearchConversationEntry, SearchMessage } from './conversation-search-index.js';
import { readPreview, toIndexValue } from './conversation-listing.js';
import { CONVERSATION_INDEX, ConversationStore, conversationPath, summarize, type InvalidEntryReport } from './conversation-store.js';
import { hasStaleTurns, recoverConversation } from './turn-recovery.js';

/** Conversations being loaded at the same time, so reads overlap with indexing. */
const LOAD_CONCURRENCY = 128;
/** Messages collected before they are written to the search in one transaction. */
const SEARCH_BATCH_MESSAGES = 50_000;

/** What a reindex did. */
export interface ReindexReport {
  /** Conversations indexed. */
  conversations: number;
  /** Session log entries read (0 without a search index: then only metadata logs are read). */
  items: number;
  /** User and assistant messages added to the search. */
  messages: number;
  /** Conversation directories skipped (deleted, no valid conversation entry, a metadata log that cannot be read), with why. */
  skipped: { conversationId: string; reason: string }[];
  /** Entries that did not match the schema and were left out, and session logs that could not be read. */
  invalidEntries: InvalidEntryReport[];
  /** Turns left running by a server that died, now recorded interrupted (`crash_recovery`). */
  recoveredTurns: number;
  /** Wall time, ms. */
  durationMs: number;
}

/** Options of {@link reindex}. */
export interface ReindexOptions {
  /** The conversation search to rebuild too; the session logs are then read. */
  search?: ConversationSearchIndex;
  /**
   * How conversations are read; default: through `logs` on this thread. For a FileLogStorage
   * data directory, `createFileConversationLoader` is much faster.
   */
  loader?: ConversationLoader;
  /**
   * Record turns still marked running as interrupted (reason `crash_recovery`), writing to the
   * logs. Default true: reindex holds the data directory's lock, so no live server owns them.
   */
  recoverStaleTurns?: boolean;
}

/**
 * Empties the index (and the search, when given) and refills them from every conversation's
 * metadata log (and session logs). Idempotent: two runs over the same logs give the same
 * index. Must not run while a server writes to the same storage (the CLI holds the data-dir
 * lock).
 * @throws Error when the index or the search cannot be written, or a conversation cannot be
 *   loaded for another reason than its logs (damaged entries and logs that cannot be read are
 *   skipped and reported instead)
 */
export async function reindex(logs: LogStorage, index: RecordStorage, options: ReindexOptions = {}): Promise<ReindexReport> {
  const started = performance.now();
  const { search } = options;
  const loader = options.loader ?? createLogConversationLoader(logs);
  // The store declares the index namespace; conversations are read through the loader.
  const store = new ConversationStore(logs, index, search ? { search } : {});
  const ids = await store.listConversationIds();
  const report: ReindexReport = { conversations: 0, items: 0, messages: 0, skipped: [], invalidEntries: [], recoveredTurns: 0, durationMs: 0 };
  const stale: string[] = [];
  const records: { key: string; value: unknown; updatedAt: number }[] = [];
  let pendingConversations: SearchConversationEntry[] = [];
  let pendingMessages: SearchMessage[] = [];
  const flush = async (): Promise<void> => {
    if (!search) return;
    // Conversations first, so their messages find them (an unknown one would be created untitled).
    await search.setConversations(pendingConversations);
    await search.addMessages(pendingMessages);
    pendingConversations = [];
    pendingMessages = [];
  };

  await search?.startRebuild();
  const loading: Promise<LoadedConversation>[] = [];
  let next = 0;
  const loadNext = (): void => {
    const id = ids[next];
    next += 1;
    if (id !== undefined) loading.push(loader.load(id, search !== undefined));
  };
  for (let count = 0; count < LOAD_CONCURRENCY; count += 1) loadNext();
  try {
    // Results are taken in id order whatever order the reads finish in, so the rebuild is deterministic.
    while (loading.length > 0) {
      const loaded = await (loading.shift() as Promise<LoadedConversation>);
      loadNext();
      const { conversationId, state } = loaded;
      for (const invalid of loaded.invalidEntries) report.invalidEntries.push(invalid);
      if (!state) {
        report.skipped.push({ conversationId, reason: loaded.missing ?? 'deleted or has no valid conversation entry' });
        continue;
      }
      const rootSessionId = state.conversation.rootSessionId;
      let preview = '';
      try {
        preview = await readPreview(logs, conversationPath(conversationId), rootSessionId);
      } catch (error) {
        if (!(error instanceof UnreadableStreamError)) throw error;
        // Listed without a preview, like the rest of the conversation that can be read.
        if (!loaded.invalidEntries.some((invalid) => invalid.stream === rootSessionId && invalid.seq === 0)) report.invalidEntries.push(unreadableSessionLog(conversationId, rootSessionId, error));
      }
      const value = toIndexValue(summarize(state, preview));
      records.push({ key: conversationId, value, updatedAt: state.conversation.updatedAt });
      if (hasStaleTurns(state)) stale.push(conversationId);
      report.items += loaded.items;
      report.messages += loaded.texts.length;
      pendingConversations.push({ conversationId, title: state.conversation.title, updatedAt: state.conversation.updatedAt });
      for (const text of loaded.texts) pendingMessages.push({ conversationId, text });
      if (pendingMessages.length >= SEARCH_BATCH_MESSAGES) await flush();
    }
  } finally {
    // Loads still running after a failure are awaited, so none outlives the reindex.
    await Promise.allSettled(loading);
  }
  await flush();
  await search?.finishRebuild();
  await index.deleteRange(CONVERSATION_INDEX, '', '\u{10ffff}');
  if (records.length > 0) await index.mset(CONVERSATION_INDEX, records);
  // After the rebuild, through the store: the recovery's writes update the new records.
  if (options.recoverStaleTurns ?? true) {
    for (const conversationId of stale) report.recoveredTurns += (await recoverConversation(store, conversationId)).turns;
  }
  report.conversations = records.length;
  report.durationMs = performance.now() - started;
  return report;
}

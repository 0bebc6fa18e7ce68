/**
 * Loading conversations for `reindex` (SPEC §4: the index is rebuilt from the logs): each
 * conversation's folded state and, for the search, the texts of its user and assistant
 * messages.
 */
import type { LogEntry, LogStorage } from '../storage/log-storage.js';
import { searchableText } from './conversation-search-index.js';
import type { StreamMessages } from './jsonl-file-reader.js';
import { foldMetadata, METADATA_STREAM, type ConversationState, type InvalidEntryReport } from './metadata-log.js';

/** Entries per log read of a session. */
const ITEM_READ_BATCH = 10_000;

/** One conversation as reindex needs it. */
export interface LoadedConversation {
  conversationId: string;
  /** Undefined when deleted or without a valid conversation entry. */
  state: ConversationState | undefined;
  /** Searchable texts of the sessions' messages, session by session in log order (empty unless asked for). */
  texts: string[];
  /** Session log entries read (lines, when scanned). */
  items: number;
  /** Entries left out because they did not match the schema, and session logs that could not be read. */
  invalidEntries: InvalidEntryReport[];
}

/** Loads conversations for reindex; {@link close} releases what it holds (a worker thread). */
export interface ConversationLoader {
  /** @param withMessages whether to read the session logs for the search */
  load(conversationId: string, withMessages: boolean): Promise<LoadedConversation>;
  close(): Promise<void>;
}

/** Log path of one conversation (SPEC §4 layout; the same as `conversationPath` of the store). */
function pathOf(conversationId: string): string {
  return `conversations/${conversationId}`;
}

/** Reads one session's searchable texts through the log storage; returns the entries read. */
async function readSessionTexts(logs: LogStorage, conversationId: string, sessionId: string, texts: string[]): Promise<number> {
  let items = 0;
  for (let after = 0; ; ) {
    const entries = await logs.read(pathOf(conversationId), sessionId, { after, limit: ITEM_READ_BATCH });
    items += entries.length;
    for (const entry of entries) {
      const text = searchableText(entry.value);
      if (text !== undefined) texts.push(text);
    }
    if (entries.length < ITEM_READ_BATCH) return items;
    after = (entries.at(-1) as { seq: number }).seq;
  }
}

/** Faster ways to read streams than the LogStorage; each may decline (undefined), and the LogStorage is used. */
export interface FastReads {
  /** Every valid entry of a stream, as `LogStorage.read` gives them (see `jsonl-file-reader.ts`). */
  readEntries?: (path: string, stream: string) => LogEntry[] | undefined;
  /** The messages of a session log, without parsing the other entries. */
  scanMessages?: (path: string, stream: string) => StreamMessages | undefined;
}

/**
 * Loads one conversation: its metadata log folded as the store folds it, and, when asked, its
 * sessions' messages. Streams are read with `fast` where it can, else through `logs`. A
 * session log that cannot be read (an id that is no valid stream id, an I/O error) is reported
 * and left out: it does not stop the reindex.
 * @throws Error when the metadata log cannot be read
 */
export async function loadConversationFromLogs(logs: LogStorage, conversationId: string, options: { withMessages: boolean; fast?: FastReads }): Promise<LoadedConversation> {
  const invalidEntries: InvalidEntryReport[] = [];
  const path = pathOf(conversationId);
  const entries = options.fast?.readEntries?.(path, METADATA_STREAM) ?? (await logs.read(path, METADATA_STREAM));
  const state = foldMetadata(conversationId, entries, (report) => invalidEntries.push(report));
  const loaded: LoadedConversation = { conversationId, state, texts: [], items: 0, invalidEntries };
  if (!state || !options.withMessages) return loaded;
  for (const session of state.sessions) {
    try {
      const scanned = options.fast?.scanMessages?.(path, session.id);
      if (scanned === undefined) {
        loaded.items += await readSessionTexts(logs, conversationId, session.id, loaded.texts);
        continue;
      }
      loaded.items += scanned.lines;
      for (const text of scanned.texts) loaded.texts.push(text);
    } catch (error) {
      invalidEntries.push({ conversationId, stream: session.id, seq: 0, message: `session log not readable: ${(error as Error).message}` });
    }
  }
  return loaded;
}

/** A loader reading through any LogStorage on the calling thread. */
export function createLogConversationLoader(logs: LogStorage): ConversationLoader {
  return {
    load: (conversationId, withMessages) => loadConversationFromLogs(logs, conversationId, { withMessages }),
    close: async () => undefined,
  };
}

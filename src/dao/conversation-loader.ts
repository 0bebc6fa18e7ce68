/**
 * Loading conversations for `reindex` (SPEC §4: the index is rebuilt from the logs): each
 * conversation's folded state and, for the search, the texts of its user and assistant
 * messages.
 */
import { UnreadableStreamError, type LogEntry, type LogStorage } from '../storage/log-storage.js';
import { searchableText } from './conversation-search-index.js';
import type { StreamMessages } from './jsonl-file-reader.js';
import { describeStream, type StreamLocator } from './log-damage.js';
import { endsDeleted, foldMetadata, METADATA_STREAM, type ConversationState, type InvalidEntryReport } from './metadata-log.js';

/** Entries per log read of a session. */
const ITEM_READ_BATCH = 10_000;

/** One conversation as reindex needs it. */
export interface LoadedConversation {
  conversationId: string;
  /** Undefined when deleted or without a valid conversation entry. */
  state: ConversationState | undefined;
  /** Why `state` is undefined, in words: deleted, no valid conversation entry in the metadata log (naming it), or the log cannot be read. */
  missing?: string;
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
  /** Where a stream is stored, for messages (default {@link describeStream}). */
  locate?: StreamLocator;
  /** Every valid entry of a stream, as `LogStorage.read` gives them (see `jsonl-file-reader.ts`). */
  readEntries?: (path: string, stream: string) => LogEntry[] | undefined;
  /** The messages of a session log, without parsing the other entries. */
  scanMessages?: (path: string, stream: string) => StreamMessages | undefined;
}

/**
 * Loads one conversation: its metadata log folded as the store folds it, and, when asked, its
 * sessions' messages. Streams are read with `fast` where it can, else through `logs`. A
 * session log that cannot be read (an id that is no valid stream id, a file that is no log
 * file, an I/O error) is reported and left out; a metadata log that cannot be read leaves the
 * conversation out, saying why in `missing`: neither stops the reindex.
 * @throws Error when reading the metadata log fails for another reason than the log itself
 */
export async function loadConversationFromLogs(logs: LogStorage, conversationId: string, options: { withMessages: boolean; fast?: FastReads }): Promise<LoadedConversation> {
  const invalidEntries: InvalidEntryReport[] = [];
  const path = pathOf(conversationId);
  let entries: LogEntry[];
  try {
    entries = options.fast?.readEntries?.(path, METADATA_STREAM) ?? (await logs.read(path, METADATA_STREAM));
  } catch (error) {
    if (!(error instanceof UnreadableStreamError)) throw error;
    return { conversationId, state: undefined, missing: error.message, texts: [], items: 0, invalidEntries };
  }
  const state = foldMetadata(conversationId, entries, (report) => invalidEntries.push(report));
  const loaded: LoadedConversation = { conversationId, state, texts: [], items: 0, invalidEntries };
  if (!state) {
    const locate = options.fast?.locate ?? describeStream;
    if (endsDeleted(entries)) loaded.missing = 'deleted';
    else if ((await logs.listStreams(path)).includes(METADATA_STREAM)) loaded.missing = `its metadata log ${locate(path, METADATA_STREAM)} holds no valid conversation entry`;
    else loaded.missing = 'it has no metadata log';
    return loaded;
  }
  if (!options.withMessages) return loaded;
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
      invalidEntries.push(unreadableSessionLog(conversationId, session.id, error));
    }
  }
  return loaded;
}

/** The report of a session log that could not be read (seq 0: no entry of it was read). */
export function unreadableSessionLog(conversationId: string, sessionId: string, error: unknown): InvalidEntryReport {
  return { conversationId, stream: sessionId, seq: 0, message: `session log not readable: ${(error as Error).message}` };
}

/**
 * A loader reading through any LogStorage on the calling thread.
 * @param locate names where a stream is stored, for messages (default {@link describeStream})
 */
export function createLogConversationLoader(logs: LogStorage, locate: StreamLocator = describeStream): ConversationLoader {
  return {
    load: (conversationId, withMessages) => loadConversationFromLogs(logs, conversationId, { withMessages, fast: { locate } }),
    close: async () => undefined,
  };
}

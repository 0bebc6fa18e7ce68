/**
 * Whole-conversation reads and writes for export and import (docs/storage.md, "Export and
 * import"): every stream of a conversation as stored, and writing an archived conversation
 * back with its index record and search entries, all or nothing.
 */
import type { LogEntry, LogStorage } from '../storage/log-storage.js';
import { compareKeys } from '../storage/record-validation.js';
import type { ConversationIndexRecords } from './conversation-index-records.js';
import type { ConversationSearchIndex, SearchMessage } from './conversation-search-index.js';
import { METADATA_STREAM, type ConversationState } from './metadata-log.js';
import type { MetadataStateCache } from './metadata-state-cache.js';

/** A conversation id that already has logs (`importConversation`). */
export class ConversationExistsError extends Error {
  constructor(readonly conversationId: string) {
    super(`conversation ${conversationId} already exists`);
    this.name = 'ConversationExistsError';
  }
}

/** What writing an imported conversation needs of the conversation store. */
export interface ConversationImportTarget {
  logs: LogStorage;
  records: ConversationIndexRecords;
  search: ConversationSearchIndex | undefined;
  metadataStates: MetadataStateCache;
  /** Folds the conversation's metadata log; undefined when it folds to no conversation. */
  loadConversation(conversationId: string): Promise<ConversationState | undefined>;
  /** The search entries of the given sessions' messages. */
  searchableMessages(conversationId: string, sessionIds: string[]): Promise<SearchMessage[]>;
}

const ignore = (): void => undefined;

/**
 * Every stream under a conversation's log path as stored (values unchecked, seqs kept),
 * `metadata` first, then by code point order of the stream name.
 * @param sessionIds streams read even when the storage does not list them (the file storage
 *   lists regular files only), so a session log that cannot be read fails the read rather
 *   than being left out; such a stream without entries is left out
 * @returns undefined when the conversation has no metadata log
 * @throws UnreadableStreamError when one of the streams cannot be read
 */
export async function readConversationStreams(logs: LogStorage, path: string, sessionIds: string[] = []): Promise<{ stream: string; entries: LogEntry[] }[] | undefined> {
  if ((await logs.lastSeq(path, METADATA_STREAM)) === 0) return undefined;
  const listed = await logs.listStreams(path);
  const names = [...new Set([...listed, ...sessionIds])].sort((left, right) => (left === METADATA_STREAM ? -1 : right === METADATA_STREAM ? 1 : compareKeys(left, right)));
  const streams = await Promise.all(names.map(async (stream) => ({ stream, entries: await logs.read(path, stream) })));
  return streams.filter(({ stream, entries }) => entries.length > 0 || listed.includes(stream));
}

/**
 * Writes a whole conversation whose id has no logs yet: the session streams first, then the
 * metadata stream in one append (until it is written, the path folds to nothing and is never
 * listed), then the index record and the search entries. On any failure everything written
 * is removed again.
 * @param path the conversation's log path
 * @throws Error when the metadata does not fold to this conversation, or a write fails
 */
export async function writeImportedConversation(
  target: ConversationImportTarget,
  conversationId: string,
  path: string,
  streams: { stream: string; values: unknown[] }[],
): Promise<ConversationState> {
  const { logs, records, search, metadataStates } = target;
  const metadata = streams.find((stream) => stream.stream === METADATA_STREAM);
  try {
    for (const { stream, values } of streams) if (stream !== METADATA_STREAM && values.length > 0) await logs.append(path, stream, values);
    await logs.append(path, METADATA_STREAM, metadata?.values ?? []);
    const state = await target.loadConversation(conversationId);
    if (!state) throw new Error(`the metadata entries of conversation ${conversationId} do not fold to a conversation (no conversation entry, or a deletion)`);
    metadataStates.remember(conversationId, state);
    await records.write(state, 'created');
    if (search) {
      await search.setConversations([{ conversationId, title: state.conversation.title, updatedAt: state.conversation.updatedAt }]);
      await search.addMessages(await target.searchableMessages(conversationId, state.sessions.map((session) => session.id)));
    }
    return state;
  } catch (error) {
    metadataStates.forget(conversationId);
    await logs.deletePath(path).catch(ignore);
    await records.remove(conversationId).catch(ignore);
    await search?.removeConversation(conversationId).catch(ignore);
    throw error;
  }
}

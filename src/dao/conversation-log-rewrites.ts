/**
 * The two writes that take entries out of a conversation's logs (docs/storage.md, "Rewind"
 * and "Deleted conversations"): cutting a session's log after a seq, and deleting a durable
 * conversation by a deletion entry followed by the move of its streams to the trash. Both go
 * through `LogStorage.replaceStream`, so a crash leaves either the old or the new stream,
 * never a mix.
 */
import type { ConversationSummary } from '../protocol/index.js';
import { UnreadableStreamError, type LogStorage } from '../storage/log-storage.js';
import { summarize, type ConversationIndexRecords } from './conversation-index-records.js';
import type { ConversationSearchIndex, SearchMessage } from './conversation-search-index.js';
import { METADATA_STREAM, type ConversationState, type MetadataEntry } from './metadata-log.js';

/** Log path of deleted conversations (`trash/<conversation-id>`, docs/storage.md). */
export const TRASH_PATH = 'trash';

/** What the rewrites need of the conversation store. */
export interface LogRewriteTarget {
  logs: LogStorage;
  records: ConversationIndexRecords;
  /** Folds the conversation's metadata log; undefined when it folds to no conversation. */
  loadConversation(conversationId: string): Promise<ConversationState | undefined>;
  /** Appends metadata entries, then updates the index record and the search; returns the last seq. */
  appendMetadata(conversationId: string, entries: MetadataEntry[]): Promise<number>;
  /** The search entries of the given sessions' messages. */
  searchableMessages(conversationId: string, sessionIds: string[]): Promise<SearchMessage[]>;
}

/**
 * Cuts a session's log after `afterSeq`, keeping the entries up to it as stored (seq numbers
 * unchanged), then drops the cached preview and, with a search, rebuilds the conversation's
 * search entries from its logs. The caller runs it in the conversation's write queue.
 * @param path the conversation's log path
 * @param search the search that holds the conversation (the staged one while it is staged)
 * @returns how many entries were dropped (0 when the log ends at or before `afterSeq`)
 * @throws Error when the log cannot be read or replaced; the old log is then intact
 */
export async function cutSessionLog(
  target: LogRewriteTarget,
  search: ConversationSearchIndex | undefined,
  conversationId: string,
  path: string,
  sessionId: string,
  afterSeq: number,
): Promise<number> {
  const { logs } = target;
  const last = await logs.lastSeq(path, sessionId);
  if (last <= afterSeq) return 0;
  const kept = await logs.read(path, sessionId, { before: afterSeq + 1 });
  await logs.replaceStream(path, sessionId, kept.map((entry) => entry.value));
  target.records.forgetPreview(conversationId);
  const state = await target.loadConversation(conversationId);
  if (search && state) {
    await search.removeConversation(conversationId);
    await search.setConversations([{ conversationId, title: state.conversation.title, updatedAt: state.conversation.updatedAt }]);
    await search.addMessages(await target.searchableMessages(conversationId, state.sessions.map((session) => session.id)));
  }
  return last - afterSeq;
}

/**
 * Deletes a conversation that is not staged (SPEC §4: deletions are entries): appends a
 * `conversation_deleted` entry to its metadata log (which removes its index record and
 * search entry), then copies its streams to `trash/<id>` and deletes its log path. A move
 * cut short by a crash is finished by the next call for the same id.
 * @param path the conversation's log path
 * @param deletedAt the time of the deletion, in ms since the epoch
 * @returns its last summary, or undefined when it does not exist or was deleted already
 * @throws UnreadableStreamError when one of its logs cannot be read; nothing is written then
 * @throws Error when a write fails; the deletion entry, once written, stands
 */
export async function deleteDurableConversation(target: LogRewriteTarget, conversationId: string, path: string, deletedAt: number): Promise<ConversationSummary | undefined> {
  const { logs } = target;
  const state = await target.loadConversation(conversationId);
  const previous = await target.records.summaryOf(conversationId);
  // Every log is opened before the deletion entry is written: one that cannot be read would
  // stop the move half done, or (not being a regular file, so never listed) be removed unread.
  // Other errors say nothing about the files to move (a session id that is no stream id has none).
  for (const stream of new Set([...(await logs.listStreams(path)), ...(state?.sessions.map((session) => session.id) ?? [])])) {
    await logs.lastSeq(path, stream).catch((error: unknown) => {
      if (error instanceof UnreadableStreamError) throw error;
    });
  }
  if (state) {
    await target.appendMetadata(conversationId, [{ type: 'conversation_deleted', conversationId, deletedAt }]);
  } else if ((await logs.lastSeq(path, METADATA_STREAM)) === 0) {
    return undefined;
  }
  const trash = `${TRASH_PATH}/${conversationId}`;
  for (const stream of await logs.listStreams(path)) {
    const entries = await logs.read(path, stream);
    await logs.replaceStream(trash, stream, entries.map((entry) => entry.value));
  }
  await logs.deletePath(path);
  if (!state) return undefined;
  return previous ?? summarize(state, '');
}

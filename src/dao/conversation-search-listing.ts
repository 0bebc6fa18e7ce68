/**
 * The search side of the conversation store (docs/storage.md, "Conversation search"): one page
 * of a query listing, merged from the durable search and the in-memory search of staged
 * conversations, and the searchable messages read back from a conversation's logs when its
 * search entries are written again.
 */
import type { ConversationSummary } from '../protocol/index.js';
import type { LogStorage } from '../storage/log-storage.js';
import { compareKeys, encodeRecordCursor } from '../storage/record-validation.js';
import type { ConversationIndexRecords } from './conversation-index-records.js';
import type { ConversationFilters } from './conversation-listing.js';
import { searchableText, type ConversationSearchIndex, type SearchMatch, type SearchMessage } from './conversation-search-index.js';

/** Items read per log read when collecting a session's searchable messages. */
const MESSAGE_READ_BATCH = 10_000;

/**
 * The searchable texts (user and assistant messages) of the given sessions, read from the
 * logs in order. Entries of other kinds or unexpected shapes are skipped without a schema
 * check (see {@link searchableText}).
 * @param path the conversation's log path
 */
export async function readSearchableMessages(logs: LogStorage, path: string, conversationId: string, sessionIds: string[]): Promise<SearchMessage[]> {
  const messages: SearchMessage[] = [];
  for (const sessionId of sessionIds) {
    for (let after = 0; ; ) {
      const entries = await logs.read(path, sessionId, { after, limit: MESSAGE_READ_BATCH });
      for (const entry of entries) {
        const text = searchableText(entry.value);
        if (text !== undefined) messages.push({ conversationId, text });
      }
      if (entries.length < MESSAGE_READ_BATCH) break;
      after = (entries.at(-1) as { seq: number }).seq;
    }
  }
  return messages;
}

/**
 * One page of the conversations matching `query`, most recently updated first (ties by id),
 * with the summaries of the index records. Each search gives its own page; a conversation
 * found in several keeps the match of the last search given. The cursor has the record
 * cursor format of the `updated` listing, so both kinds of listing continue each other.
 * @param searches the durable search, then the in-memory search of staged conversations (when any)
 * @param limit most conversations on the page
 * @throws InvalidSearchQueryError for an empty query or a query syntax error
 * @throws Error for a bad cursor
 */
export async function searchConversationPage(
  searches: ConversationSearchIndex[],
  records: Pick<ConversationIndexRecords, 'summariesOf'>,
  query: string,
  limit: number,
  cursor: string | undefined,
  filters: ConversationFilters,
): Promise<{ conversations: ConversationSummary[]; nextCursor?: string }> {
  const searchOptions = { limit, ...(cursor ? { cursor } : {}) };
  const pages = await Promise.all(searches.map((search) => search.search(query, searchOptions)));
  const byId = new Map<string, SearchMatch>();
  for (const match of pages.flatMap((page) => page.matches)) byId.set(match.conversationId, match);
  const merged = [...byId.values()].sort((left, right) => right.updatedAt - left.updatedAt || compareKeys(right.conversationId, left.conversationId));
  const matches = merged.slice(0, limit);
  // Filters apply to the page found (a page may come out short; its cursor still continues the search).
  const conversations = await records.summariesOf(matches.map((match) => match.conversationId), filters);
  const more = merged.length > limit || pages.some((page) => page.nextCursor !== undefined);
  const last = matches.at(-1);
  const nextCursor = more && last ? encodeRecordCursor({ orderBy: 'updatedAt', order: 'desc', key: last.conversationId, updatedAt: last.updatedAt }) : undefined;
  return { conversations, ...(nextCursor ? { nextCursor } : {}) };
}

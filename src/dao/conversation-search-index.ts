/**
 * Conversation search (SPEC §4: `metadata.db` is the index for listing and search). The
 * RecordStorage contract has no full-text search, so search is a separate small interface,
 * maintained by the dao next to the listing index and rebuilt by `reindex`. Like the listing
 * index it is never the source of truth.
 */

/** What the search knows of a conversation besides its messages. */
export interface SearchConversationEntry {
  conversationId: string;
  /** Searchable title. */
  title: string;
  /** Update time of the conversation (ms since the epoch); results are ordered by it. */
  updatedAt: number;
}

/** One searchable text of a conversation (a user or assistant message). */
export interface SearchMessage {
  conversationId: string;
  text: string;
}

/** A conversation that matched a query. */
export interface SearchMatch {
  conversationId: string;
  /** The conversation's update time as the search index knows it, ms since the epoch. */
  updatedAt: number;
}

/** Options of {@link ConversationSearchIndex.search}. */
export interface SearchOptions {
  /** Page size, integer >= 1; default 50. */
  limit?: number;
  /**
   * Cursor of the previous page (`nextCursor`). Same format as the listing cursor of the
   * conversation index (`orderBy: updatedAt`, `order: desc`), so either continues the other.
   */
  cursor?: string;
}

/** One page of matches, most recently updated first (ties by conversation id, descending). */
export interface SearchPage {
  matches: SearchMatch[];
  /** Present when more matches may follow. */
  nextCursor?: string;
}

/**
 * Full-text search over conversations: a conversation matches when its title or one of its
 * messages matches the query. Matching is ranking-agnostic: pages are ordered by update time,
 * like the plain listing.
 */
export interface ConversationSearchIndex {
  /** Inserts or updates conversations (title, update time). Atomic for the batch. */
  setConversations(entries: SearchConversationEntry[]): Promise<void>;

  /**
   * Adds messages. Each call adds new documents (the caller adds each message once). A
   * conversation not yet known is created with an empty title and update time 0.
   */
  addMessages(messages: SearchMessage[]): Promise<void>;

  /** Removes a conversation with its title and messages; unknown ids are ignored. */
  removeConversation(conversationId: string): Promise<void>;

  /**
   * Removes everything and prepares for loading many entries at once (`reindex`); call
   * {@link finishRebuild} afterwards. The index stays usable meanwhile.
   */
  startRebuild(): Promise<void>;

  /** Ends what {@link startRebuild} began: the index is tuned for live updates again. */
  finishRebuild(): Promise<void>;

  /**
   * One page of the conversations matching `query`.
   * @throws InvalidSearchQueryError when the query is empty or not valid query syntax
   * @throws Error naming the option for a bad limit or cursor
   */
  search(query: string, options?: SearchOptions): Promise<SearchPage>;

  /** Releases the database if the index opened it. */
  close(): Promise<void>;
}

/** A search query the index cannot run (empty, or a syntax error); the message says why. */
export class InvalidSearchQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSearchQueryError';
  }
}

/**
 * The searchable text of a stored item value: the text parts of a `user_message`, the text
 * of an `assistant_message`, undefined for every other kind (SPEC §3 item kinds) and for a
 * `user_message` with status `failed` (a prompt a `user_prompt_submit` hook refused, as logs
 * written before refused prompts were left out still hold them). Checks
 * only the fields it reads instead of validating the whole item, so `reindex` can call it on
 * every stored line cheaply; anything of an unexpected shape yields undefined.
 */
export function searchableText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const item = value as { kind?: unknown; text?: unknown; content?: unknown; status?: unknown };
  if (item.kind === 'assistant_message') return typeof item.text === 'string' && item.text !== '' ? item.text : undefined;
  if (item.kind !== 'user_message' || !Array.isArray(item.content) || item.status === 'failed') return undefined;
  const texts: string[] = [];
  for (const part of item.content as unknown[]) {
    const text = (part as { type?: unknown; text?: unknown } | null)?.text;
    if ((part as { type?: unknown } | null)?.type === 'text' && typeof text === 'string' && text !== '') texts.push(text);
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/**
 * A query that breaks the syntax, said the same way by both backends: where (near a token, or
 * at its end) and what the rules are, rather than the database's bare "syntax error".
 * @param near the token the error is at; undefined or empty at the end of the query
 */
export function querySyntaxProblem(near: string | undefined): string {
  const where = near === undefined || near === '' ? 'at its end' : `near "${near}"`;
  return `the query is not valid ${where}: AND, OR and NOT need a word on each side (fruit NOT apples), and parentheses must pair up`;
}

/** The hint appended to every query error, on both backends. */
export const QUERY_SYNTAX_HINT = 'query syntax: words, "quoted phrases", prefix*, AND, OR, NOT, parentheses; a word with punctuation (hello-world, file.ts) is searched as a phrase';

/**
 * The query both backends run: {@link quoteWordsWithPunctuation} of what the user typed.
 * @throws InvalidSearchQueryError when the query is empty or holds no word (only punctuation)
 */
export function searchableQuery(query: string): string {
  if (typeof query !== 'string' || query.trim() === '') throw new InvalidSearchQueryError(`the query is empty (${QUERY_SYNTAX_HINT})`);
  const quoted = quoteWordsWithPunctuation(query);
  // Only separators and quotes left (`*`, `((`, `""`): nothing a search could match.
  if (![...quoted].some((character) => WORD_CHARACTER.test(character))) throw new InvalidSearchQueryError(`the query holds no word to search for (${QUERY_SYNTAX_HINT})`);
  return quoted;
}

/** A letter, a digit or `_`, or any character beyond ASCII: what FTS5 reads as part of a bare word. */
const WORD_CHARACTER = /[\p{L}\p{N}_]|[^\p{ASCII}]/u;

/**
 * Quotes the words of a query that hold punctuation, so `hello-world`, `file.ts`, `src/app` or
 * `key:value` are searched as phrases of their parts (as the index split them when it stored
 * the text) instead of being read as query syntax (FTS5 reads `a-b` as a column filter and
 * fails with "no such column: b"). Words end at white space, parentheses and `*`, which are
 * kept as they are (so `AND(a OR b)` and `alpha*` mean what they meant), as are quoted phrases
 * and the operators AND, OR, NOT; a piece of punctuation standing alone is dropped, since it
 * holds nothing searchable. Used by both search backends, so a query means the same on each.
 * @param query the query as the user typed it
 * @returns the query with those words in double quotes
 */
export function quoteWordsWithPunctuation(query: string): string {
  let result = '';
  let index = 0;
  while (index < query.length) {
    const character = query[index] as string;
    if (character === '"') {
      // A quoted phrase goes through as it is ("" inside it is a quote).
      let end = index + 1;
      while (end < query.length && (query[end] !== '"' || query[end + 1] === '"')) end += query[end] === '"' ? 2 : 1;
      result += query.slice(index, end + 1);
      index = end + 1;
      continue;
    }
    if (SEPARATOR.test(character)) {
      result += character;
      index += 1;
      continue;
    }
    let end = index;
    while (end < query.length && !SEPARATOR.test(query[end] as string) && query[end] !== '"') end += 1;
    const word = query.slice(index, end);
    const characters = [...word];
    if (characters.every((part) => WORD_CHARACTER.test(part))) result += word;
    else if (characters.some((part) => WORD_CHARACTER.test(part))) result += query[end] === '"' ? `"${word}" ` : `"${word}"`;
    index = end;
  }
  return result;
}

/** What ends a word of a query outside quotes: white space, parentheses, and `*` (a prefix mark, which stays after its word). */
const SEPARATOR = /[\s()*]/;

/**
 * Conversation search on SQLite FTS5 (SPEC §4: `metadata.db` holds listing and search), in
 * the same database file as the conversation index. Rebuildable by `reindex`, like the rest
 * of `metadata.db`.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { resolveSqliteDatabase, type SqliteDatabase, type SqliteDatabaseSource } from '../storage/sqlite/sqlite-database.js';
import { decodeRecordCursor, encodeRecordCursor } from '../storage/record-validation.js';
import { indexedText, searchDocumentPieces } from './search-document-pieces.js';
import {
  InvalidSearchQueryError,
  QUERY_SYNTAX_HINT,
  querySyntaxProblem,
  searchableQuery,
  type ConversationSearchIndex,
  type SearchConversationEntry,
  type SearchMatch,
  type SearchMessage,
  type SearchOptions,
  type SearchPage,
} from './conversation-search-index.js';

type Statement = BetterSqlite3.Statement<unknown[], unknown>;

/** Default page size of {@link SqliteConversationSearchIndex.search}. */
export const DEFAULT_SEARCH_LIMIT = 50;

/**
 * Documents per conversation: a document's FTS rowid is `number << 32 | ordinal` (ordinal 0 is
 * the title), so one range delete removes a conversation and a match maps to its
 * conversation by a shift, without a mapping table.
 */
const MAXIMUM_ORDINAL = 2 ** 32 - 1;

/** Bound of the FTS5 pending-terms hash during a rebuild, bytes (see {@link SqliteConversationSearchIndex.startRebuild}). */
const FTS_REBUILD_HASH_BYTES = 64 * 1024 * 1024;

/** FTS5's default bound of the pending-terms hash, bytes (`hashsize`), kept outside a rebuild. */
const FTS_DEFAULT_HASH_BYTES = 1024 * 1024;

/** FTS5's default `automerge` (segments of one level merged at a time). */
const FTS_DEFAULT_AUTOMERGE = 4;

/** Namespace named in cursor errors: search cursors are conversation listing cursors. */
const CURSOR_NAMESPACE = 'conversations';

/** SQLite error messages that mean the MATCH expression itself is wrong. */
const QUERY_ERROR_PATTERN = /^(fts5: |no such column|unterminated string|unknown special query)/;

/**
 * FTS5's query errors in the user's terms: its syntax errors name only a token
 * (`fts5: syntax error near ""`), so they are said as what is missing.
 */
function describeQueryError(message: string): string {
  const near = /^fts5: syntax error near "(.*)"$/.exec(message);
  return near ? querySyntaxProblem(near[1]) : message;
}


const SCHEMA = `
CREATE TABLE IF NOT EXISTS conversation_search (
  number INTEGER PRIMARY KEY,
  conversation_id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  next_ordinal INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_search__updated ON conversation_search (updated_at, conversation_id);
CREATE VIRTUAL TABLE IF NOT EXISTS conversation_search_text USING fts5(
  body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
`;

interface ConversationRow {
  number: number;
  title: string;
  next_ordinal: number;
}

function checkConversationId(where: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${where}: conversationId must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * {@link ConversationSearchIndex} on an FTS5 table (`conversation_search_text`, contentless:
 * the text is in the logs, the index keeps only what matching needs) plus a table of
 * conversations (`conversation_search`: id, title, update time, next document ordinal).
 * The title is document 0 of its conversation and is replaced when it changes; each message
 * is one more document. Queries use FTS5 syntax; results are ordered by update time (newest
 * first), not by rank, and paged with keyset cursors like the listing.
 */
export class SqliteConversationSearchIndex implements ConversationSearchIndex {
  private readonly database: SqliteDatabase;
  private readonly owned: boolean;
  private readonly statements = new Map<string, Statement>();
  private closed = false;
  /** True when this open created the search tables (an older `metadata.db` needs a reindex to fill them). */
  readonly createdTables: boolean;

  /**
   * @param source an open database (left open by `close`; shared with the conversation index
   *   in `metadata.db`) or a file path / `':memory:'` (opened here and closed by `close`).
   * @throws Error when the database cannot be opened or lacks FTS5.
   */
  constructor(source: SqliteDatabaseSource) {
    ({ database: this.database, owned: this.owned } = resolveSqliteDatabase(source));
    const existing = this.database.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'conversation_search'").get();
    this.createdTables = existing === undefined;
    this.database.exec(SCHEMA);
    // Databases written before the bound was raised only during rebuilds kept it raised.
    if (!this.createdTables && this.ftsOption('hashsize') === FTS_REBUILD_HASH_BYTES && this.ftsOption('automerge') !== 0) {
      this.setFtsOption('hashsize', FTS_DEFAULT_HASH_BYTES);
    }
  }

  /** See {@link ConversationSearchIndex.setConversations}. @throws Error naming the entry for bad input (nothing is written). */
  async setConversations(entries: SearchConversationEntry[]): Promise<void> {
    this.checkOpen();
    if (!Array.isArray(entries)) throw new Error('setConversations needs an array of entries');
    entries.forEach((entry, index) => {
      checkConversationId(`setConversations entry ${index}`, entry?.conversationId);
      if (typeof entry.title !== 'string') throw new Error(`setConversations entry ${index}: title must be a string`);
      if (!Number.isSafeInteger(entry.updatedAt) || entry.updatedAt < 0) {
        throw new Error(`setConversations entry ${index}: updatedAt must be an integer number of ms >= 0, got ${String(entry.updatedAt)}`);
      }
    });
    const select = this.statement('SELECT number, title, next_ordinal FROM conversation_search WHERE conversation_id = ?');
    const insert = this.statement('INSERT INTO conversation_search (conversation_id, title, updated_at, next_ordinal) VALUES (?, ?, ?, 1)');
    const update = this.statement('UPDATE conversation_search SET title = ?, updated_at = ? WHERE number = ?');
    const insertText = this.statement('INSERT INTO conversation_search_text (rowid, body) VALUES ((? << 32) + ?, ?)');
    const deleteText = this.statement('DELETE FROM conversation_search_text WHERE rowid = (? << 32) + ?');
    this.database.transaction(() => {
      for (const entry of entries) {
        const row = select.get(entry.conversationId) as ConversationRow | undefined;
        if (row === undefined) {
          const number = Number(insert.run(entry.conversationId, entry.title, entry.updatedAt).lastInsertRowid);
          if (entry.title !== '') insertText.run(number, 0, indexedText(entry.title));
          continue;
        }
        if (row.title !== entry.title) {
          if (row.title !== '') deleteText.run(row.number, 0);
          if (entry.title !== '') insertText.run(row.number, 0, indexedText(entry.title));
        }
        update.run(entry.title, entry.updatedAt, row.number);
      }
    })();
  }

  /** See {@link ConversationSearchIndex.addMessages}: one transaction. @throws Error naming the message for bad input (nothing is written). */
  async addMessages(messages: SearchMessage[]): Promise<void> {
    this.checkOpen();
    if (!Array.isArray(messages)) throw new Error('addMessages needs an array of messages');
    messages.forEach((message, index) => {
      checkConversationId(`addMessages message ${index}`, message?.conversationId);
      if (typeof message.text !== 'string') throw new Error(`addMessages message ${index}: text must be a string`);
    });
    if (messages.length === 0) return;
    const select = this.statement('SELECT number, title, next_ordinal FROM conversation_search WHERE conversation_id = ?');
    const insert = this.statement("INSERT INTO conversation_search (conversation_id, title, updated_at, next_ordinal) VALUES (?, '', 0, 1)");
    const advance = this.statement('UPDATE conversation_search SET next_ordinal = ? WHERE number = ?');
    const insertText = this.statement('INSERT INTO conversation_search_text (rowid, body) VALUES ((? << 32) + ?, ?)');
    this.database.transaction(() => {
      const next = new Map<string, { number: number; ordinal: number }>();
      for (const message of messages) {
        let position = next.get(message.conversationId);
        if (position === undefined) {
          const row = select.get(message.conversationId) as ConversationRow | undefined;
          position = row ? { number: row.number, ordinal: row.next_ordinal } : { number: Number(insert.run(message.conversationId).lastInsertRowid), ordinal: 1 };
          next.set(message.conversationId, position);
        }
        // A long message is several documents, so that FTS5 can flush its pending terms between them.
        for (const piece of searchDocumentPieces(indexedText(message.text))) {
          if (position.ordinal > MAXIMUM_ORDINAL) throw new Error(`addMessages: conversation ${message.conversationId} has reached ${MAXIMUM_ORDINAL} search documents`);
          insertText.run(position.number, position.ordinal, piece);
          position.ordinal += 1;
        }
      }
      for (const position of next.values()) advance.run(position.ordinal, position.number);
    })();
  }

  /** See {@link ConversationSearchIndex.removeConversation}. */
  async removeConversation(conversationId: string): Promise<void> {
    this.checkOpen();
    checkConversationId('removeConversation', conversationId);
    const row = this.statement('SELECT number FROM conversation_search WHERE conversation_id = ?').get(conversationId) as { number: number } | undefined;
    if (row === undefined) return;
    this.database.transaction(() => {
      this.statement('DELETE FROM conversation_search_text WHERE rowid >= (? << 32) AND rowid < ((? + 1) << 32)').run(row.number, row.number);
      this.statement('DELETE FROM conversation_search WHERE number = ?').run(row.number);
    })();
  }

  /**
   * See {@link ConversationSearchIndex.startRebuild}. Also turns FTS5's automatic merging of
   * segments off: a rebuild writes a few large segments, and merging them as they come costs
   * about a fifth of the rebuild. (Should the rebuild never finish, FTS5 still merges once a
   * level holds `crisismerge` segments, so the segment count stays bounded.) And pending terms
   * may grow to {@link FTS_REBUILD_HASH_BYTES} before they are flushed to a segment (1 MiB
   * otherwise): fewer, larger segments, less merge work. Outside a rebuild the default bound
   * keeps the hash, whose memory FTS5 keeps, small.
   */
  async startRebuild(): Promise<void> {
    this.checkOpen();
    this.database.transaction(() => {
      this.database.exec("INSERT INTO conversation_search_text (conversation_search_text) VALUES ('delete-all')");
      this.database.exec('DELETE FROM conversation_search');
      this.setFtsOption('automerge', 0);
      this.setFtsOption('hashsize', FTS_REBUILD_HASH_BYTES);
    })();
  }

  /** See {@link ConversationSearchIndex.finishRebuild}: automatic merging and the pending-terms bound back to FTS5's defaults. */
  async finishRebuild(): Promise<void> {
    this.checkOpen();
    this.database.transaction(() => {
      this.setFtsOption('automerge', FTS_DEFAULT_AUTOMERGE);
      this.setFtsOption('hashsize', FTS_DEFAULT_HASH_BYTES);
    })();
  }

  /** See {@link ConversationSearchIndex.search}. */
  async search(query: string, options: SearchOptions = {}): Promise<SearchPage> {
    this.checkOpen();
    query = searchableQuery(query);
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`Invalid search option limit ${String(limit)}: must be an integer >= 1`);
    const cursor = options.cursor === undefined ? undefined : decodeRecordCursor(CURSOR_NAMESPACE, options.cursor, 'updatedAt', 'desc');
    const matching = 'c.number IN (SELECT rowid >> 32 FROM conversation_search_text WHERE conversation_search_text MATCH ?)';
    const after = cursor === undefined ? '' : 'AND (c.updated_at < ? OR (c.updated_at = ? AND c.conversation_id < ?))';
    const sql = `SELECT c.conversation_id AS conversationId, c.updated_at AS updatedAt FROM conversation_search c WHERE ${matching} ${after} ORDER BY c.updated_at DESC, c.conversation_id DESC LIMIT ?`;
    const parameters = cursor === undefined ? [query, limit + 1] : [query, cursor.updatedAt, cursor.updatedAt, cursor.key, limit + 1];
    let rows: SearchMatch[];
    try {
      rows = this.statement(sql).all(...parameters) as SearchMatch[];
    } catch (error) {
      const { code, message } = error as { code?: unknown; message?: string };
      if (code === 'SQLITE_ERROR' && QUERY_ERROR_PATTERN.test(message ?? '')) throw new InvalidSearchQueryError(`${describeQueryError(message ?? '')} (${QUERY_SYNTAX_HINT})`);
      throw error;
    }
    const matches = rows.slice(0, limit);
    const page: SearchPage = { matches };
    const last = matches.at(-1);
    if (rows.length > limit && last !== undefined) {
      page.nextCursor = encodeRecordCursor({ orderBy: 'updatedAt', order: 'desc', key: last.conversationId, updatedAt: last.updatedAt });
    }
    return page;
  }

  /** Closes the database if this index opened it. Later calls throw. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.statements.clear();
    if (this.owned) this.database.close();
  }

  /** An FTS5 option as stored in the table's config table, or undefined when never set (FTS5's default applies). */
  private ftsOption(name: 'automerge' | 'hashsize'): unknown {
    const row = this.database.prepare('SELECT v FROM conversation_search_text_config WHERE k = ?').get(name) as { v: unknown } | undefined;
    return row?.v;
  }

  private setFtsOption(name: 'automerge' | 'hashsize', value: number): void {
    // Written as literals: FTS5 wants an SQL integer, and bound JS numbers arrive as reals.
    if (!Number.isSafeInteger(value)) throw new Error(`FTS5 option ${name} must be an integer, got ${value}`);
    this.database.exec(`INSERT INTO conversation_search_text (conversation_search_text, rank) VALUES ('${name}', ${value})`);
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('SqliteConversationSearchIndex is closed');
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/**
 * Conversation search on PostgreSQL full-text search (`tsvector`, GIN index), for servers
 * that keep their index in PostgreSQL. Same interface, query syntax and ordering as the SQLite
 * FTS5 backend; rebuildable by `reindex` like it.
 */
import type { PostgresDatabase } from '../storage/postgres/postgres-database.js';
import { decodeRecordCursor, encodeRecordCursor } from '../storage/record-validation.js';
import type { ConversationSearchIndex, SearchConversationEntry, SearchMessage, SearchOptions, SearchPage } from './conversation-search-index.js';
import { InvalidSearchQueryError, QUERY_SYNTAX_HINT, searchableQuery } from './conversation-search-index.js';
import { translateSearchQuery } from './tsquery-translation.js';
import { indexedText, searchDocumentPieces } from './search-document-pieces.js';

/** Default page size of {@link PostgresConversationSearchIndex.search}. */
export const DEFAULT_POSTGRES_SEARCH_LIMIT = 50;

/** Namespace named in cursor errors: search cursors are conversation listing cursors. */
const CURSOR_NAMESPACE = 'conversations';

/** PostgreSQL's SQLSTATE for a syntax error (a tsquery the text search parser rejects). */
const SYNTAX_ERROR = '42601';

function checkConversationId(where: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${where}: conversationId must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * {@link ConversationSearchIndex} on two tables (migration 2): `conversation_search`
 * (id, title, update time, next document ordinal) and `conversation_search_text`
 * (id, ordinal, `tsvector` body; ordinal 0 is the title). Only the vectors are kept: the text
 * is in the logs. Documents go through the `simple` configuration (lower case, no stemming, no
 * stop words) and, when the `unaccent` extension is installed, lose their diacritics.
 */
export class PostgresConversationSearchIndex implements ConversationSearchIndex {
  private normalizerPromise: Promise<string> | undefined;
  private closed = false;

  /** @param database the shared pool (left open by `close`). */
  constructor(private readonly database: PostgresDatabase) {}

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
    if (entries.length === 0) return;
    const vector = await this.vectorExpression('$2');
    await this.database.transaction(async (client) => {
      for (const entry of entries) {
        const { rows } = await client.query<{ title: string | null }>(
          `WITH previous AS (SELECT title FROM conversation_search WHERE conversation_id = $1 FOR UPDATE)
           INSERT INTO conversation_search (conversation_id, title, updated_at, next_ordinal) VALUES ($1, $2, $3, 1)
           ON CONFLICT (conversation_id) DO UPDATE SET title = EXCLUDED.title, updated_at = EXCLUDED.updated_at
           RETURNING (SELECT title FROM previous) AS title`,
          [entry.conversationId, entry.title, entry.updatedAt],
        );
        if (rows[0]?.title === entry.title) continue;
        await client.query('DELETE FROM conversation_search_text WHERE conversation_id = $1 AND ordinal = 0', [entry.conversationId]);
        if (entry.title !== '') {
          await client.query(`INSERT INTO conversation_search_text (conversation_id, ordinal, body) VALUES ($1, 0, ${vector})`, [entry.conversationId, indexedText(entry.title)]);
        }
      }
    });
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
    const byConversation = new Map<string, string[]>();
    // A long message is several documents, as in the SQLite index (a tsvector holds at most 1 MB).
    for (const message of messages) byConversation.set(message.conversationId, [...(byConversation.get(message.conversationId) ?? []), ...searchDocumentPieces(indexedText(message.text))]);
    const vector = await this.vectorExpression('text');
    await this.database.transaction(async (client) => {
      for (const [conversationId, texts] of byConversation) {
        // Reserves the ordinals under the row lock, creating an untitled conversation if needed.
        const { rows } = await client.query<{ next_ordinal: number }>(
          `INSERT INTO conversation_search (conversation_id, title, updated_at, next_ordinal) VALUES ($1, '', 0, 1 + $2)
           ON CONFLICT (conversation_id) DO UPDATE SET next_ordinal = conversation_search.next_ordinal + $2
           RETURNING next_ordinal`,
          [conversationId, texts.length],
        );
        const first = Number(rows[0]?.next_ordinal) - texts.length;
        await client.query(
          `INSERT INTO conversation_search_text (conversation_id, ordinal, body)
           SELECT $1, $2::integer + ordinality::integer - 1, ${vector} FROM unnest($3::text[]) WITH ORDINALITY AS batch(text, ordinality)`,
          [conversationId, first, texts],
        );
      }
    });
  }

  /** See {@link ConversationSearchIndex.removeConversation}. */
  async removeConversation(conversationId: string): Promise<void> {
    this.checkOpen();
    checkConversationId('removeConversation', conversationId);
    await this.database.ready();
    await this.database.transaction(async (client) => {
      await client.query('DELETE FROM conversation_search_text WHERE conversation_id = $1', [conversationId]);
      await client.query('DELETE FROM conversation_search WHERE conversation_id = $1', [conversationId]);
    });
  }

  /** See {@link ConversationSearchIndex.startRebuild}: empties both tables. */
  async startRebuild(): Promise<void> {
    this.checkOpen();
    await this.database.ready();
    await this.database.query('TRUNCATE conversation_search, conversation_search_text');
  }

  /** See {@link ConversationSearchIndex.finishRebuild}: refreshes the planner's statistics after the bulk load. */
  async finishRebuild(): Promise<void> {
    this.checkOpen();
    await this.database.query('ANALYZE conversation_search, conversation_search_text');
  }

  /** See {@link ConversationSearchIndex.search}. */
  async search(query: string, options: SearchOptions = {}): Promise<SearchPage> {
    this.checkOpen();
    const translated = translateSearchQuery(searchableQuery(query));
    const limit = options.limit ?? DEFAULT_POSTGRES_SEARCH_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`Invalid search option limit ${String(limit)}: must be an integer >= 1`);
    const cursor = options.cursor === undefined ? undefined : decodeRecordCursor(CURSOR_NAMESPACE, options.cursor, 'updatedAt', 'desc');
    const normalize = await this.normalizer();
    const parameters: unknown[] = [translated, limit + 1];
    let after = '';
    if (cursor !== undefined) {
      parameters.push(cursor.updatedAt, cursor.key);
      after = 'AND (c.updated_at, c.conversation_id) < ($3::bigint, $4)';
    }
    let rows: { conversation_id: string; updated_at: string }[];
    try {
      ({ rows } = await this.database.query(
        `SELECT c.conversation_id, c.updated_at FROM conversation_search c
         WHERE EXISTS (SELECT 1 FROM conversation_search_text t WHERE t.conversation_id = c.conversation_id AND t.body @@ to_tsquery('simple', ${normalize.replace('%s', () => '$1')}))
         ${after} ORDER BY c.updated_at DESC, c.conversation_id DESC LIMIT $2`,
        parameters,
      ));
    } catch (error) {
      if ((error as { code?: string }).code === SYNTAX_ERROR) throw new InvalidSearchQueryError(`${(error as Error).message} (${QUERY_SYNTAX_HINT})`);
      throw error;
    }
    const matches = rows.slice(0, limit).map((row) => ({ conversationId: row.conversation_id, updatedAt: Number(row.updated_at) }));
    const page: SearchPage = { matches };
    const last = matches.at(-1);
    if (rows.length > limit && last !== undefined) {
      page.nextCursor = encodeRecordCursor({ orderBy: 'updatedAt', order: 'desc', key: last.conversationId, updatedAt: last.updatedAt });
    }
    return page;
  }

  /** Marks the index closed (later calls throw); the shared database stays open. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
  }

  /** `to_tsvector` of a text expression, through unaccent when available. */
  private async vectorExpression(text: string): Promise<string> {
    return `to_tsvector('simple', ${(await this.normalizer()).replace('%s', () => text)})`;
  }

  /**
   * The text normalisation as an SQL template (`%s` is the text): `unaccent` in the schema
   * where the extension lives, when it is installed, else the text as is.
   */
  private normalizer(): Promise<string> {
    this.normalizerPromise ??= (async () => {
      await this.database.ready();
      const { rows } = await this.database.query<{ schema: string }>(
        "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent'",
      );
      const schema = rows[0]?.schema;
      if (schema === undefined) return '%s';
      const quoted = `"${schema.replace(/"/g, '""')}"`;
      return `${quoted}.unaccent('${quoted}.unaccent'::regdictionary, %s)`;
    })();
    return this.normalizerPromise;
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('PostgresConversationSearchIndex is closed');
  }
}

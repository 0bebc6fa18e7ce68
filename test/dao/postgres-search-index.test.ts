/**
 * PostgresConversationSearchIndex on a real PostgreSQL: the same behaviour as the SQLite FTS5
 * index (search-index.suite.ts: matching, prefix words, case and diacritics, update order and
 * paging, title replacement, removal, rebuild, clear errors for bad queries and bad input that
 * leave the stored index untouched), and what only this index checks: AND/NOT, message
 * numbering, quoting, the tsquery translation, and reopening on a new pool.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PostgresConversationSearchIndex } from '../../src/dao/postgres-conversation-search-index.js';
import { translateSearchQuery } from '../../src/dao/tsquery-translation.js';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { createTestSchema, dropTestSchema, startTestPostgres, type ThrowawayPostgres } from '../helpers/postgres-server.js';
import { matchingIds, searchIndexCases, seedSearchIndex } from './search-index.suite.js';

let server: ThrowawayPostgres;
let schema: string;
let database: PostgresDatabase;
let search: PostgresConversationSearchIndex;

const ids = (query: string): Promise<string[]> => matchingIds(search, query);

beforeAll(async () => {
  server = await startTestPostgres();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

beforeEach(async () => {
  schema = await createTestSchema(server);
  database = new PostgresDatabase({ connectionString: server.connectionString, schema, maxConnections: 2 });
  search = new PostgresConversationSearchIndex(database);
  await seedSearchIndex(search);
});

afterEach(async () => {
  await search.close();
  await database.close();
  await dropTestSchema(server, schema);
});

describe('PostgresConversationSearchIndex', () => {
  searchIndexCases(() => search);

  it('combines words with AND and NOT, and groups them in parentheses', async () => {
    expect(await ids('tokenizer AND character')).toEqual(['conv_a']);
    expect(await ids('the NOT parser')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('(parser OR notes) NOT release')).toEqual(['conv_a']);
  });

  it('numbers later messages of an untitled conversation after earlier ones', async () => {
    await search.addMessages([{ conversationId: 'conv_new', text: 'orphan message' }]);
    await search.addMessages([{ conversationId: 'conv_new', text: 'second orphan' }, { conversationId: 'conv_new', text: 'third' }]);
    expect((await search.search('orphan')).matches).toEqual([{ conversationId: 'conv_new', updatedAt: 0 }]);
    expect(await ids('third')).toEqual(['conv_new']);
  });

  it('quotes cannot break out of the query', async () => {
    await search.addMessages([{ conversationId: 'conv_b', text: "see readme.md and CHANGELOG, it's fine" }]);
    expect(await ids('"it\'s"')).toEqual(['conv_b']);
    expect(await ids('"a\\\' | b"')).toEqual([]);
  });

  it('translates the query syntax to tsquery with FTS5 precedence', () => {
    expect(translateSearchQuery('a b OR c NOT d')).toBe("'a' & 'b' | ( 'c' & !'d' )");
    expect(translateSearchQuery('pre* "two words"')).toBe("'pre':* & 'two words'");
  });

  it('keeps its content across a new pool on the same schema, and refuses calls once closed', async () => {
    const pool = new PostgresDatabase({ connectionString: server.connectionString, schema, maxConnections: 1 });
    const reopened = new PostgresConversationSearchIndex(pool);
    expect(await reopened.search('parser')).toEqual({ matches: [{ conversationId: 'conv_a', updatedAt: 1000 }] });
    await reopened.close();
    await expect(reopened.search('parser')).rejects.toThrow(/closed/);
    await pool.close();
  });
});

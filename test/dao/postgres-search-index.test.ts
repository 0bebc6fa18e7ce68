/**
 * PostgresConversationSearchIndex on a real PostgreSQL: the same behaviour as the SQLite FTS5
 * index (matching, prefix words, case and diacritics, update order and paging, title
 * replacement, removal, rebuild), the same query syntax translated to tsquery, and clear
 * errors for bad queries and bad input that leave the stored index untouched.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidSearchQueryError } from '../../src/dao/conversation-search-index.js';
import { PostgresConversationSearchIndex } from '../../src/dao/postgres-conversation-search-index.js';
import { translateSearchQuery } from '../../src/dao/tsquery-translation.js';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { createTestSchema, dropTestSchema, startTestPostgres, type ThrowawayPostgres } from '../helpers/postgres-server.js';

let server: ThrowawayPostgres;
let schema: string;
let database: PostgresDatabase;
let search: PostgresConversationSearchIndex;

async function ids(query: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await search.search(query, { limit: 2, ...(cursor ? { cursor } : {}) });
    found.push(...page.matches.map((match) => match.conversationId));
    cursor = page.nextCursor;
  } while (cursor);
  return found.sort();
}

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
  await search.setConversations([
    { conversationId: 'conv_a', title: 'Fix the parser', updatedAt: 1000 },
    { conversationId: 'conv_b', title: 'Write the release notes', updatedAt: 2000 },
    { conversationId: 'conv_c', title: 'Café déjà vu', updatedAt: 3000 },
  ]);
  await search.addMessages([
    { conversationId: 'conv_a', text: 'The tokenizer drops the last character' },
    { conversationId: 'conv_a', text: 'I changed tokenize() to keep it; tests pass.' },
    { conversationId: 'conv_b', text: 'Summarise the changes since version 1.2' },
  ]);
});

afterEach(async () => {
  await search.close();
  await database.close();
  await dropTestSchema(server, schema);
});

describe('PostgresConversationSearchIndex', () => {
  it('matches titles and messages; several words must all occur in one document', async () => {
    expect(await ids('parser')).toEqual(['conv_a']);
    expect(await ids('tokenizer')).toEqual(['conv_a']);
    expect(await ids('the')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('changes OR tokenizer')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('tokenizer character')).toEqual(['conv_a']);
    expect(await ids('tokenizer AND character')).toEqual(['conv_a']);
    expect(await ids('parser character')).toEqual([]);
    expect(await ids('the NOT parser')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('(parser OR notes) NOT release')).toEqual(['conv_a']);
    expect(await ids('"release notes"')).toEqual(['conv_b']);
    expect(await ids('"notes release"')).toEqual([]);
    expect(await ids('nowhere')).toEqual([]);
  });

  it('matches prefix words, case and diacritics insensitively', async () => {
    expect(await ids('token*')).toEqual(['conv_a']);
    expect(await ids('TOKENIZ*')).toEqual(['conv_a']);
    expect(await ids('rel*')).toEqual(['conv_b']);
    expect(await ids('cafe deja')).toEqual(['conv_c']);
    expect(await ids('tok')).toEqual([]);
  });

  it('orders matches by update time, newest first, and pages without repeats', async () => {
    await search.setConversations([{ conversationId: 'conv_d', title: 'the end', updatedAt: 2000 }]);
    const first = await search.search('the', { limit: 2 });
    expect(first.matches).toEqual([
      { conversationId: 'conv_d', updatedAt: 2000 },
      { conversationId: 'conv_b', updatedAt: 2000 },
    ]);
    const second = await search.search('the', { limit: 2, cursor: first.nextCursor as string });
    expect(second.matches).toEqual([{ conversationId: 'conv_a', updatedAt: 1000 }]);
    expect(second.nextCursor).toBeUndefined();
  });

  it('replaces a changed title and moves the conversation in the order', async () => {
    await search.setConversations([{ conversationId: 'conv_a', title: 'Refactor the lexer', updatedAt: 5000 }]);
    expect(await ids('parser')).toEqual([]);
    expect(await ids('lexer')).toEqual(['conv_a']);
    expect(await ids('tokenizer')).toEqual(['conv_a']);
    expect((await search.search('the')).matches[0]).toEqual({ conversationId: 'conv_a', updatedAt: 5000 });
    await search.setConversations([{ conversationId: 'conv_a', title: '', updatedAt: 6000 }]);
    expect(await ids('lexer')).toEqual([]);
  });

  it('removes a conversation with its title and messages, and ignores unknown ids', async () => {
    await search.removeConversation('conv_a');
    await search.removeConversation('conv_unknown');
    expect(await ids('parser OR tokenizer')).toEqual([]);
    expect(await ids('the')).toEqual(['conv_b']);
  });

  it('creates an untitled conversation for messages of an unknown one, and numbers later messages after earlier ones', async () => {
    await search.addMessages([{ conversationId: 'conv_new', text: 'orphan message' }]);
    await search.addMessages([{ conversationId: 'conv_new', text: 'second orphan' }, { conversationId: 'conv_new', text: 'third' }]);
    expect((await search.search('orphan')).matches).toEqual([{ conversationId: 'conv_new', updatedAt: 0 }]);
    expect(await ids('third')).toEqual(['conv_new']);
  });

  it('empties everything on startRebuild and keeps working after finishRebuild', async () => {
    await search.startRebuild();
    expect(await ids('the')).toEqual([]);
    await search.setConversations([{ conversationId: 'conv_x', title: 'again the parser', updatedAt: 1 }]);
    await search.finishRebuild();
    expect(await ids('parser')).toEqual(['conv_x']);
  });

  it.each([
    ['readme.md', /syntax error near "\."/],
    ['(', /syntax error/],
    ['hello OR', /syntax error/],
    ['"unterminated', /unterminated string/],
    ['nosuchcolumn: word', /syntax error near ":"/],
    ['*', /syntax error near "\*"/],
    ['   ', /the query is empty/],
  ])('rejects the query %j with an InvalidSearchQueryError saying why and how to write one', async (query, reason) => {
    const error = await search.search(query).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidSearchQueryError);
    expect((error as Error).message).toMatch(reason);
    expect((error as Error).message).toContain('put words containing punctuation in double quotes');
  });

  it('finds words with punctuation when they are quoted, and quotes cannot break out of the query', async () => {
    await search.addMessages([{ conversationId: 'conv_b', text: "see readme.md and CHANGELOG, it's fine" }]);
    expect(await ids('"readme.md"')).toEqual(['conv_b']);
    expect(await ids('"it\'s"')).toEqual(['conv_b']);
    expect(await ids('"a\\\' | b"')).toEqual([]);
  });

  it('translates the query syntax to tsquery with FTS5 precedence', () => {
    expect(translateSearchQuery('a b OR c NOT d')).toBe("'a' & 'b' | ( 'c' & !'d' )");
    expect(translateSearchQuery('pre* "two words"')).toBe("'pre':* & 'two words'");
  });

  it('rejects a bad limit or cursor naming the option', async () => {
    await expect(search.search('the', { limit: 0 })).rejects.toThrow(/limit 0: must be an integer >= 1/);
    await expect(search.search('the', { cursor: 'not-a-cursor' })).rejects.toThrow(/Invalid list cursor/);
  });

  it('rejects bad input naming the entry, and writes nothing of the batch', async () => {
    await expect(search.setConversations([{ conversationId: 'conv_ok', title: 'ok', updatedAt: 1 }, { conversationId: '', title: 'x', updatedAt: 1 }])).rejects.toThrow(/entry 1: conversationId must be a non-empty string/);
    await expect(search.setConversations([{ conversationId: 'conv_ok', title: 'ok', updatedAt: -1 }])).rejects.toThrow(/entry 0: updatedAt must be an integer/);
    await expect(search.addMessages([{ conversationId: 'conv_ok', text: 'fine' }, { conversationId: 'conv_ok', text: 42 as unknown as string }])).rejects.toThrow(/message 1: text must be a string/);
    expect(await ids('ok OR fine')).toEqual([]);
    expect(await ids('the')).toEqual(['conv_a', 'conv_b']);
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

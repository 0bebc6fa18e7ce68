/**
 * SqliteConversationSearchIndex: matching (ranking-agnostic: compared as sets or in update
 * order), prefix words, title replacement, removal, paging, and clear errors for bad queries
 * and bad input that leave the stored index untouched.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidSearchQueryError, searchableText } from '../../src/dao/conversation-search-index.js';
import { SqliteConversationSearchIndex } from '../../src/dao/sqlite-conversation-search-index.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';

let directory: string;
let search: SqliteConversationSearchIndex;

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

beforeEach(async () => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-search-'));
  search = new SqliteConversationSearchIndex(path.join(directory, 'metadata.db'));
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
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('SqliteConversationSearchIndex', () => {
  it('matches titles and messages; several words must all occur in one document', async () => {
    expect(await ids('parser')).toEqual(['conv_a']);
    expect(await ids('tokenizer')).toEqual(['conv_a']);
    expect(await ids('the')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('changes OR tokenizer')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('tokenizer character')).toEqual(['conv_a']);
    // "parser" is in the title, "character" in a message: no single document holds both.
    expect(await ids('parser character')).toEqual([]);
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

  it('creates an untitled conversation for messages of an unknown one', async () => {
    await search.addMessages([{ conversationId: 'conv_new', text: 'orphan message' }]);
    expect((await search.search('orphan')).matches).toEqual([{ conversationId: 'conv_new', updatedAt: 0 }]);
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
    ['nosuchcolumn: word', /no such column/],
    ['*', /unknown special query/],
    ['   ', /the query is empty/],
  ])('rejects the query %j with an InvalidSearchQueryError saying why and how to write one', async (query, reason) => {
    const error = await search.search(query).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidSearchQueryError);
    expect((error as Error).message).toMatch(reason);
    expect((error as Error).message).toContain('put words containing punctuation in double quotes');
  });

  it('finds words with punctuation when they are quoted', async () => {
    await search.addMessages([{ conversationId: 'conv_b', text: 'see readme.md and CHANGELOG' }]);
    expect(await ids('"readme.md"')).toEqual(['conv_b']);
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

  it('shares the database file with the conversation index and survives reopening', async () => {
    const database = new Database(path.join(directory, 'shared.db'));
    const records = new SqliteRecordStorage(database);
    records.defineNamespace({ name: 'conversations' });
    const shared = new SqliteConversationSearchIndex(database);
    expect(shared.createdTables).toBe(true);
    await records.set('conversations', 'conv_1', { title: 'x' }, 1);
    await shared.setConversations([{ conversationId: 'conv_1', title: 'shared file', updatedAt: 1 }]);
    await shared.close();
    await records.close();
    database.close();
    const reopened = new SqliteConversationSearchIndex(path.join(directory, 'shared.db'));
    expect(reopened.createdTables).toBe(false);
    expect((await reopened.search('shared')).matches.map((match) => match.conversationId)).toEqual(['conv_1']);
    await reopened.close();
    await expect(reopened.search('shared')).rejects.toThrow(/closed/);
  });
});

describe('searchableText', () => {
  it('takes the text parts of user messages and the text of assistant messages only', () => {
    expect(searchableText({ kind: 'user_message', content: [{ type: 'text', text: 'a' }, { type: 'image', url: 'x' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
    expect(searchableText({ kind: 'assistant_message', text: 'answer' })).toBe('answer');
    expect(searchableText({ kind: 'tool_call', output: 'user_message' })).toBeUndefined();
    expect(searchableText({ kind: 'assistant_message', text: 42 })).toBeUndefined();
    expect(searchableText({ kind: 'user_message', content: 'not an array' })).toBeUndefined();
    expect(searchableText({ kind: 'user_message', content: [null, { type: 'text' }] })).toBeUndefined();
    expect(searchableText(null)).toBeUndefined();
  });
});

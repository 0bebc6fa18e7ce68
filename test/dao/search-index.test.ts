/**
 * SqliteConversationSearchIndex: the behaviour every search index shares (search-index.suite.ts:
 * matching, prefix words, title replacement, removal, paging, and clear errors for bad queries
 * and bad input that leave the stored index untouched), sharing the database file with the
 * conversation index, and searchableText (which previews share).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { previewOfItems } from '../../src/dao/conversation-listing.js';
import { searchableText } from '../../src/dao/conversation-search-index.js';
import { SqliteConversationSearchIndex } from '../../src/dao/sqlite-conversation-search-index.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { searchIndexCases, seedSearchIndex } from './search-index.suite.js';

let directory: string;
let search: SqliteConversationSearchIndex;

beforeEach(async () => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-search-'));
  search = new SqliteConversationSearchIndex(path.join(directory, 'metadata.db'));
  await seedSearchIndex(search);
});

afterEach(async () => {
  await search.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('SqliteConversationSearchIndex', () => {
  searchIndexCases(() => search);

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

  it('bounds FTS5 pending terms by its default outside a rebuild, raises the bound during one, and lowers one left raised', async () => {
    const file = path.join(directory, 'metadata.db');
    const hashsize = (): unknown => {
      const database = new Database(file, { readonly: true });
      try {
        return (database.prepare("SELECT v FROM conversation_search_text_config WHERE k = 'hashsize'").get() as { v: unknown } | undefined)?.v;
      } finally {
        database.close();
      }
    };
    expect([undefined, 1024 * 1024]).toContain(hashsize());
    await search.startRebuild();
    expect(hashsize()).toBe(64 * 1024 * 1024);
    await search.finishRebuild();
    expect(hashsize()).toBe(1024 * 1024);
    // A database written when the raised bound was set at creation and kept.
    await search.close();
    const writer = new Database(file);
    writer.exec("INSERT INTO conversation_search_text (conversation_search_text, rank) VALUES ('hashsize', 67108864)");
    writer.close();
    search = new SqliteConversationSearchIndex(file);
    expect(hashsize()).toBe(1024 * 1024);
    await search.setConversations([{ conversationId: 'conv_z', title: 'after reopening', updatedAt: 5 }]);
    expect((await search.search('reopening')).matches.map((match) => match.conversationId)).toEqual(['conv_z']);
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

  it('skips a prompt refused by a user_prompt_submit hook (status failed, as older logs hold them), in search and in previews', () => {
    const refused = { kind: 'user_message', status: 'failed', content: [{ type: 'text', text: 'refused words' }] };
    expect(searchableText(refused)).toBeUndefined();
    expect(searchableText({ ...refused, status: 'completed' })).toBe('refused words');
    expect(previewOfItems([{ kind: 'assistant_message', text: 'earlier answer' }, refused])).toBe('earlier answer');
  });
});

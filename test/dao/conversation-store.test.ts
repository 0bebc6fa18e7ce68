/**
 * ConversationStore on the storages the server composes: a new conversation is staged in
 * memory (nothing on disk, readable and listed in the process), becomes durable on
 * `ensureDurable` before its first message, and is searchable through `listConversations`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidSearchQueryError } from '../../src/dao/conversation-search-index.js';
import { ConversationStore } from '../../src/dao/conversation-store.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { StagedLogStorage } from '../../src/storage/staged/staged-log-storage.js';
import { assistantMessage, newConversation, openComposedStore, toolCall, userMessage, type ComposedStore } from './fixtures.js';

let root: string;
let opened: ComposedStore[];

function open(logs?: FileLogStorage): ComposedStore {
  const composed = openComposedStore(root, logs ? { logs } : {});
  opened.push(composed);
  return composed;
}

function rowCount(composed: ComposedStore, table: string): number {
  return (composed.database.prepare(`SELECT count(*) AS count FROM ${table}`).get() as { count: number }).count;
}

function conversationDirectory(id: string): string {
  return path.join(root, 'conversations', id);
}

/** Documents matching an FTS query, counted in the durable index (duplicates would show). */
function documentCount(composed: ComposedStore, query: string): number {
  return (composed.database.prepare('SELECT count(*) AS count FROM conversation_search_text WHERE conversation_search_text MATCH ?').get(query) as { count: number }).count;
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-store-'));
  opened = [];
});

afterEach(async () => {
  for (const composed of opened.reverse()) await composed.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('ConversationStore staging', () => {
  it('keeps a new conversation in memory: nothing on disk, yet readable, listed and searchable', async () => {
    const composed = open();
    const { conversation, session } = newConversation(1, 'Staged parser work');
    expect(await composed.store.createConversation(conversation, session)).toBe(2);
    expect(composed.store.isStaged(conversation.id)).toBe(true);
    expect(fs.existsSync(conversationDirectory(conversation.id))).toBe(false);
    expect(rowCount(composed, 'records_conversations')).toBe(0);
    expect(rowCount(composed, 'conversation_search')).toBe(0);
    expect((await composed.store.loadConversation(conversation.id))?.conversation).toEqual(conversation);
    expect(await composed.store.listItems(conversation.id, session.id)).toEqual([]);
    expect((await composed.store.listConversations()).conversations.map((entry) => entry.id)).toEqual([conversation.id]);
    expect((await composed.store.listConversations({ query: 'parser' })).conversations.map((entry) => entry.id)).toEqual([conversation.id]);
    expect(await composed.store.listConversationIds()).toEqual([conversation.id]);
  });

  it('vanishes when the process ends: a new store on the same directory does not know it', async () => {
    const first = open();
    const { conversation, session } = newConversation(1, 'Never used');
    await first.store.createConversation(conversation, session);
    await first.close();
    opened = [];
    const second = open();
    expect(await second.store.loadConversation(conversation.id)).toBeUndefined();
    expect((await second.store.listConversations()).conversations).toEqual([]);
    expect(fs.readdirSync(root).filter((name) => name !== 'metadata.db' && !name.startsWith('metadata.db-'))).toEqual([]);
  });

  it('ensureDurable writes logs, index row and search entry to disk before the first message', async () => {
    const composed = open();
    const { conversation, session } = newConversation(1, 'Durable parser work');
    await composed.store.createConversation(conversation, session);
    await composed.store.ensureDurable(conversation.id);
    expect(composed.store.isStaged(conversation.id)).toBe(false);
    expect(fs.readFileSync(path.join(conversationDirectory(conversation.id), 'metadata.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    expect(rowCount(composed, 'records_conversations')).toBe(1);
    expect(documentCount(composed, 'parser')).toBe(1);
    await composed.store.appendItems(conversation.id, session.id, [userMessage(session.id, 'please fix the tokenizer'), toolCall(session.id, 'tokenizer output'), assistantMessage(session.id, 'fixed it')]);
    expect(documentCount(composed, 'tokenizer')).toBe(1);
    await composed.close();
    opened = [];

    const reopened = open();
    expect((await reopened.store.loadConversation(conversation.id))?.conversation).toEqual(conversation);
    expect((await reopened.store.listItems(conversation.id, session.id)).map((stored) => stored.seq)).toEqual([1, 2, 3]);
    expect((await reopened.store.listConversations({ query: 'tokenizer' })).conversations.map((entry) => entry.id)).toEqual([conversation.id]);
    expect((await reopened.store.listConversations({ query: 'fixed' })).conversations.map((entry) => entry.id)).toEqual([conversation.id]);
  });

  it('commits once for concurrent callers, after the writes queued before, and before those queued after', async () => {
    const composed = open();
    const { conversation, session } = newConversation(1, 'Concurrent');
    await composed.store.createConversation(conversation, session);
    const before = composed.store.appendMetadata(conversation.id, [{ type: 'conversation', conversation: { ...conversation, title: 'Concurrent renamed', updatedAt: conversation.updatedAt + 1 } }]);
    const commits = [composed.store.ensureDurable(conversation.id), composed.store.ensureDurable(conversation.id)];
    const after = composed.store.appendItems(conversation.id, session.id, [userMessage(session.id, 'zebra crossing')]);
    commits.push(composed.store.ensureDurable(conversation.id));
    expect(commits[0]).toBe(commits[1]);
    await Promise.all([before, after, ...commits]);
    await composed.store.ensureDurable(conversation.id);
    await composed.store.ensureDurable('conv_unknown');
    const lines = fs.readFileSync(path.join(conversationDirectory(conversation.id), 'metadata.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { seq: number });
    expect(lines.map((line) => line.seq)).toEqual([1, 2, 3]);
    expect(fs.readFileSync(path.join(conversationDirectory(conversation.id), `${session.id}.jsonl`), 'utf8')).toContain('zebra crossing');
    expect(documentCount(composed, 'zebra')).toBe(1);
    expect(documentCount(composed, 'renamed')).toBe(1);
    expect(documentCount(composed, 'Concurrent')).toBe(1);
    expect((await composed.store.listConversations()).conversations[0]?.title).toBe('Concurrent renamed');
  });

  it('stays staged when a commit fails, and a later call finishes it', async () => {
    class FailingOnce extends FileLogStorage {
      failNext = false;
      override append<T>(logPath: string, stream: string, values: T[]) {
        if (this.failNext) {
          this.failNext = false;
          return Promise.reject(new Error('disk full'));
        }
        return super.append(logPath, stream, values);
      }
    }
    const logs = new FailingOnce(root);
    const composed = open(logs);
    const { conversation, session } = newConversation(1, 'Retry me');
    await composed.store.createConversation(conversation, session);
    logs.failNext = true;
    await expect(composed.store.ensureDurable(conversation.id)).rejects.toThrow(/disk full/);
    expect(composed.store.isStaged(conversation.id)).toBe(true);
    expect(fs.existsSync(path.join(conversationDirectory(conversation.id), 'metadata.jsonl'))).toBe(false);
    expect((await composed.store.loadConversation(conversation.id))?.conversation.title).toBe('Retry me');
    await composed.store.ensureDurable(conversation.id);
    expect(composed.store.isStaged(conversation.id)).toBe(false);
    expect(rowCount(composed, 'records_conversations')).toBe(1);
    expect(documentCount(composed, 'retry')).toBe(1);
  });

  it('refuses to create a conversation twice or with a foreign root session, writing nothing', async () => {
    const composed = open();
    const { conversation, session } = newConversation(1, 'Once');
    await composed.store.createConversation(conversation, session);
    await expect(composed.store.createConversation(conversation, session)).rejects.toThrow(/conversation conv_0001 already exists/);
    await composed.store.ensureDurable(conversation.id);
    await expect(composed.store.createConversation(conversation, session)).rejects.toThrow(/already exists/);
    const other = newConversation(2, 'Other');
    await expect(composed.store.createConversation(other.conversation, session)).rejects.toThrow(/session sess_0001 is not the root session of conversation conv_0002/);
    expect(fs.existsSync(conversationDirectory(other.conversation.id))).toBe(false);
    expect(fs.readFileSync(path.join(conversationDirectory(conversation.id), 'metadata.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('refuses a staged log storage without a staged index (and the reverse)', () => {
    const records = new SqliteRecordStorage(':memory:');
    expect(() => new ConversationStore(new StagedLogStorage(new FileLogStorage(root)), records)).toThrow(/staging needs both a StagedLogStorage and a StagedRecordStorage \(got logs staged, index not staged\)/);
  });

  it('works without staging on plain storages: writes go straight to disk', async () => {
    const records = new SqliteRecordStorage(':memory:');
    const store = new ConversationStore(new FileLogStorage(root), records);
    const { conversation, session } = newConversation(1, 'Plain');
    await store.createConversation(conversation, session);
    expect(store.isStaged(conversation.id)).toBe(false);
    expect(fs.existsSync(path.join(conversationDirectory(conversation.id), 'metadata.jsonl'))).toBe(true);
    await expect(store.listConversations({ query: 'plain' })).rejects.toThrow(/built without a search index/);
    await records.close();
  });
});

describe('ConversationStore search listing', () => {
  it('merges staged and durable matches in update order and pages them with cursors', async () => {
    const composed = open();
    const created: string[] = [];
    for (let number = 1; number <= 5; number += 1) {
      const { conversation, session } = newConversation(number, `Shared topic ${number}`);
      await composed.store.createConversation(conversation, session);
      if (number % 2 === 1) {
        await composed.store.ensureDurable(conversation.id);
        await composed.store.appendItems(conversation.id, session.id, [assistantMessage(session.id, `only in message ${number}`)]);
      }
      created.push(conversation.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await composed.store.listConversations({ query: 'shared', limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.conversations.map((entry) => entry.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...created].reverse());
    expect((await composed.store.listConversations({ query: 'message' })).conversations.map((entry) => entry.id)).toEqual(['conv_0005', 'conv_0003', 'conv_0001']);
    expect((await composed.store.listConversations({ query: 'topic AND 4' })).conversations.map((entry) => entry.id)).toEqual(['conv_0004']);
  });

  it('rejects bad queries with InvalidSearchQueryError', async () => {
    const composed = open();
    await expect(composed.store.listConversations({ query: 'hello OR' })).rejects.toBeInstanceOf(InvalidSearchQueryError);
    await expect(composed.store.listConversations({ query: '- :' })).rejects.toBeInstanceOf(InvalidSearchQueryError);
  });

  it('takes a deleted conversation out of the listing and the search', async () => {
    const composed = open();
    const { conversation, session } = newConversation(1, 'Doomed conversation');
    await composed.store.createConversation(conversation, session);
    await composed.store.ensureDurable(conversation.id);
    await composed.store.appendItems(conversation.id, session.id, [userMessage(session.id, 'doomed words')]);
    await composed.store.appendMetadata(conversation.id, [{ type: 'conversation_deleted', conversationId: conversation.id, deletedAt: 5 }]);
    expect((await composed.store.listConversations()).conversations).toEqual([]);
    expect((await composed.store.listConversations({ query: 'doomed' })).conversations).toEqual([]);
    expect(rowCount(composed, 'conversation_search')).toBe(0);
  });
});

/**
 * A conversation's new preview reaches its index record at most once per delay, not once per
 * message: a burst of appended messages is one index write and one `updated` to the list feed,
 * while every read of the index, the record's next whole write and closing the store still see
 * the newest preview. A delayed write that fails is told, never thrown into the append.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CONVERSATION_INDEX, ConversationStore, type ConversationIndexChange } from '../../src/dao/conversation-store.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { RecordStorage } from '../../src/storage/record-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { assistantMessage, newConversation, userMessage } from './fixtures.js';

let root: string;
let closers: (() => Promise<void>)[];

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-preview-writes-'));
  closers = [];
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A store over real file logs and a real SQLite index whose writes of conversation records are counted (and can be made to fail). */
function countingStore(options: { previewWriteErrors?: unknown[]; indexPath?: string } = {}) {
  const logs = new FileLogStorage(root);
  const real = new SqliteRecordStorage(options.indexPath ?? ':memory:');
  const writes = { count: 0, fail: false };
  const index = new Proxy(real, {
    get(target, property, receiver) {
      if (property !== 'set') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<RecordStorage['set']>) => {
        if (args[0] === CONVERSATION_INDEX) {
          writes.count++;
          if (writes.fail) throw new Error('the index disk is full');
        }
        return target.set(...args);
      };
    },
  });
  const store = new ConversationStore(logs, index, {
    ...(options.previewWriteErrors ? { onPreviewWriteError: (conversationId: string, error: unknown) => options.previewWriteErrors?.push({ conversationId, error }) } : {}),
  });
  const changes: ConversationIndexChange[] = [];
  store.onIndexChange((change) => changes.push(change));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await store.close();
    await real.close();
    await logs.close();
  };
  closers.push(close);
  return { store, writes, changes, close };
}

async function createdConversation(store: ConversationStore) {
  const { conversation, session } = newConversation(1, 'Previews');
  await store.createConversation(conversation, session);
  return { conversationId: conversation.id, sessionId: session.id };
}

async function previewInIndex(store: ConversationStore, conversationId: string): Promise<string | undefined> {
  const { conversations } = await store.listConversations();
  return conversations.find((summary) => summary.id === conversationId)?.preview;
}

const previewsTold = (changes: ConversationIndexChange[]) => changes.flatMap((change) => (change.kind === 'updated' ? [change.summary.preview] : []));

it('a burst of messages is one index write and one update to the list feed, with the newest preview', async () => {
  const { store, writes, changes } = countingStore();
  const { conversationId, sessionId } = await createdConversation(store);
  const before = writes.count;
  for (let step = 1; step <= 10; step++) await store.appendItems(conversationId, sessionId, [assistantMessage(sessionId, `step ${step}`)]);
  // Nothing written yet: ten writes used to happen here, one per message.
  expect(writes.count).toBe(before);
  await expect.poll(() => previewsTold(changes)).toEqual(['step 10']);
  expect(writes.count).toBe(before + 1);
});

it('a listing read right after an append shows the new preview (the waiting write is done first)', async () => {
  const { store, writes } = countingStore();
  const { conversationId, sessionId } = await createdConversation(store);
  await store.appendItems(conversationId, sessionId, [userMessage(sessionId, 'what is up')]);
  expect(await previewInIndex(store, conversationId)).toBe('what is up');
  const afterRead = writes.count;
  // The delayed write was the one the read made: it does not happen a second time.
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(writes.count).toBe(afterRead);
});

it('a whole-record write (a turn ending) carries the new preview and leaves no second write waiting', async () => {
  const { store, writes, changes } = countingStore();
  const { conversationId, sessionId } = await createdConversation(store);
  await store.appendItems(conversationId, sessionId, [assistantMessage(sessionId, 'final answer')]);
  const { conversation } = newConversation(1, 'Renamed at the end');
  await store.appendMetadata(conversationId, [{ type: 'conversation', conversation: { ...conversation, id: conversationId } }]);
  const afterWrite = writes.count;
  expect(changes.at(-1)).toMatchObject({ kind: 'updated', summary: { title: 'Renamed at the end', preview: 'final answer' } });
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(writes.count).toBe(afterWrite);
});

it('closing the store writes a preview still waiting, so the next process lists it', async () => {
  const indexPath = path.join(root, 'metadata.db');
  const first = countingStore({ indexPath });
  const { conversationId, sessionId } = await createdConversation(first.store);
  await first.store.ensureDurable(conversationId);
  await first.store.appendItems(conversationId, sessionId, [assistantMessage(sessionId, 'written at close')]);
  await first.close();
  const second = countingStore({ indexPath });
  expect(await previewInIndex(second.store, conversationId)).toBe('written at close');
});

it('a delayed preview write that fails is told, and the append it came from succeeded', async () => {
  const previewWriteErrors: { conversationId: string; error: unknown }[] = [];
  const { store, writes } = countingStore({ previewWriteErrors });
  const { conversationId, sessionId } = await createdConversation(store);
  writes.fail = true;
  const stored = await store.appendItems(conversationId, sessionId, [assistantMessage(sessionId, 'kept in the log')]);
  expect(stored.map((entry) => entry.seq)).toEqual([1]);
  await expect.poll(() => previewWriteErrors.length).toBe(1);
  expect(previewWriteErrors[0]).toMatchObject({ conversationId, error: { message: 'the index disk is full' } });
  // The log has the message whatever the index said.
  expect((await store.listItems(conversationId, sessionId)).map((entry) => entry.item)).toMatchObject([{ kind: 'assistant_message', text: 'kept in the log' }]);
  // The record keeps its previous preview until its next write succeeds.
  writes.fail = false;
  expect(await previewInIndex(store, conversationId)).toBe('');
});

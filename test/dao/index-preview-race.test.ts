/**
 * The preview kept for a conversation's index record must never go back to what a read begun
 * before a change of the root session's log found. The first index write of a conversation
 * after start reads the preview from the log; items appended (a newer message) or a rewind
 * (messages dropped) while that read was under way used to be overwritten by its result, in
 * the index record and in the preview kept for every later write. Likewise a new preview is
 * put in the record by reading it and writing it back: a write of the record in between (a
 * rename) was undone. Each case is made deterministic by holding the read in question once it
 * has read the log or the index.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CONVERSATION_INDEX, ConversationStore } from '../../src/dao/conversation-store.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogStorage } from '../../src/storage/log-storage.js';
import type { RecordStorage } from '../../src/storage/record-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { assistantMessage, newConversation, openComposedStore, userMessage, type ComposedStore } from './fixtures.js';
import { heldMethod, type Hold } from '../helpers/held-method.js';

let root: string;
let opened: ComposedStore[];

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-preview-race-'));
  opened = [];
});

afterEach(async () => {
  for (const composed of opened.reverse()) await composed.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** File logs whose next backward read (how a preview is read) answers only once released. */
function heldLogs(): { logs: LogStorage; hold: () => Hold } {
  const { proxy, hold } = heldMethod(new FileLogStorage(root), 'read', (...args) => (args[2] as { direction?: string } | undefined)?.direction === 'backward');
  return { logs: proxy, hold };
}

/** A durable conversation whose root session holds `texts` as user messages, written by an earlier store (so none of its previews is kept yet). */
async function writtenConversation(texts: string[]): Promise<{ conversationId: string; sessionId: string }> {
  const earlier = openComposedStore(root);
  const { conversation, session } = newConversation(1, 'Racing previews');
  await earlier.store.createConversation(conversation, session);
  await earlier.store.ensureDurable(conversation.id);
  await earlier.store.appendItems(conversation.id, session.id, texts.map((text) => userMessage(session.id, text)));
  await earlier.close();
  return { conversationId: conversation.id, sessionId: session.id };
}

async function previewOf(composed: ComposedStore, conversationId: string): Promise<string | undefined> {
  const { conversations } = await composed.store.listConversations();
  return conversations.find((summary) => summary.id === conversationId)?.preview;
}

function renamed(conversationId: string, title: string) {
  return [{ type: 'conversation' as const, conversation: { ...newConversation(1, title).conversation, id: conversationId } }];
}

it('a message appended while the preview is being read is the preview that stays', async () => {
  const { conversationId, sessionId } = await writtenConversation(['first question']);
  const { logs, hold } = heldLogs();
  const composed = openComposedStore(root, { logs });
  opened.push(composed);
  const held = hold();
  const write = composed.store.appendMetadata(conversationId, renamed(conversationId, 'Renamed'));
  await held.reached;
  await composed.store.appendItems(conversationId, sessionId, [assistantMessage(sessionId, 'the newer answer')]);
  held.release();
  await write;
  expect(await previewOf(composed, conversationId)).toBe('the newer answer');
  // Later writes use the kept preview: it must be the newer one too.
  await composed.store.appendMetadata(conversationId, renamed(conversationId, 'Renamed again'));
  expect(await previewOf(composed, conversationId)).toBe('the newer answer');
});

it('a rewind while the preview is being read leaves the preview of the log it left', async () => {
  const { conversationId, sessionId } = await writtenConversation(['kept question', 'dropped question']);
  const { logs, hold } = heldLogs();
  const composed = openComposedStore(root, { logs });
  opened.push(composed);
  const held = hold();
  const write = composed.store.appendMetadata(conversationId, renamed(conversationId, 'Renamed'));
  await held.reached;
  expect(await composed.store.rewindItems(conversationId, sessionId, 1)).toBe(1);
  held.release();
  await write;
  // What the write itself recorded began before the rewind; the next write must see the rewound log.
  await composed.store.appendMetadata(conversationId, renamed(conversationId, 'Renamed again'));
  expect(await previewOf(composed, conversationId)).toBe('kept question');
});

/** A real SQLite index whose next `get` of a conversation's record answers only once released. */
function heldIndex(): { index: RecordStorage; hold: () => Hold } {
  const real = new SqliteRecordStorage(':memory:');
  closers.push(() => real.close());
  const { proxy, hold } = heldMethod(real, 'get', (namespace) => namespace === CONVERSATION_INDEX);
  return { index: proxy, hold };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

it('a new preview written while the record is being renamed keeps the new title', async () => {
  const real = new FileLogStorage(root);
  closers.push(() => real.close());
  let metadataAppended: (() => void) | undefined;
  const logs = new Proxy(real, {
    get(target, property, receiver) {
      if (property !== 'append') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<LogStorage['append']>) => {
        const stored = await target.append(...args);
        if (args[1] === 'metadata') metadataAppended?.();
        return stored;
      };
    },
  });
  const { index, hold } = heldIndex();
  const store = new ConversationStore(logs, index);
  const { conversation, session } = newConversation(1, 'Old title');
  await store.createConversation(conversation, session);
  const held = hold();
  // The message changes the preview: its record is read, then written back with the new preview.
  const items = store.appendItems(conversation.id, session.id, [userMessage(session.id, 'a question')]);
  await held.reached;
  const appended = new Promise<void>((resolve) => (metadataAppended = resolve));
  const rename = store.appendMetadata(conversation.id, renamed(conversation.id, 'New title'));
  // Once the rename's log entry is stored, its record write (SQLite: no I/O wait) has run by the
  // next turn of the event loop, unless it waits for the read held here.
  await appended;
  await new Promise((resolve) => setImmediate(resolve));
  held.release();
  await Promise.all([items, rename]);
  const [summary] = (await store.listConversations()).conversations;
  expect(summary).toMatchObject({ title: 'New title', preview: 'a question' });
});

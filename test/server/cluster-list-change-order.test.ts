/**
 * The list changes another server of a cluster announces reach this server's list subscribers
 * in the order announced. A change too large for a notice is announced by id and read back
 * from the shared storage; its read used to run beside the notices after it, so a deletion
 * announced next was published first and the read, finishing later with the state from before
 * the deletion, put the deleted conversation back into every subscriber's list. Made
 * deterministic by holding that read once it has read the log.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ConversationStore } from '../../src/dao/conversation-store.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { ConversationListFeed } from '../../src/runtime/conversation-list-feed.js';
import { createListChangeReceiver } from '../../src/server/cluster/list-changes.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogStorage } from '../../src/storage/log-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { newConversation } from '../dao/fixtures.js';

let root: string;
const closers: (() => Promise<void>)[] = [];

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-list-change-order-'));
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  fs.rmSync(root, { recursive: true, force: true });
});

it('a deletion announced after a change read by id is the last thing list subscribers hear', async () => {
  const real = new FileLogStorage(root);
  const index = new SqliteRecordStorage(':memory:');
  closers.push(() => real.close(), () => index.close());
  let hold: { read: () => void; released: Promise<void> } | undefined;
  const logs = new Proxy(real, {
    get(target, property, receiver) {
      if (property !== 'read') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<LogStorage['read']>) => {
        const entries = await target.read(...args);
        const held = hold;
        if (held && args[1] === 'metadata') {
          hold = undefined;
          held.read();
          await held.released;
        }
        return entries;
      };
    },
  });
  const store = new ConversationStore(logs, index);
  const { conversation, session } = newConversation(1, 'Soon deleted');
  await store.createConversation(conversation, session);

  const conversationFeed = new ConversationListFeed();
  const heard: AnyNotification[] = [];
  conversationFeed.subscribe((event) => heard.push(event));
  const receive = createListChangeReceiver({ store, conversationFeed });

  let release: () => void = () => undefined;
  const read = new Promise<void>((resolve) => (hold = { read: resolve, released: new Promise<void>((done) => (release = done)) }));
  const updated = receive({ event: 'conversation-changed', conversationId: conversation.id, kind: 'updated' });
  await read;
  // The announcing server deletes the conversation and says so.
  await store.deleteConversation(conversation.id, 2);
  const deleted = receive({ event: 'conversation-changed', conversationId: conversation.id, kind: 'deleted' });
  release();
  await Promise.all([updated, deleted]);
  expect(heard.map((event) => event.method)).toEqual(['conversation/updated', 'conversation/deleted']);
});

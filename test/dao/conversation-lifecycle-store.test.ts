/**
 * ConversationStore deletion and rewind on the storages the server composes: a deletion cut
 * short after its entry was written is finished by deleting again, and a rewind keeps the
 * stored entries up to a seq, including ones that do not match the item schema.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { conversationPath } from '../../src/dao/conversation-store.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import { assistantMessage, newConversation, openComposedStore, userMessage, type ComposedStore } from './fixtures.js';

let root: string;
let opened: ComposedStore[];

function open(logs?: FileLogStorage): ComposedStore {
  const composed = openComposedStore(root, logs ? { logs } : {});
  opened.push(composed);
  return composed;
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-lifecycle-store-'));
  opened = [];
});

afterEach(async () => {
  for (const composed of opened.reverse()) await composed.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('ConversationStore.deleteConversation', () => {
  it('finishes a move cut short after the deletion entry, without resurrecting the conversation', async () => {
    const { store } = open();
    const { conversation, session } = newConversation(1, 'Half deleted');
    await store.createConversation(conversation, session);
    await store.ensureDurable(conversation.id);
    await store.appendItems(conversation.id, session.id, [userMessage(session.id, 'hello')]);
    // What a crash right after the entry leaves: the entry, and the directory still in place.
    await store.appendMetadata(conversation.id, [{ type: 'conversation_deleted', conversationId: conversation.id, deletedAt: 1 }]);
    expect(fs.existsSync(path.join(root, 'conversations', conversation.id))).toBe(true);
    expect(await store.loadConversation(conversation.id)).toBeUndefined();
    expect((await store.listConversations()).conversations).toEqual([]);

    expect(await store.deleteConversation(conversation.id, 2)).toBeUndefined();
    expect(fs.existsSync(path.join(root, 'conversations', conversation.id))).toBe(false);
    const trash = new FileLogStorage(root);
    expect((await trash.read(`trash/${conversation.id}`, session.id)).map((entry) => entry.seq)).toEqual([1]);
    expect((await trash.read(`trash/${conversation.id}`, 'metadata')).at(-1)?.value).toMatchObject({ type: 'conversation_deleted' });
    await trash.close();
    expect(await store.deleteConversation(conversation.id, 3)).toBeUndefined();
    expect(await store.deleteConversation('conv_neverexisted', 3)).toBeUndefined();
  });
});

describe('ConversationStore.rewindItems', () => {
  it('keeps the stored entries up to a seq as they are, and the preview follows', async () => {
    const logs = new FileLogStorage(root);
    const { store } = open(logs);
    const { conversation, session } = newConversation(2, 'Rewound');
    await store.createConversation(conversation, session);
    await store.ensureDurable(conversation.id);
    await store.appendItems(conversation.id, session.id, [userMessage(session.id, 'kept question'), assistantMessage(session.id, 'kept answer')]);
    // An entry of no known item shape stays where it is: a rewind never renumbers.
    await logs.append(conversationPath(conversation.id), session.id, [{ kind: 'from_a_later_version' }]);
    await store.appendItems(conversation.id, session.id, [userMessage(session.id, 'dropped question')]);
    await store.appendMetadata(conversation.id, [{ type: 'conversation', conversation }]);
    expect((await store.listConversations()).conversations[0]?.preview).toBe('dropped question');

    expect(await store.rewindItems(conversation.id, session.id, 3)).toBe(1);
    expect(await store.rewindItems(conversation.id, session.id, 3)).toBe(0);
    expect((await logs.read(conversationPath(conversation.id), session.id)).map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect((await logs.read(conversationPath(conversation.id), session.id)).at(-1)?.value).toEqual({ kind: 'from_a_later_version' });
    await store.appendMetadata(conversation.id, [{ type: 'conversation', conversation }]);
    expect((await store.listConversations()).conversations[0]?.preview).toBe('kept answer');
    expect((await store.listConversations({ query: 'dropped' })).conversations).toEqual([]);
    expect((await store.listConversations({ query: 'kept' })).conversations.map((summary) => summary.id)).toEqual([conversation.id]);
  });
});

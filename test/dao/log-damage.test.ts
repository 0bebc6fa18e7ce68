/**
 * What the conversation store tells about damaged logs (docs/storage.md, "Damaged logs"):
 * skipped lines and entries stay known after the storage reported them once, until an append
 * cuts a torn tail off or a rewind replaces the log; a conversation whose metadata log cannot
 * be read or holds no valid conversation entry fails to open naming the file, and leaves the
 * listing, while a deleted one simply does not exist.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationStore, DamagedConversationError } from '../../src/dao/conversation-store.js';
import { LogDamageRegistry, MAXIMUM_DAMAGE_PER_CONVERSATION } from '../../src/dao/log-damage.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import { openSqliteDatabase, type SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { assistantMessage, newConversation, userMessage } from './fixtures.js';

let root: string;
let logs: FileLogStorage | undefined;
let database: SqliteDatabase | undefined;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-damage-store-'));
});

afterEach(async () => {
  await logs?.close();
  database?.close();
  logs = undefined;
  database = undefined;
  fs.rmSync(root, { recursive: true, force: true });
});

/** A store on plain storages over `root`, fed to a fresh damage registry, as the server builds it. */
async function openStore(): Promise<{ store: ConversationStore; damage: LogDamageRegistry }> {
  await logs?.close();
  database?.close();
  const damage = new LogDamageRegistry();
  logs = new FileLogStorage(root, { onProblem: damage.onProblem });
  const files = logs;
  database = openSqliteDatabase(path.join(root, 'metadata.db'));
  const store = new ConversationStore(files, new SqliteRecordStorage(database), { logDamage: damage, locateStream: (logPath, stream) => files.streamFilePath(logPath, stream) });
  return { store, damage };
}

async function storedConversation(): Promise<{ id: string; sessionId: string; sessionLog: string; metadataLog: string }> {
  const { store } = await openStore();
  const { conversation, session } = newConversation(1, 'Damaged');
  await store.createConversation(conversation, session);
  await store.appendItems(conversation.id, session.id, [userMessage(session.id, 'one'), assistantMessage(session.id, 'two'), userMessage(session.id, 'three')]);
  const directory = path.join(root, 'conversations', conversation.id);
  return { id: conversation.id, sessionId: session.id, sessionLog: path.join(directory, `${session.id}.jsonl`), metadataLog: path.join(directory, 'metadata.jsonl') };
}

describe('damaged lines of a conversation', () => {
  it('stay known to later readers; a torn tail until an append cuts it off, the rest until a rewind replaces the log', async () => {
    const { id, sessionId, sessionLog, metadataLog } = await storedConversation();
    const lines = fs.readFileSync(sessionLog, 'utf8').split('\n');
    fs.writeFileSync(sessionLog, `${lines[0]}\nnot json\n${lines[1]}\n${lines[2]}\n{"seq":4,"val`);
    fs.appendFileSync(metadataLog, '{"seq":3,"value":{"type":"turn","turn":{"id":"turn_bad"}}}\n');
    const { store } = await openStore();

    expect(await store.openConversationState(id)).toBeDefined();
    expect((await store.listItems(id, sessionId)).map((stored) => stored.seq)).toEqual([1, 2, 3]);
    const found = store.logDamage(id);
    expect(found.map((entry) => [entry.stream, entry.kind])).toEqual([
      ['metadata', 'invalid_entry'],
      [sessionId, 'torn_tail'],
      [sessionId, 'corrupt_line'],
    ]);
    expect(found[0]?.location).toBe(`${metadataLog}, seq 3`);
    expect(found[1]?.location).toContain(`${sessionLog}, byte offset`);
    expect(found[2]?.location).toContain(`${sessionLog}, line 2 (byte offset`);
    // The storage reports a line once; readers after the first still hear of it.
    await store.listItems(id, sessionId);
    await store.openConversationState(id);
    expect(store.logDamage(id)).toEqual(found);

    await store.appendItems(id, sessionId, [assistantMessage(sessionId, 'four')]);
    expect(store.logDamage(id).map((entry) => entry.kind)).toEqual(['invalid_entry', 'corrupt_line']);
    expect(await store.rewindItems(id, sessionId, 2)).toBe(2);
    expect(store.logDamage(id).map((entry) => entry.kind)).toEqual(['invalid_entry']);
  });

  it('include a line copied again at the end: the conversation loads once each, the next item follows the highest seq, and it exports whole', async () => {
    const { id, sessionId, sessionLog } = await storedConversation();
    const first = fs.readFileSync(sessionLog, 'utf8').split('\n')[0];
    fs.appendFileSync(sessionLog, `${first}\n`);
    const { store } = await openStore();

    const state = await store.openConversationState(id);
    expect(state).toBeDefined();
    expect((await store.listItems(id, sessionId)).map((stored) => stored.seq)).toEqual([1, 2, 3]);
    expect(store.logDamage(id)).toEqual([expect.objectContaining({ stream: sessionId, kind: 'corrupt_line', message: 'corrupt line skipped: its seq 1 does not follow seq 3 of the line before it (seqs grow by one per line)' })]);
    const [appended] = await store.appendItems(id, sessionId, [assistantMessage(sessionId, 'four')]);
    expect(appended?.seq).toBe(4);
    expect((await store.listItems(id, sessionId)).map((stored) => stored.seq)).toEqual([1, 2, 3, 4]);
    const streams = await store.readStreams(id, [sessionId]);
    const session = streams?.find((stream) => stream.stream === sessionId);
    expect(session?.entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4]);
  });

  it('are kept up to a bound per conversation', () => {
    const damage = new LogDamageRegistry();
    for (let line = 1; line <= MAXIMUM_DAMAGE_PER_CONVERSATION + 20; line += 1) {
      damage.onProblem({ path: 'conversations/conv_1', stream: 'sess_1', kind: 'corrupt_line', location: `f, line ${line}`, message: 'corrupt' });
    }
    damage.onProblem({ path: 'trash/conv_1', stream: 'sess_1', kind: 'corrupt_line', location: 'elsewhere', message: 'corrupt' });
    expect(damage.of('conv_1')).toHaveLength(MAXIMUM_DAMAGE_PER_CONVERSATION);
    expect(damage.of('conv_1').some((entry) => entry.location === 'elsewhere')).toBe(false);
  });
});

describe('a conversation whose metadata log is damaged beyond what reads skip', () => {
  it.each([
    ['emptied', (file: string) => fs.writeFileSync(file, ''), 'holds no valid conversation entry'],
    ['only garbage', (file: string) => fs.writeFileSync(file, 'garbage\n{"seq":'), 'holds no valid conversation entry'],
    ['a directory', (file: string) => (fs.rmSync(file), fs.mkdirSync(file)), 'cannot be read: it is a directory'],
  ])('%s: fails to open naming the file, and leaves the listing', async (_label, damageIt, expected) => {
    const { id, metadataLog } = await storedConversation();
    damageIt(metadataLog);
    const { store } = await openStore();
    expect((await store.listConversations()).conversations.map((summary) => summary.id)).toEqual([id]);
    const failure = store.openConversationState(id);
    await expect(failure).rejects.toThrow(DamagedConversationError);
    await expect(failure).rejects.toThrow(`conversation "${id}" cannot be opened: `);
    await expect(failure).rejects.toThrow(metadataLog);
    await expect(failure).rejects.toThrow(expected);
    expect((await store.listConversations()).conversations).toEqual([]);
    expect(fs.existsSync(metadataLog)).toBe(true);
  });

  it('missing while its session logs remain: fails to open naming the missing file and the logs left, and leaves the listing', async () => {
    const { id, metadataLog, sessionLog } = await storedConversation();
    fs.rmSync(metadataLog);
    const { store } = await openStore();
    expect((await store.listConversations()).conversations.map((summary) => summary.id)).toEqual([id]);
    const failure = store.openConversationState(id);
    await expect(failure).rejects.toThrow(DamagedConversationError);
    await expect(failure).rejects.toThrow(`conversation "${id}" cannot be opened: its metadata log ${metadataLog} is missing`);
    await expect(failure).rejects.toThrow(sessionLog);
    expect((await store.listConversations()).conversations).toEqual([]);
    // Nothing is removed: the session log keeps the messages for a repair.
    expect(fs.existsSync(sessionLog)).toBe(true);
  });

  it('gone with its whole directory: does not exist, and leaves the listing', async () => {
    const { id, metadataLog } = await storedConversation();
    fs.rmSync(path.dirname(metadataLog), { recursive: true });
    const { store } = await openStore();
    expect((await store.listConversations()).conversations.map((summary) => summary.id)).toEqual([id]);
    expect(await store.openConversationState(id)).toBeUndefined();
    expect((await store.listConversations()).conversations).toEqual([]);
  });

  it('is no damage when it was deleted, or never written: the conversation does not exist', async () => {
    const { id } = await storedConversation();
    const { store } = await openStore();
    await store.appendMetadata(id, [{ type: 'conversation_deleted', conversationId: id, deletedAt: 1 }]);
    expect(await store.openConversationState(id)).toBeUndefined();
    expect(await store.openConversationState('conv_none')).toBeUndefined();
  });
});

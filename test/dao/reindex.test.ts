/**
 * reindex (SPEC §4: `openvaala reindex` rebuilds `metadata.db` from the logs and yields the
 * same listing): for data written through the dao without deletions, the rebuilt listing and
 * search equal the live ones, with either loader; damaged or odd data is skipped and reported.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogConversationLoader, loadConversationFromLogs } from '../../src/dao/conversation-loader.js';
import { ConversationStore } from '../../src/dao/conversation-store.js';
import { createFileConversationLoader } from '../../src/dao/file-conversation-loader.js';
import { readStreamEntries, scanMessageLines, scanStreamFile } from '../../src/dao/jsonl-file-reader.js';
import { reindex, type ReindexOptions } from '../../src/dao/reindex.js';
import { SqliteConversationSearchIndex } from '../../src/dao/sqlite-conversation-search-index.js';
import { SessionSchema } from '../../src/protocol/index.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogProblem } from '../../src/storage/log-storage.js';
import { openSqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { assistantMessage, newConversation, openComposedStore, toolCall, userMessage } from './fixtures.js';

const QUERIES = ['parser', 'pars*', 'tokenizer', 'zebra', 'child', 'renamed', '"release notes"', 'release OR zebra', 'title', 'user_message', 'nothing'];

let root: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-reindex-'));
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** Writes conversations through the dao as the server does (staged, then durable on the first message). */
async function writeThroughTheDao(): Promise<void> {
  const composed = openComposedStore(root);
  const { store } = composed;
  for (let number = 1; number <= 12; number += 1) {
    const { conversation, session } = newConversation(number, number === 4 ? 'Write the release notes' : `Title ${number} parser`);
    await store.createConversation(conversation, session);
    if (number === 12) continue; // created, never used: stays staged and is gone with the process
    await store.ensureDurable(conversation.id);
    await store.appendItems(conversation.id, session.id, [
      userMessage(session.id, number % 3 === 0 ? 'the tokenizer drops a character' : `question ${number}`),
      toolCall(session.id, 'printed {"kind":"user_message","text":"zebra"} from a fixture'),
      assistantMessage(session.id, number === 7 ? 'a zebra crossing' : `answer ${number}`),
    ]);
    if (number % 4 === 1) {
      const renamed = { ...conversation, title: `Renamed ${number}`, updatedAt: conversation.updatedAt + 50_000 };
      const child = SessionSchema.parse({ ...session, id: `sess_child_${number}`, parentSessionId: session.id });
      await store.appendMetadata(conversation.id, [{ type: 'session', session: child }, { type: 'conversation', conversation: renamed }]);
      await store.appendItems(conversation.id, child.id, [assistantMessage(child.id, 'child session words')]);
    }
  }
  await composed.close();
}

/** Everything a client can see of the index: all listing pages, and every query's matches in order. */
async function snapshot(databaseFile: string, queries = QUERIES): Promise<{ listing: unknown[]; searches: Record<string, string[]>; rows: unknown[] }> {
  const database = openSqliteDatabase(databaseFile);
  const records = new SqliteRecordStorage(database);
  const search = new SqliteConversationSearchIndex(database);
  const logs = new FileLogStorage(root);
  const store = new ConversationStore(logs, records, { search });
  const listing: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listConversations({ limit: 5, ...(cursor ? { cursor } : {}) });
    listing.push(...page.conversations);
    cursor = page.nextCursor;
  } while (cursor);
  const searches: Record<string, string[]> = {};
  for (const query of queries) searches[query] = (await store.listConversations({ query, limit: 500 })).conversations.map((entry) => entry.id);
  const rows = database.prepare('SELECT key, value, updated_at FROM records_conversations ORDER BY key').all();
  await search.close();
  await records.close();
  await logs.close();
  database.close();
  return { listing, searches, rows };
}

async function rebuild(databaseFile: string, loaderKind: 'logs' | 'file'): Promise<Awaited<ReturnType<typeof reindex>>> {
  const logs = new FileLogStorage(root, { onProblem: () => undefined });
  const database = openSqliteDatabase(databaseFile);
  const options: ReindexOptions = { search: new SqliteConversationSearchIndex(database) };
  if (loaderKind === 'file') options.loader = createFileConversationLoader(root);
  else options.loader = createLogConversationLoader(logs);
  try {
    return await reindex(logs, new SqliteRecordStorage(database), options);
  } finally {
    await options.loader?.close();
    await logs.close();
    database.close();
  }
}

describe('reindex', () => {
  it.each(['logs', 'file'] as const)('rebuilds the same listing and search as the live index (loader: %s)', async (loaderKind) => {
    await writeThroughTheDao();
    const live = await snapshot(path.join(root, 'metadata.db'));
    expect(live.listing).toHaveLength(11);
    expect(live.searches.zebra).toEqual(['conv_0007']);
    expect(live.searches.child).toEqual(['conv_0009', 'conv_0005', 'conv_0001']);
    expect(live.searches.user_message).toEqual([]);

    const report = await rebuild(path.join(root, 'fresh.db'), loaderKind);
    expect(report).toMatchObject({ conversations: 11, items: 33 + 3, messages: 22 + 3, skipped: [], invalidEntries: [] });
    expect(await snapshot(path.join(root, 'fresh.db'))).toEqual(live);
    // Twice over the same logs, into the same file, gives the same index again.
    await rebuild(path.join(root, 'fresh.db'), loaderKind);
    expect(await snapshot(path.join(root, 'fresh.db'))).toEqual(live);
  });

  it('skips deleted conversations and reports damaged entries and unreadable session logs without stopping', async () => {
    await writeThroughTheDao();
    const composed = openComposedStore(root);
    await composed.store.appendMetadata('conv_0002', [{ type: 'conversation_deleted', conversationId: 'conv_0002', deletedAt: 1 }]);
    const evil = SessionSchema.parse({ ...newConversation(3, 'x').session, id: '../../outside' });
    await composed.store.appendMetadata('conv_0003', [{ type: 'session', session: evil }]);
    await composed.close();
    fs.appendFileSync(path.join(root, 'conversations', 'conv_0005', 'sess_0005.jsonl'), 'not json at all\n{"seq":5,"value":{"kind":"user_message","content":[{"type":"text","text":"after the damage"}]}}\n');
    fs.appendFileSync(path.join(root, 'conversations', 'conv_0006', 'metadata.jsonl'), '{"seq":3,"value":{"type":"turn","turn":{"id":"turn_bad"}}}\n');
    for (const loaderKind of ['logs', 'file'] as const) {
      const report = await rebuild(path.join(root, `damaged-${loaderKind}.db`), loaderKind);
      expect(report.conversations).toBe(10);
      expect(report.skipped).toEqual([{ conversationId: 'conv_0002', reason: 'deleted' }]);
      expect(report.invalidEntries.map((entry) => [entry.conversationId, entry.stream, entry.seq])).toEqual([
        ['conv_0003', '../../outside', 0],
        ['conv_0006', 'metadata', 3],
      ]);
      expect(report.invalidEntries[0]?.message).toMatch(/session log not readable: .*outside/);
      const after = await snapshot(path.join(root, `damaged-${loaderKind}.db`));
      expect(after.searches.tokenizer).toEqual(['conv_0009', 'conv_0006', 'conv_0003']);
    }
    const damaged = await snapshot(path.join(root, 'damaged-file.db'), ['damage']);
    expect(damaged.searches.damage).toEqual(['conv_0005']);
  });
});

/**
 * Opens `fifo` for writing after `seconds` in a child process: a reader blocked opening the
 * pipe is released then (and reads nothing), so a reader that blocks fails its test instead of
 * hanging the run. Returns the function that stops the child.
 */
function releaseBlockedReaders(fifo: string, seconds: number): () => void {
  const child = spawn('sh', ['-c', `sleep ${seconds}; exec 3>"$0"`, fifo], { stdio: 'ignore' });
  return () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  };
}

describe('reindex over log files that cannot be read', () => {
  it.each(['logs', 'file'] as const)('reports each one with its file and why, indexes everything else and leaves them as they are (loader: %s)', async (loaderKind) => {
    await writeThroughTheDao();
    const directory = (id: string): string => path.join(root, 'conversations', id);
    const sessionDirectory = path.join(directory('conv_0005'), 'sess_0005.jsonl');
    fs.rmSync(sessionDirectory);
    fs.mkdirSync(sessionDirectory);
    const pipe = path.join(directory('conv_0007'), 'sess_0007.jsonl');
    fs.rmSync(pipe);
    execFileSync('mkfifo', [pipe]);
    const link = path.join(directory('conv_0003'), 'sess_0003.jsonl');
    fs.rmSync(link);
    fs.symlinkSync(path.join(root, 'gone.jsonl'), link);
    const metadata = path.join(directory('conv_0008'), 'metadata.jsonl');
    fs.rmSync(metadata);
    fs.mkdirSync(metadata);
    const stop = releaseBlockedReaders(pipe, 5);
    try {
      const report = await rebuild(path.join(root, `unreadable-${loaderKind}.db`), loaderKind);
      expect(report.conversations).toBe(10);
      expect(report.skipped).toEqual([{ conversationId: 'conv_0008', reason: `log file ${metadata} cannot be read: it is a directory` }]);
      expect(report.invalidEntries.map((entry) => [entry.conversationId, entry.stream, entry.message])).toEqual([
        ['conv_0003', 'sess_0003', `session log not readable: log file ${link} cannot be read: it is a symbolic link to a missing file (${path.join(root, 'gone.jsonl')})`],
        ['conv_0005', 'sess_0005', `session log not readable: log file ${sessionDirectory} cannot be read: it is a directory`],
        ['conv_0007', 'sess_0007', `session log not readable: log file ${pipe} cannot be read: it is a named pipe (FIFO)`],
      ]);
      const after = await snapshot(path.join(root, `unreadable-${loaderKind}.db`), ['zebra', 'parser']);
      expect(after.listing.map((entry) => (entry as { id: string }).id)).not.toContain('conv_0008');
      expect(after.searches.parser).toEqual(['conv_0011', 'conv_0010', 'conv_0007', 'conv_0006', 'conv_0003', 'conv_0002']);
    } finally {
      stop();
    }
    expect(fs.lstatSync(sessionDirectory).isDirectory()).toBe(true);
    expect(fs.lstatSync(pipe).isFIFO()).toBe(true);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.lstatSync(metadata).isDirectory()).toBe(true);
  });

  it('indexes a conversation whose root session log cannot be read without a search too (no preview)', async () => {
    await writeThroughTheDao();
    const sessionLog = path.join(root, 'conversations', 'conv_0005', 'sess_0005.jsonl');
    fs.rmSync(sessionLog);
    fs.mkdirSync(sessionLog);
    const logs = new FileLogStorage(root, { onProblem: () => undefined });
    const database = openSqliteDatabase(path.join(root, 'no-search.db'));
    try {
      const report = await reindex(logs, new SqliteRecordStorage(database), { loader: createLogConversationLoader(logs) });
      expect(report.conversations).toBe(11);
      expect(report.invalidEntries.map((entry) => entry.message)).toEqual([`session log not readable: log file ${sessionLog} cannot be read: it is a directory`]);
    } finally {
      await logs.close();
      database.close();
    }
  });
});

describe('the JSON Lines message scan', () => {
  it('finds the same messages as reading the stream through FileLogStorage', async () => {
    const lines = [
      JSON.stringify({ seq: 1, value: userMessage('s', 'first "quoted" line\nwith a newline and ünïcödé ✓') }),
      JSON.stringify({ seq: 2, value: toolCall('s', 'mentions user_message and assistant_message in passing') }),
      JSON.stringify({ seq: 3, value: { ...toolCall('s', 'x'), arguments: { kind: 'user_message', content: [{ type: 'text', text: 'not a message' }] } } }),
      '{"seq":4,"value":{"kind":"assistant_message","text":"corrupt',
      JSON.stringify({ seq: 5, value: assistantMessage('s', 'after the corrupt line') }),
      JSON.stringify({ seq: 6, value: { kind: 'user_message', content: [{ type: 'text', text: 'unterminated but valid' }] } }),
    ];
    const directory = path.join(root, 'conversations', 'conv_x');
    fs.mkdirSync(directory, { recursive: true });
    fs.writeFileSync(path.join(directory, 'metadata.jsonl'), `${JSON.stringify({ seq: 1, value: { type: 'conversation', conversation: newConversation(1, 't').conversation } })}\n${JSON.stringify({ seq: 2, value: { type: 'session', session: { ...newConversation(1, 't').session, id: 'sess_x' } } })}\n`);
    fs.writeFileSync(path.join(directory, 'sess_x.jsonl'), `${lines.join('\n')}`);
    const expected = ['first "quoted" line\nwith a newline and ünïcödé ✓', 'after the corrupt line', 'unterminated but valid'];
    expect(scanMessageLines(fs.readFileSync(path.join(directory, 'sess_x.jsonl'))).texts).toEqual(expected);
    const logs = new FileLogStorage(root, { onProblem: () => undefined });
    expect((await loadConversationFromLogs(logs, 'conv_x', { withMessages: true })).texts).toEqual(expected);
    expect((await loadConversationFromLogs(logs, 'conv_x', { withMessages: true, fast: { scanMessages: (logPath, stream) => scanStreamFile(root, logPath, stream) } })).texts).toEqual(expected);
    await logs.close();
    expect(scanMessageLines(Buffer.from('')).texts).toEqual([]);
    expect(scanMessageLines(Buffer.from(`${lines[0]}\n`)).lines).toBe(1);
    // The last line is torn: the count falls back to counting lines.
    expect(scanMessageLines(Buffer.from(`${lines[0]}\n${lines[1]}\n{"seq":3,"val`)).lines).toBe(3);
  });

  it.each([
    ['a torn, incomplete last line', '{"seq":3,"value":{"a":'],
    ['a complete last line without its newline', '{"seq":3,"value":{"a":3}}'],
    ['a corrupt line before a valid one', 'garbage\n{"seq":4,"value":{"a":4}}\n'],
    ['nothing wrong', ''],
  ])('reads entries and reports damage as FileLogStorage does: %s', async (_label, tail) => {
    const directory = path.join(root, 'conversations', 'conv_y');
    fs.mkdirSync(directory, { recursive: true });
    fs.writeFileSync(path.join(directory, 'metadata.jsonl'), `{"seq":1,"value":{"a":1}}\n{"seq":2,"value":{"a":"ü\\n"}}\n${tail}`);
    const fromStorage: LogProblem[] = [];
    const logs = new FileLogStorage(root, { onProblem: (problem) => fromStorage.push(problem) });
    const expected = await logs.read('conversations/conv_y', 'metadata');
    await logs.close();
    const fromReader: LogProblem[] = [];
    expect(readStreamEntries(root, 'conversations/conv_y', 'metadata', (problem) => fromReader.push(problem))).toEqual(expected);
    const order = (problems: LogProblem[]) => problems.map((problem) => JSON.stringify(problem)).sort();
    expect(order(fromReader)).toEqual(order(fromStorage));
    expect(readStreamEntries(root, 'conversations/conv_y', 'missing', () => undefined)).toEqual([]);
    expect(() => readStreamEntries(root, 'conversations/conv_y', '../x', () => undefined)).toThrow(/stream/i);
  });
});

/**
 * Crash safety of the index (SPEC §4: the logs are the source of truth; every change is
 * synced to the log before the index is updated; `reindex` rebuilds the same listing): a child
 * writes conversations through the dao and is killed with SIGKILL at random moments, many
 * times over the same data directory. After every kill, everything the child acknowledged is
 * in the logs, and `reindex` into a fresh database gives, for every conversation the child
 * finished, the same listing record and search entry as the live index had, and finds every
 * acknowledged message both there and in the live index.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileConversationLoader } from '../../src/dao/file-conversation-loader.js';
import { reindex } from '../../src/dao/reindex.js';
import { SqliteConversationSearchIndex } from '../../src/dao/sqlite-conversation-search-index.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { transpileSources } from '../helpers/transpile.js';

const childScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'index-crash-child.mjs');
/** Each run costs a child start (~0.3 s, mostly loading the protocol schemas) plus up to 0.15 s of writing and a reindex check. */
const KILLS = 50;

interface Ack {
  conversationId: string;
  stream: string;
  seq: number;
  word?: string;
}

let workDirectory: string;
let sourceUrl: string;

/** Runs one child until it is killed; returns what it acknowledged and the conversations it finished. */
function runChild(root: string, run: number): Promise<{ acks: Ack[]; done: string[]; stderr: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, sourceUrl, root, String(run)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      child.kill('SIGKILL');
    };
    // Most runs die a random moment after their first acknowledgement; some during start-up.
    if (run % 10 === 0) timer = setTimeout(kill, Math.random() * 150);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      timer ??= setTimeout(kill, Math.random() * 150);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const safety = setTimeout(kill, 5000);
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      clearTimeout(safety);
      const lines = stdout.split('\n').slice(0, -1); // the last piece is incomplete (or empty)
      const acks = lines.filter((line) => line.startsWith('ack ')).map((line) => {
        const [conversationId, stream, seq, word] = line.slice(4).split(' ') as [string, string, string, string | undefined];
        return { conversationId, stream, seq: Number(seq), ...(word ? { word } : {}) };
      });
      const done = lines.filter((line) => line.startsWith('done ')).map((line) => line.slice(5));
      resolve({ acks, done, stderr, signal });
    });
  });
}

/** The index as a client sees it, per conversation: the listing record and the search entry. */
function readIndex(file: string): { records: Map<string, unknown>; search: Map<string, unknown>; find: (word: string) => string[]; close: () => void } {
  const database = new Database(file);
  const records = new Map((database.prepare('SELECT key, value, updated_at FROM records_conversations').all() as { key: string }[]).map((row) => [row.key, row]));
  const search = new Map((database.prepare('SELECT conversation_id, title, updated_at FROM conversation_search').all() as { conversation_id: string }[]).map((row) => [row.conversation_id, row]));
  const match = database.prepare('SELECT DISTINCT c.conversation_id AS id FROM conversation_search c JOIN conversation_search_text t ON t.rowid >> 32 = c.number WHERE conversation_search_text MATCH ?');
  return { records, search, find: (word) => (match.all(word) as { id: string }[]).map((row) => row.id), close: () => database.close() };
}

beforeAll(() => {
  workDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-index-crash-'));
  sourceUrl = transpileSources(['storage', 'protocol', 'dao'], path.join(workDirectory, 'build'))('');
  if (!sourceUrl.endsWith('/')) sourceUrl += '/';
});

afterAll(() => {
  fs.rmSync(workDirectory, { recursive: true, force: true });
});

describe('the conversation index under SIGKILL', () => {
  it(`rebuilds, after each of ${KILLS} kills, the index the child had for everything it acknowledged`, { timeout: 120_000 }, async () => {
    const root = path.join(workDirectory, 'data');
    const acknowledged: Ack[] = [];
    const finished: string[] = [];
    let killedWhileWriting = 0;
    for (let run = 1; run <= KILLS; run += 1) {
      const { acks, done, stderr, signal } = await runChild(root, run);
      expect(signal, `run ${run} stderr: ${stderr}`).toBe('SIGKILL');
      expect(stderr, `run ${run}`).not.toMatch(/corrupt_line|Error/);
      if (acks.length > 0) killedWhileWriting += 1;
      acknowledged.push(...acks);
      finished.push(...done);
      if (acks.length === 0) continue;

      // Every acknowledged entry is in the logs.
      const logs = new FileLogStorage(root, { onProblem: () => undefined });
      for (const ack of acks) {
        const entries = await logs.read(`conversations/${ack.conversationId}`, ack.stream, { after: ack.seq - 1, limit: 1 });
        expect(entries[0]?.seq, `run ${run}: ${ack.conversationId}/${ack.stream} seq ${ack.seq}`).toBe(ack.seq);
      }

      // The live index as the killed child left it, then a rebuild into a fresh database.
      const live = readIndex(path.join(root, 'metadata.db'));
      const freshFile = path.join(workDirectory, `fresh-${run}.db`);
      const fresh = new Database(freshFile);
      const loader = createFileConversationLoader(root);
      await reindex(logs, new SqliteRecordStorage(fresh), { search: new SqliteConversationSearchIndex(fresh), loader });
      await loader.close();
      await logs.close();
      fresh.close();
      const rebuilt = readIndex(freshFile);
      for (const conversationId of finished) {
        expect(rebuilt.records.get(conversationId), `run ${run}: record of ${conversationId}`).toEqual(live.records.get(conversationId));
        expect(rebuilt.search.get(conversationId), `run ${run}: search entry of ${conversationId}`).toEqual(live.search.get(conversationId));
        expect(live.records.get(conversationId), `run ${run}: ${conversationId} is indexed`).toBeDefined();
      }
      // The index is written after the log, so it never knows a conversation the logs lack.
      for (const conversationId of live.records.keys()) expect(rebuilt.records.has(conversationId), `run ${run}: ${conversationId} indexed but not in the logs`).toBe(true);
      for (const conversationId of live.search.keys()) expect(rebuilt.search.has(conversationId), `run ${run}: ${conversationId} searchable but not in the logs`).toBe(true);
      for (const ack of acknowledged.filter((entry) => entry.word !== undefined)) {
        expect(live.find(ack.word as string), `run ${run}: live search for ${ack.word}`).toEqual([ack.conversationId]);
        expect(rebuilt.find(ack.word as string), `run ${run}: rebuilt search for ${ack.word}`).toEqual([ack.conversationId]);
      }
      live.close();
      rebuilt.close();
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${freshFile}${suffix}`, { force: true });
    }
    expect(killedWhileWriting).toBeGreaterThan(KILLS / 2);
    expect(finished.length).toBeGreaterThan(KILLS / 2);
    expect(acknowledged.filter((ack) => ack.word !== undefined).length).toBeGreaterThan(KILLS);
  });
});

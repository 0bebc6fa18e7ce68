/**
 * Staged storages (SPEC §4): a new conversation stays in memory until committed, and an
 * empty one never reaches the disk.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogStorage } from '../../src/storage/log-storage.js';
import { SqliteLogStorage } from '../../src/storage/sqlite/sqlite-log-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { StagedLogStorage } from '../../src/storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../../src/storage/staged/staged-record-storage.js';

let directory: string;
const toClose: { close(): Promise<void> }[] = [];

beforeEach(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-staged-'));
});

afterEach(async () => {
  await Promise.allSettled(toClose.splice(0).map((each) => each.close()));
  fs.rmSync(directory, { recursive: true, force: true });
});

function filesUnder(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
}

function stagedLogs(real: LogStorage = new FileLogStorage(directory)): { staged: StagedLogStorage; memory: SqliteLogStorage } {
  const memory = new SqliteLogStorage(':memory:');
  const staged = new StagedLogStorage(real, { memory });
  toClose.push(staged);
  return { staged, memory };
}

describe('StagedLogStorage', () => {
  it('keeps a staged path off the disk, before commit and after a restart', async () => {
    const { staged } = stagedLogs();
    staged.stage('conversations/conv_new');
    expect(staged.isStaged('conversations/conv_new/sub')).toBe(true);
    await staged.append('conversations/conv_new', 'metadata', [{ created: true }]);
    expect(await staged.read('conversations/conv_new', 'metadata')).toEqual([{ seq: 1, value: { created: true } }]);
    expect(await staged.listPaths('conversations')).toEqual(['conv_new']);
    expect(filesUnder(directory)).toEqual([]);
    await staged.close();
    const restarted = new FileLogStorage(directory);
    toClose.push(restarted);
    expect(await restarted.listPaths('conversations')).toEqual([]);
    expect(filesUnder(directory)).toEqual([]);
  });

  it('leaves nothing behind for an empty staged path, committed or discarded', async () => {
    const { staged } = stagedLogs();
    staged.stage('conversations/empty');
    expect(await staged.read('conversations/empty', 'metadata')).toEqual([]);
    expect(await staged.listPaths('conversations')).toEqual([]);
    await staged.commit('conversations/empty');
    expect(staged.isStaged('conversations/empty')).toBe(false);
    staged.stage('conversations/dropped');
    await staged.append('conversations/dropped', 'metadata', [1, 2]);
    await staged.discard('conversations/dropped');
    expect(await staged.read('conversations/dropped', 'metadata')).toEqual([]);
    expect(filesUnder(directory)).toEqual([]);
  });

  it('commits every stream under the path with its seq, frees the memory and switches over', async () => {
    const { staged, memory } = stagedLogs();
    staged.stage('conversations/conv_1');
    await staged.append('conversations/conv_1', 'metadata', ['a', 'b', 'c']);
    await staged.append('conversations/conv_1', 'sess_1', ['x']);
    await staged.append('conversations/conv_1/attachments', 'index', ['nested']);
    await staged.commit('conversations/conv_1');
    expect(await memory.listPaths('')).toEqual([]);
    const disk = new FileLogStorage(directory);
    toClose.push(disk);
    expect(await disk.read('conversations/conv_1', 'metadata')).toEqual([
      { seq: 1, value: 'a' },
      { seq: 2, value: 'b' },
      { seq: 3, value: 'c' },
    ]);
    expect(await disk.read('conversations/conv_1/attachments', 'index')).toEqual([{ seq: 1, value: 'nested' }]);
    expect(await staged.append('conversations/conv_1', 'metadata', ['d'])).toEqual([{ seq: 4, value: 'd' }]);
    expect(fs.readFileSync(path.join(directory, 'conversations', 'conv_1', 'metadata.jsonl'), 'utf8').split('\n')).toHaveLength(5);
  });

  it('holds operations that arrive during a commit and runs them on the real side', async () => {
    const { staged } = stagedLogs();
    staged.stage('c');
    await staged.append('c', 'main', Array.from({ length: 2500 }, (_, index) => index));
    const commit = staged.commit('c');
    const during = staged.append('c', 'main', ['during']);
    const read = staged.read('c', 'main', { direction: 'backward', limit: 1 });
    await commit;
    expect(await during).toEqual([{ seq: 2501, value: 'during' }]);
    expect((await read)[0]?.seq).toBeGreaterThanOrEqual(2500);
    const disk = new FileLogStorage(directory);
    toClose.push(disk);
    expect(await disk.lastSeq('c', 'main')).toBe(2501);
  });

  it('refuses to commit over entries the real storage already has, and stays staged', async () => {
    const real = new FileLogStorage(directory);
    await real.append('c', 'main', ['existing']);
    const { staged } = stagedLogs(real);
    staged.stage('c');
    await staged.append('c', 'main', ['staged']);
    await expect(staged.commit('c')).rejects.toThrow(/already has entries/);
    expect(staged.isStaged('c')).toBe(true);
    expect(await staged.read('c', 'main')).toEqual([{ seq: 1, value: 'staged' }]);
    expect(await real.read('c', 'main')).toEqual([{ seq: 1, value: 'existing' }]);
  });

  it('rolls a failed commit back and keeps the staged data', async () => {
    const real = new FileLogStorage(directory);
    let appends = 0;
    const failing: LogStorage = Object.assign(Object.create(real) as LogStorage, {
      append: async (...args: Parameters<LogStorage['append']>) => {
        appends += 1;
        if (appends === 2) throw new Error('disk full');
        return real.append(...args);
      },
    });
    const { staged } = stagedLogs(failing);
    staged.stage('c');
    await staged.append('c', 'first', [1]);
    await staged.append('c', 'second', [2]);
    await expect(staged.commit('c')).rejects.toThrow(/disk full/);
    expect(await real.listStreams('c')).toEqual([]);
    expect(await staged.read('c', 'first')).toEqual([{ seq: 1, value: 1 }]);
    expect(staged.isStaged('c')).toBe(true);
    await staged.commit('c');
    expect(await real.listStreams('c')).toEqual(['first', 'second']);
  });

  it('rejects overlapping stages and hand-overs of unstaged paths', async () => {
    const { staged } = stagedLogs();
    staged.stage('a/b');
    expect(() => staged.stage('a/b')).toThrow(/already staged/);
    expect(() => staged.stage('a')).toThrow(/"a\/b" is already staged/);
    expect(() => staged.stage('a/b/c')).toThrow(/already staged/);
    expect(() => staged.stage('a/../b')).toThrow(/\.\./);
    await expect(staged.commit('x')).rejects.toThrow(/not staged/);
    await expect(staged.discard('x')).rejects.toThrow(/not staged/);
  });

  it('merges staged paths into the listings of their parent and deletes them with it', async () => {
    const { staged } = stagedLogs();
    await staged.append('conversations/conv_a', 'metadata', [1]);
    staged.stage('conversations/conv_b');
    staged.stage('conversations/conv_c');
    await staged.append('conversations/conv_b', 'metadata', [1]);
    expect(await staged.listPaths('conversations')).toEqual(['conv_a', 'conv_b']);
    expect(await staged.listPaths('')).toEqual(['conversations']);
    await staged.deletePath('conversations');
    expect(await staged.listPaths('conversations')).toEqual([]);
    expect(await staged.read('conversations/conv_b', 'metadata')).toEqual([]);
  });
});

describe('StagedRecordStorage', () => {
  let databasePath: string;
  let staged: StagedRecordStorage;

  beforeEach(() => {
    databasePath = path.join(directory, 'metadata.db');
    staged = new StagedRecordStorage(new SqliteRecordStorage(databasePath));
    toClose.push(staged);
    staged.defineNamespace({ name: 'conversations', filterFields: ['cwd'] });
  });

  function rowsOnDisk(): string[] {
    const database = new Database(databasePath, { readonly: true });
    try {
      return (database.prepare('SELECT key FROM records_conversations ORDER BY key').all() as { key: string }[]).map((row) => row.key);
    } finally {
      database.close();
    }
  }

  it('keeps a staged record off the disk until commit, then moves it with its update time', async () => {
    await staged.set('conversations', 'conv_old', { cwd: '/a' }, 10);
    staged.stage('conversations', 'conv_new');
    await staged.set('conversations', 'conv_new', { cwd: '/a' }, 20);
    expect(rowsOnDisk()).toEqual(['conv_old']);
    const listed = await staged.list('conversations', { orderBy: 'updatedAt', order: 'desc', where: { cwd: '/a' } });
    expect(listed.records.map((record) => record.key)).toEqual(['conv_new', 'conv_old']);
    await staged.commit('conversations', 'conv_new');
    expect(staged.isStaged('conversations', 'conv_new')).toBe(false);
    expect(rowsOnDisk()).toEqual(['conv_new', 'conv_old']);
    expect(await staged.get('conversations', 'conv_new')).toEqual({ key: 'conv_new', value: { cwd: '/a' }, updatedAt: 20 });
  });

  it('writes nothing for an empty or discarded staged key', async () => {
    staged.stage('conversations', 'empty');
    await staged.commit('conversations', 'empty');
    staged.stage('conversations', 'dropped');
    await staged.set('conversations', 'dropped', { cwd: '/x' });
    await staged.discard('conversations', 'dropped');
    expect(await staged.get('conversations', 'dropped')).toBeUndefined();
    expect(rowsOnDisk()).toEqual([]);
  });

  it('holds writes that arrive during a commit and applies them on the real side', async () => {
    staged.stage('conversations', 'c');
    await staged.set('conversations', 'c', { cwd: '/1' }, 1);
    const commit = staged.commit('conversations', 'c');
    const during = staged.set('conversations', 'c', { cwd: '/2' }, 2);
    await Promise.all([commit, during]);
    expect(await staged.get('conversations', 'c')).toEqual({ key: 'c', value: { cwd: '/2' }, updatedAt: 2 });
    expect(rowsOnDisk()).toEqual(['c']);
  });

  it('rejects staging twice and hand-overs of unstaged keys', async () => {
    staged.stage('conversations', 'k');
    expect(() => staged.stage('conversations', 'k')).toThrow(/already staged/);
    expect(() => staged.stage('undeclared', 'k')).toThrow(/undeclared/);
    await expect(staged.commit('conversations', 'other')).rejects.toThrow(/not staged/);
  });
});

/**
 * SQLite specifics beyond the conformance suites: database settings, sharing one database,
 * ownership on close, persistence and index use.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteLogStorage } from '../../src/storage/sqlite/sqlite-log-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';

let directory: string;

beforeEach(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-sqlite-'));
});

afterEach(() => {
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('SQLite storages', () => {
  it('open a database file in WAL mode with synchronous=FULL, creating its directory', async () => {
    const database = openSqliteDatabase(path.join(directory, 'nested', 'metadata.db'));
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(database.pragma('synchronous', { simple: true })).toBe(2);
    database.close();
  });

  it('share one database, and leave a database they were given open', async () => {
    const database = new Database(path.join(directory, 'shared.db'));
    const logs = new SqliteLogStorage(database);
    const records = new SqliteRecordStorage(database);
    records.defineNamespace({ name: 'items' });
    await logs.append('conv', 'main', ['entry']);
    await records.set('items', 'k', { v: 1 }, 5);
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    await logs.close();
    await records.close();
    expect(database.open).toBe(true);
    const tables = (database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((row) => row.name);
    expect(tables).toEqual(['log_entries', 'log_streams', 'records_items']);
    database.close();
  });

  it('close a database they opened from a path, and keep its data for the next opening', async () => {
    const file = path.join(directory, 'metadata.db');
    const first = new SqliteRecordStorage(file);
    first.defineNamespace({ name: 'items', filterFields: ['cwd'] });
    await first.set('items', 'k', { cwd: '/w' }, 7);
    const logs = new SqliteLogStorage(file);
    await logs.append('p', 's', [1, 2]);
    await first.close();
    await logs.close();
    await expect(first.get('items', 'k')).rejects.toThrow(/closed/);
    const second = new SqliteRecordStorage(file);
    second.defineNamespace({ name: 'items', filterFields: ['cwd'] });
    expect(await second.get('items', 'k')).toEqual({ key: 'k', value: { cwd: '/w' }, updatedAt: 7 });
    expect((await second.list('items', { where: { cwd: '/w' } })).records).toHaveLength(1);
    await second.close();
    const reopenedLogs = new SqliteLogStorage(file);
    expect(await reopenedLogs.append('p', 's', [3])).toEqual([{ seq: 3, value: 3 }]);
    await reopenedLogs.close();
  });

  it('use indexes for filtered and time-ordered listings', async () => {
    const database = new Database(':memory:');
    const records = new SqliteRecordStorage(database);
    records.defineNamespace({ name: 'items', filterFields: ['cwd'] });
    await records.mset('items', Array.from({ length: 200 }, (_, index) => ({ key: `k${index}`, value: { cwd: `/w${index % 5}` }, updatedAt: index })));
    database.exec('ANALYZE');
    const plan = (sql: string, ...parameters: unknown[]): string =>
      (database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as { detail: string }[]).map((row) => row.detail).join(' | ');
    const filtered = plan(
      `SELECT key FROM "records_items" WHERE json_extract(value, '$.cwd') = ? AND (updated_at, key) < (?, ?) ORDER BY updated_at DESC, key DESC LIMIT 10`,
      '/w1',
      100,
      'k100',
    );
    expect(filtered).toMatch(/records_items__field_cwd/);
    expect(filtered).not.toMatch(/TEMP B-TREE/);
    const byTime = plan('SELECT key FROM "records_items" ORDER BY updated_at DESC, key DESC LIMIT 10');
    expect(byTime).toMatch(/records_items__updated/);
    expect(byTime).not.toMatch(/TEMP B-TREE/);
    database.close();
  });

  it('report a database file that cannot be opened, naming it', () => {
    const file = path.join(directory, 'not-a-database.db');
    fs.writeFileSync(file, 'this is not a database file, just some text that is long enough to be read as a header');
    expect(() => new SqliteRecordStorage(file)).toThrow(/not-a-database\.db/);
  });

  it('skip and report a stored log value that no longer parses', async () => {
    const database = new Database(':memory:');
    const problems: string[] = [];
    const logs = new SqliteLogStorage(database, { onProblem: (problem) => problems.push(problem.location) });
    await logs.append('p', 's', [1, 2, 3]);
    database.prepare('UPDATE log_entries SET value = ? WHERE seq = 2').run('{broken');
    expect((await logs.read('p', 's')).map((entry) => entry.seq)).toEqual([1, 3]);
    expect(problems).toEqual([expect.stringContaining('seq 2')]);
    database.close();
  });
});

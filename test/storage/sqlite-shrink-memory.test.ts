/**
 * `shrinkSqliteMemory` frees the caches of every open database of this thread, skips one in the
 * middle of a query, forgets closed ones, and leaves the data as it was.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase, shrinkSqliteMemory, type SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';

const opened: SqliteDatabase[] = [];
const directories: string[] = [];

afterEach(() => {
  for (const database of opened.splice(0)) if (database.open) database.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function open(name: string): SqliteDatabase {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-shrink-'));
  directories.push(directory);
  const database = openSqliteDatabase(path.join(directory, name));
  opened.push(database);
  database.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
  const insert = database.prepare('INSERT INTO notes (body) VALUES (?)');
  database.transaction(() => {
    for (let index = 0; index < 200; index++) insert.run(`note ${index}`);
  })();
  return database;
}

describe('shrinkSqliteMemory', () => {
  it('shrinks every open database, counts a busy one, and forgets closed ones', () => {
    const before = shrinkSqliteMemory();
    const first = open('first.db');
    const second = open('second.db');
    const third = open('third.db');
    expect(shrinkSqliteMemory().shrunk).toBe(before.shrunk + 3);

    // An iteration in progress holds its connection: that one is skipped, the others shrink.
    const rows = second.prepare('SELECT body FROM notes ORDER BY id').iterate() as IterableIterator<{ body: string }>;
    expect(rows.next().value?.body).toBe('note 0');
    const during = shrinkSqliteMemory();
    expect(during.busy).toBe(before.busy + 1);
    expect(during.shrunk).toBe(before.shrunk + 2);
    expect(rows.next().value?.body).toBe('note 1');
    rows.return?.();

    third.close();
    expect(shrinkSqliteMemory()).toEqual({ shrunk: before.shrunk + 2, busy: before.busy });
    expect(first.prepare('SELECT count(*) AS count FROM notes').get()).toEqual({ count: 200 });
    expect(second.prepare('SELECT body FROM notes WHERE id = 200').get()).toEqual({ body: 'note 199' });
  });
});

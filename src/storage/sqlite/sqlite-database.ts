/**
 * Opening and configuring the better-sqlite3 database shared by the SQLite storages
 * (SPEC §4: `metadata.db`, and the in-memory database behind staged conversations).
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import Database from 'better-sqlite3';
import { makeDirectorySync } from '../../make-directory.js';

/** A better-sqlite3 database handle. */
export type SqliteDatabase = Database.Database;

/** What a SQLite storage is built on: an open database (shared, owned by the caller) or a file path (or `':memory:'`). */
export type SqliteDatabaseSource = SqliteDatabase | string;

/** How long a statement waits for a lock held by another connection, in ms. */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * How SQLite syncs commits (SQLite docs, "PRAGMA synchronous"): `FULL` makes a commit durable
 * once it returns, even across a power loss; `NORMAL` in WAL mode never corrupts the database
 * and keeps every commit when the process dies, but may lose the last commits when the
 * operating system does — right for data that can be rebuilt, at a fraction of the cost.
 */
export type SqliteSynchronous = 'FULL' | 'NORMAL';

/**
 * Applies the settings every storage relies on: WAL journal (readers never block the writer),
 * the synchronous level (default `FULL`: log appends depend on it) and a busy timeout of
 * {@link SQLITE_BUSY_TIMEOUT_MS}. Idempotent; in-memory databases keep their `memory` journal.
 */
export function configureSqliteDatabase(database: SqliteDatabase, synchronous: SqliteSynchronous = 'FULL'): void {
  if (!database.memory) database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${synchronous}`);
  database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  configuredDatabases.add(database);
}

/**
 * The databases configured in this thread, for {@link shrinkSqliteMemory}. Closed ones are
 * dropped at the next shrink: better-sqlite3 has no close event.
 */
const configuredDatabases = new Set<SqliteDatabase>();

/** What {@link shrinkSqliteMemory} did: databases whose caches were freed, and those skipped because a statement was running on them. */
export interface SqliteShrinkResult {
  shrunk: number;
  busy: number;
}

/**
 * Frees the page cache and other memory SQLite can do without (`PRAGMA shrink_memory`, SQLite
 * docs) of every open database configured in this thread. Each connection otherwise keeps up to
 * its cache size (2 MiB by default) of pages for as long as it stays open: after a turn that
 * indexed a long answer that is most of the C heap the server grew. Meant for an idle moment; the
 * next statements read their pages again. A connection in the middle of an iteration refuses
 * (better-sqlite3: "This database connection is busy executing a query") and is counted as busy,
 * to be shrunk another time.
 */
export function shrinkSqliteMemory(): SqliteShrinkResult {
  const result: SqliteShrinkResult = { shrunk: 0, busy: 0 };
  for (const database of configuredDatabases) {
    if (!database.open) {
      configuredDatabases.delete(database);
      continue;
    }
    try {
      database.pragma('shrink_memory');
      result.shrunk++;
    } catch (error) {
      if (!(error instanceof TypeError) || !/busy/i.test(error.message)) throw error;
      result.busy++;
    }
  }
  return result;
}

/**
 * Opens (creating it and its directory if needed) and configures a database file, or an
 * in-memory database for `':memory:'`.
 *
 * @throws Error naming the file when it cannot be opened (not a database, no permission).
 */
export function openSqliteDatabase(filePath: string, synchronous: SqliteSynchronous = 'FULL'): SqliteDatabase {
  if (typeof filePath !== 'string' || filePath === '') {
    throw new Error('A SQLite storage needs a database file path or ":memory:"');
  }
  let database: SqliteDatabase;
  try {
    if (filePath !== ':memory:') {
      // Owner only: the index holds titles and message text. SQLite gives its WAL and
      // shared-memory files the database file's permissions, so creating it 0600 covers them.
      makeDirectorySync(nodePath.dirname(nodePath.resolve(filePath)), 0o700);
      fs.closeSync(fs.openSync(filePath, 'a', 0o600));
    }
    database = new Database(filePath);
    configureSqliteDatabase(database, synchronous);
  } catch (error) {
    throw new Error(`Cannot open SQLite database ${filePath}: ${(error as Error).message}`, { cause: error });
  }
  return database;
}

/**
 * Resolves a {@link SqliteDatabaseSource}: a path is opened (`synchronous=FULL`) and then owned
 * (closed by the storage); a database handle is configured, keeping the synchronous level its
 * owner chose, and stays the caller's to close.
 */
export function resolveSqliteDatabase(source: SqliteDatabaseSource): { database: SqliteDatabase; owned: boolean } {
  if (typeof source === 'string') return { database: openSqliteDatabase(source), owned: true };
  if (source === null || typeof source !== 'object' || typeof source.prepare !== 'function') {
    throw new Error('A SQLite storage needs a better-sqlite3 Database or a file path');
  }
  const level = source.pragma('synchronous', { simple: true });
  configureSqliteDatabase(source, level === 1 ? 'NORMAL' : 'FULL');
  return { database: source, owned: false };
}

/** Quotes an SQL identifier (table or index name). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

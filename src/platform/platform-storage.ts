/**
 * The platform's own database (SPEC §9): `<data dir>/platform.db`, a SQLite file holding users,
 * sessions, tokens and invitations as records (`RecordStorage`, SPEC §4). Unlike `metadata.db`
 * this is a source of truth: it is never rebuilt or deleted by the server.
 */
import path from 'node:path';
import type { RecordStorage } from '../storage/record-storage.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';
import { PLATFORM_DATABASE_FILE } from './platform-database.js';

export { PLATFORM_DATABASE_FILE };

/**
 * Opens (creating it with mode 0600 when missing) the platform database of a data directory as
 * a record storage of its own, for tools and tests of single stores. The server opens it once,
 * through `Platform.open` (`openPlatformDatabase`), and every store shares that connection.
 * @throws Error naming the file when it cannot be opened
 */
export function openPlatformStorage(dataDir: string): RecordStorage {
  return new SqliteRecordStorage(path.join(dataDir, PLATFORM_DATABASE_FILE));
}

/**
 * Runs tasks one after another: read-check-write sequences of a store (e.g. "is this the last
 * administrator?" then "demote") must not interleave with another one.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` after every task queued before it; resolves or rejects with its outcome. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

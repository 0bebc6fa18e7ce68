/**
 * The platform database (SPEC §9, "Platform layer"): `<data-dir>/platform.db`, the source of
 * truth for projects, members, secrets, per-user state, users and sessions. Unlike
 * `metadata.db` it cannot be rebuilt from the conversation logs, so it is opened with
 * `synchronous=FULL` and never deleted on damage.
 *
 * Every platform module opens its namespaces on the one {@link RecordStorage} returned here,
 * so the data directory holds one platform file.
 */
import path from 'node:path';
import { openSqliteDatabase, type SqliteDatabase } from '../storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';
import type { RecordStorage } from '../storage/record-storage.js';

/** File name of the platform database inside the data directory. */
export const PLATFORM_DATABASE_FILE = 'platform.db';

/** The opened platform database. */
export interface PlatformDatabase {
  /** Records of every platform module (each declares its own namespaces). */
  records: RecordStorage;
  /** The SQLite handle under `records` (for modules that need a transaction across namespaces). */
  database: SqliteDatabase;
  /** Closes the database. */
  close(): Promise<void>;
}

/**
 * Opens (creating it, mode 0600, if missing) `<dataDir>/platform.db`.
 * @param dataDir the server's data directory
 * @throws Error naming the file when it cannot be opened (not a database, no permission)
 */
export function openPlatformDatabase(dataDir: string): PlatformDatabase {
  const database = openSqliteDatabase(path.join(dataDir, PLATFORM_DATABASE_FILE), 'FULL');
  const records = new SqliteRecordStorage(database);
  return {
    records,
    database,
    async close() {
      await records.close();
      database.close();
    },
  };
}

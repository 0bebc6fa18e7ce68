/**
 * The platform database (SPEC §9, "Platform layer"): `<data-dir>/platform.db`, the source of
 * truth for projects, members, secrets, per-user state, users and sessions. Unlike
 * `metadata.db` it cannot be rebuilt from the conversation logs, so it is opened with
 * `synchronous=FULL` and never deleted on damage.
 *
 * Every platform module opens its namespaces on the one {@link RecordStorage} returned here,
 * so the data directory holds one platform file.
 *
 * The projects and their secrets are used with platform mode off too (every connection is then
 * the local owner, and the secrets' values are redacted from logs), so a damaged file stops every
 * start: starting without it would run with none of the projects' secrets to redact.
 */
import path from 'node:path';
import { openStoredDatabase } from '../storage/sqlite/damaged-database.js';
import type { SqliteDatabase } from '../storage/sqlite/sqlite-database.js';
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
 * @throws DamagedDatabaseError when it is not a database SQLite can read (or a directory is in
 *   its place): names the file, and says to restore it from a backup or move it aside; the file
 *   is neither moved nor replaced
 * @throws Error naming the file when it cannot be opened otherwise (no permission)
 */
export function openPlatformDatabase(dataDir: string): PlatformDatabase {
  const database = openStoredDatabase(
    {
      file: path.join(dataDir, PLATFORM_DATABASE_FILE),
      holds: "the projects with their members, conversation bindings and encrypted secrets, each person's settings, the cost records and, in platform mode, the users, sessions and API tokens (it is used with platform mode off too)",
      withoutIt: 'them (the conversations themselves are kept, outside any project)',
    },
    'FULL',
  );
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

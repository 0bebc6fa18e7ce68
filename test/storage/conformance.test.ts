/**
 * Runs the LogStorage and RecordStorage conformance suites against every backend.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import { PostgresLogStorage } from '../../src/storage/postgres/postgres-log-storage.js';
import { PostgresRecordStorage } from '../../src/storage/postgres/postgres-record-storage.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogProblem } from '../../src/storage/log-storage.js';
import { SqliteLogStorage } from '../../src/storage/sqlite/sqlite-log-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { StagedLogStorage } from '../../src/storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../../src/storage/staged/staged-record-storage.js';
import { runLogStorageConformance, type StorageUnderTest } from './log-storage.conformance.js';
import { runRecordStorageConformance } from './record-storage.conformance.js';
import { createTestSchema, dropTestSchema, startTestPostgres, type ThrowawayPostgres } from '../helpers/postgres-server.js';
import { AutoStagingLogStorage, AutoStagingRecordStorage, type StagingMode } from './staging-adapters.js';

async function temporaryDirectory(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'openvaala-storage-'));
}

/** A FileLogStorage in a fresh directory; cleanup fails the test if any problem was reported (nothing is damaged here). */
async function fileLogStorage(): Promise<StorageUnderTest<FileLogStorage> & { directory: string }> {
  const directory = await temporaryDirectory();
  const problems: LogProblem[] = [];
  const storage = new FileLogStorage(directory, { onProblem: (problem) => problems.push(problem) });
  return {
    storage,
    directory,
    cleanup: async () => {
      await fs.rm(directory, { recursive: true, force: true });
      if (problems.length > 0) throw new Error(`unexpected problems reported: ${JSON.stringify(problems)}`);
    },
  };
}

async function sqliteFile(): Promise<{ database: Database.Database; directory: string }> {
  const directory = await temporaryDirectory();
  return { database: new Database(path.join(directory, 'storage.db')), directory };
}

/** One throwaway PostgreSQL cluster for the whole file, started by the first test that needs it. */
let postgres: Promise<ThrowawayPostgres> | undefined;
afterAll(async () => {
  await (await postgres)?.stop();
});

/** A fresh schema in the shared cluster, with its own pool; cleanup drops the schema. */
async function postgresDatabase(): Promise<{ database: PostgresDatabase; cleanup: () => Promise<void> }> {
  postgres ??= startTestPostgres();
  const server = await postgres;
  const schema = await createTestSchema(server);
  const database = new PostgresDatabase({ connectionString: server.connectionString, schema, maxConnections: 4 });
  return {
    database,
    cleanup: async () => {
      await database.close();
      await dropTestSchema(server, schema);
    },
  };
}

runLogStorageConformance('file', fileLogStorage);

runLogStorageConformance('postgresql', async () => {
  const { database, cleanup } = await postgresDatabase();
  const problems: LogProblem[] = [];
  return {
    storage: new PostgresLogStorage(database, { onProblem: (problem) => problems.push(problem) }),
    cleanup: async () => {
      await cleanup();
      if (problems.length > 0) throw new Error(`unexpected problems reported: ${JSON.stringify(problems)}`);
    },
  };
});

runRecordStorageConformance('postgresql', async () => {
  const { database, cleanup } = await postgresDatabase();
  return { storage: new PostgresRecordStorage(database), cleanup };
});

runLogStorageConformance('sqlite (database file)', async () => {
  const directory = await temporaryDirectory();
  return {
    storage: new SqliteLogStorage(path.join(directory, 'logs.db')),
    cleanup: () => fs.rm(directory, { recursive: true, force: true }),
  };
});

runLogStorageConformance('sqlite (in memory, sharing a database with records)', async () => {
  const database = new Database(':memory:');
  const records = new SqliteRecordStorage(database);
  records.defineNamespace({ name: 'neighbour' });
  await records.set('neighbour', 'key', { unrelated: true });
  return {
    storage: new SqliteLogStorage(database),
    cleanup: async () => {
      database.close();
    },
  };
});

for (const mode of ['before-commit', 'after-commit', 'mixed'] as StagingMode[]) {
  runLogStorageConformance(`staged over file (${mode})`, async () => {
    const real = await fileLogStorage();
    return { storage: new AutoStagingLogStorage(new StagedLogStorage(real.storage), mode), cleanup: real.cleanup };
  });
}

runRecordStorageConformance('sqlite (database file)', async () => {
  const { database, directory } = await sqliteFile();
  return {
    storage: new SqliteRecordStorage(database),
    cleanup: async () => {
      database.close();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
});

runRecordStorageConformance('sqlite (in memory, by path)', async () => ({ storage: new SqliteRecordStorage(':memory:') }));

for (const mode of ['before-commit', 'after-commit', 'mixed'] as StagingMode[]) {
  runRecordStorageConformance(`staged over sqlite (${mode})`, async () => {
    const directory = await temporaryDirectory();
    const real = new SqliteRecordStorage(path.join(directory, 'metadata.db'));
    return {
      storage: new AutoStagingRecordStorage(new StagedRecordStorage(real), mode),
      cleanup: () => fs.rm(directory, { recursive: true, force: true }),
    };
  });
}

/**
 * Runs the LogStorage and RecordStorage conformance suites against every backend.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogProblem } from '../../src/storage/log-storage.js';
import { SqliteLogStorage } from '../../src/storage/sqlite/sqlite-log-storage.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';
import { StagedLogStorage } from '../../src/storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../../src/storage/staged/staged-record-storage.js';
import { runLogStorageConformance, type StorageUnderTest } from './log-storage.conformance.js';
import { runRecordStorageConformance } from './record-storage.conformance.js';
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

runLogStorageConformance('file', fileLogStorage);

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

/**
 * The data directory's index, `metadata.db`, at server start (SPEC §4: the index is
 * rebuildable from the logs). A missing or unreadable index is replaced by a new one, rebuilt
 * from the conversation logs before the server accepts clients, so the listing never comes
 * up empty or broken.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFileConversationLoader } from '../dao/file-conversation-loader.js';
import { reindex, type ReindexReport } from '../dao/reindex.js';
import { SqliteConversationSearchIndex } from '../dao/sqlite-conversation-search-index.js';
import type { Logger } from '../logger.js';
import type { FileLogStorage } from '../storage/file/file-log-storage.js';
import { probeSqliteDatabase } from '../storage/sqlite/damaged-database.js';
import { openSqliteDatabase, type SqliteDatabase } from '../storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';

/** Name of the index file in the data directory. */
export const INDEX_FILE = 'metadata.db';
/** Where a damaged index is moved (one copy, replaced by the next), kept for inspection. */
export const DAMAGED_INDEX_FILE = 'metadata.db.damaged';

/**
 * Present while a server has the index open; removed when it closes it. The index is written
 * with `synchronous=NORMAL` (it can be rebuilt, and each step of a turn writes it), so after
 * the operating system went down with the index open its last commits may be missing: a
 * marker older than the system's boot says so, and the index is rebuilt.
 */
export const INDEX_OPEN_MARKER = 'metadata.db.open';

/** Why the index had to be rebuilt. */
export type IndexRebuildReason = 'missing' | 'damaged' | 'system-restart';

/** An opened index database. */
export interface OpenedIndex {
  database: SqliteDatabase;
  /** Set when the index was created anew and must be rebuilt from the logs. */
  rebuild?: { reason: IndexRebuildReason; detail?: string };
}

/**
 * Opens `metadata.db` in the data directory (mode 0600). A damaged file (and its WAL and
 * shared-memory files) is moved to `metadata.db.damaged` and a new one is created.
 * @throws Error naming the file when even a new database cannot be created
 */
export function openIndexDatabase(dataDir: string): OpenedIndex {
  const file = path.join(dataDir, INDEX_FILE);
  const missing = !fs.existsSync(file);
  const staleAfterRestart = openedBeforeBoot(path.join(dataDir, INDEX_OPEN_MARKER));
  let detail: string | undefined;
  let opened: OpenedIndex | undefined;
  try {
    const database = openSqliteDatabase(file, 'NORMAL');
    try {
      probeSqliteDatabase(database);
      opened = missing ? { database, rebuild: { reason: 'missing' } } : staleAfterRestart ? { database, rebuild: { reason: 'system-restart' } } : { database };
    } catch (error) {
      database.close();
      throw error;
    }
  } catch (error) {
    detail = error instanceof Error ? error.message : String(error);
  }
  if (!opened) {
    for (const suffix of ['', '-wal', '-shm']) {
      const damaged = `${file}${suffix}`;
      if (fs.existsSync(damaged)) fs.renameSync(damaged, `${path.join(dataDir, DAMAGED_INDEX_FILE)}${suffix}`);
    }
    opened = { database: openSqliteDatabase(file, 'NORMAL'), rebuild: { reason: 'damaged', ...(detail !== undefined ? { detail } : {}) } };
  }
  writeOpenMarker(dataDir);
  return opened;
}

/** Whether an open marker was left by a server that ran before the operating system last started. */
function openedBeforeBoot(marker: string): boolean {
  let modified: number;
  try {
    modified = fs.statSync(marker).mtimeMs;
  } catch {
    return false;
  }
  const bootedAt = Date.now() - os.uptime() * 1000;
  return modified < bootedAt;
}

function writeOpenMarker(dataDir: string): void {
  const descriptor = fs.openSync(path.join(dataDir, INDEX_OPEN_MARKER), 'w', 0o600);
  try {
    fs.writeSync(descriptor, `${process.pid}\n`);
    fs.fsyncSync(descriptor);
  } finally {
    fs.closeSync(descriptor);
  }
  const directory = fs.openSync(dataDir, 'r');
  try {
    fs.fsyncSync(directory);
  } finally {
    fs.closeSync(directory);
  }
}

/**
 * Closes the index (a checkpoint moves the WAL into the database file) and removes the open
 * marker, so the next start trusts it.
 */
export function closeIndexDatabase(dataDir: string, database: SqliteDatabase): void {
  database.close();
  fs.rmSync(path.join(dataDir, INDEX_OPEN_MARKER), { force: true });
}

const REBUILD_MESSAGES: Record<IndexRebuildReason, string> = {
  missing: `${INDEX_FILE} was missing: rebuilt from the conversation logs`,
  damaged: `${INDEX_FILE} was damaged: moved to ${DAMAGED_INDEX_FILE} and rebuilt from the conversation logs`,
  'system-restart': `${INDEX_FILE} was open when the operating system stopped, so its last writes may be missing: rebuilt from the conversation logs`,
};

/**
 * Rebuilds the index from the logs (listing and search), recovering turns a dead server left
 * running, and logs one line saying why and what was done.
 * @throws Error when the index cannot be written
 */
export async function rebuildIndex(dataDir: string, logs: FileLogStorage, database: SqliteDatabase, reason: NonNullable<OpenedIndex['rebuild']>, logger: Logger): Promise<ReindexReport> {
  const loader = createFileConversationLoader(dataDir, { onProblem: (problem) => logger.warn({ problem }, 'damaged log entry skipped') });
  try {
    const report = await reindex(logs, new SqliteRecordStorage(database), { search: new SqliteConversationSearchIndex(database), loader });
    logger.warn(
      { dataDir, reason: reason.reason, ...(reason.detail ? { detail: reason.detail } : {}), conversations: report.conversations, recoveredTurns: report.recoveredTurns, durationMs: Math.round(report.durationMs) },
      REBUILD_MESSAGES[reason.reason],
    );
    return report;
  } finally {
    await loader.close();
  }
}

/**
 * `openvaala reindex` (SPEC §2, §4): rebuilds `metadata.db` from the logs. It takes the data
 * directory's lock for the duration, so it is refused while a server runs (and a server
 * cannot start meanwhile).
 */
import { createFileConversationLoader } from '../dao/file-conversation-loader.js';
import { reindex, type ReindexReport } from '../dao/reindex.js';
import { SqliteConversationSearchIndex } from '../dao/sqlite-conversation-search-index.js';
import { acquireDataDirLock } from '../server/data-dir-lock.js';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import type { LogProblem } from '../storage/log-storage.js';
import { closeIndexDatabase, DAMAGED_INDEX_FILE, INDEX_FILE, openIndexDatabase } from '../server/index-database.js';
import type { SqliteDatabase } from '../storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';

/** What `reindex` found, including damaged log lines it skipped. */
export interface ReindexOutcome extends ReindexReport {
  problems: LogProblem[];
  /** Why the old `metadata.db` could not be opened, when it was damaged (it was moved to `metadata.db.damaged`). */
  damagedIndex?: string;
}

/**
 * Rebuilds the index of a data directory: the listing records and the conversation search,
 * both in `metadata.db`. A `metadata.db` SQLite cannot open (not a database, a directory) is
 * moved to `metadata.db.damaged` and a new one built, as a server starting on it does.
 * @throws DataDirLockedError naming the server's pid when one is running
 * @throws Error naming the file when even a new `metadata.db` cannot be created
 */
export async function runReindex(dataDir: string): Promise<ReindexOutcome> {
  const lock = acquireDataDirLock(dataDir);
  const problems: LogProblem[] = [];
  let database: SqliteDatabase | undefined;
  const logs = new FileLogStorage(dataDir, { onProblem: (problem) => problems.push(problem) });
  const loader = createFileConversationLoader(dataDir, { onProblem: (problem) => problems.push(problem) });
  try {
    const opened = openIndexDatabase(dataDir);
    database = opened.database;
    const index = new SqliteRecordStorage(database);
    const search = new SqliteConversationSearchIndex(database);
    const damagedIndex = opened.rebuild?.reason === 'damaged' ? (opened.rebuild.detail ?? 'unreadable') : undefined;
    return { ...(await reindex(logs, index, { search, loader })), problems, ...(damagedIndex !== undefined ? { damagedIndex } : {}) };
  } finally {
    await loader.close();
    await logs.close();
    if (database) closeIndexDatabase(dataDir, database);
    lock.release();
  }
}

/** Formats a reindex outcome for the terminal. */
export function formatReindexOutcome(outcome: ReindexOutcome): string {
  const lines = outcome.damagedIndex !== undefined ? [`${INDEX_FILE} could not be opened (${outcome.damagedIndex}): moved to ${DAMAGED_INDEX_FILE}; a new one was built`] : [];
  lines.push(`indexed ${outcome.conversations} ${outcome.conversations === 1 ? 'conversation' : 'conversations'} (${outcome.items} items, ${outcome.messages} searchable messages) in ${outcome.durationMs.toFixed(0)} ms`);
  if (outcome.recoveredTurns > 0) lines.push(`recorded ${outcome.recoveredTurns} ${outcome.recoveredTurns === 1 ? 'turn' : 'turns'} left running by a stopped server as interrupted`);
  for (const skipped of outcome.skipped) lines.push(`skipped ${skipped.conversationId}: ${skipped.reason}`);
  for (const invalid of outcome.invalidEntries) {
    // Seq 0 is no entry: the whole log could not be read.
    lines.push(invalid.seq === 0 ? `left out ${invalid.conversationId}/${invalid.stream}: ${invalid.message}` : `invalid entry in ${invalid.conversationId}/${invalid.stream} seq ${invalid.seq}: ${invalid.message}`);
  }
  for (const problem of outcome.problems) lines.push(`damaged log ${problem.location}: ${problem.message}`);
  return `${lines.join('\n')}\n`;
}

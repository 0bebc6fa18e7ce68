/**
 * `openvaala reindex` (SPEC §2, §4): rebuilds `metadata.db` from the logs. It takes the data
 * directory's lock for the duration, so it is refused while a server runs (and a server
 * cannot start meanwhile).
 */
import path from 'node:path';
import { createFileConversationLoader } from '../dao/file-conversation-loader.js';
import { reindex, type ReindexReport } from '../dao/reindex.js';
import { SqliteConversationSearchIndex } from '../dao/sqlite-conversation-search-index.js';
import { acquireDataDirLock } from '../server/data-dir-lock.js';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import type { LogProblem } from '../storage/log-storage.js';
import { openSqliteDatabase } from '../storage/sqlite/sqlite-database.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';

/** What `reindex` found, including damaged log lines it skipped. */
export interface ReindexOutcome extends ReindexReport {
  problems: LogProblem[];
}

/**
 * Rebuilds the index of a data directory: the listing records and the conversation search,
 * both in `metadata.db`.
 * @throws DataDirLockedError naming the server's pid when one is running
 * @throws Error naming the file when `metadata.db` cannot be opened
 */
export async function runReindex(dataDir: string): Promise<ReindexOutcome> {
  const lock = acquireDataDirLock(dataDir);
  const problems: LogProblem[] = [];
  let database: ReturnType<typeof openSqliteDatabase> | undefined;
  const logs = new FileLogStorage(dataDir, { onProblem: (problem) => problems.push(problem) });
  const loader = createFileConversationLoader(dataDir, { onProblem: (problem) => problems.push(problem) });
  try {
    database = openSqliteDatabase(path.join(dataDir, 'metadata.db'));
    const index = new SqliteRecordStorage(database);
    const search = new SqliteConversationSearchIndex(database);
    return { ...(await reindex(logs, index, { search, loader })), problems };
  } finally {
    await loader.close();
    await logs.close();
    database?.close();
    lock.release();
  }
}

/** Formats a reindex outcome for the terminal. */
export function formatReindexOutcome(outcome: ReindexOutcome): string {
  const lines = [`indexed ${outcome.conversations} ${outcome.conversations === 1 ? 'conversation' : 'conversations'} (${outcome.items} items, ${outcome.messages} searchable messages) in ${outcome.durationMs.toFixed(0)} ms`];
  if (outcome.recoveredTurns > 0) lines.push(`recorded ${outcome.recoveredTurns} ${outcome.recoveredTurns === 1 ? 'turn' : 'turns'} left running by a stopped server as interrupted`);
  for (const skipped of outcome.skipped) lines.push(`skipped ${skipped.conversationId}: ${skipped.reason}`);
  for (const invalid of outcome.invalidEntries) {
    // Seq 0 is no entry: the whole log could not be read.
    lines.push(invalid.seq === 0 ? `left out ${invalid.conversationId}/${invalid.stream}: ${invalid.message}` : `invalid entry in ${invalid.conversationId}/${invalid.stream} seq ${invalid.seq}: ${invalid.message}`);
  }
  for (const problem of outcome.problems) lines.push(`damaged log ${problem.location}: ${problem.message}`);
  return `${lines.join('\n')}\n`;
}

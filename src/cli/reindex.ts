/**
 * `openvaala reindex` (SPEC §2, §4): rebuilds `metadata.db` from the logs. It takes the data
 * directory's lock for the duration, so it is refused while a server runs (and a server
 * cannot start meanwhile).
 */
import path from 'node:path';
import { reindex, type ReindexReport } from '../dao/reindex.js';
import { acquireDataDirLock } from '../server/data-dir-lock.js';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import type { LogProblem } from '../storage/log-storage.js';
import { SqliteRecordStorage } from '../storage/sqlite/sqlite-record-storage.js';

/** What `reindex` found, including damaged log lines it skipped. */
export interface ReindexOutcome extends ReindexReport {
  problems: LogProblem[];
}

/**
 * Rebuilds the index of a data directory.
 * @throws DataDirLockedError naming the server's pid when one is running
 */
export async function runReindex(dataDir: string): Promise<ReindexOutcome> {
  const lock = acquireDataDirLock(dataDir);
  const problems: LogProblem[] = [];
  const logs = new FileLogStorage(dataDir, { onProblem: (problem) => problems.push(problem) });
  const index = new SqliteRecordStorage(path.join(dataDir, 'metadata.db'));
  try {
    return { ...(await reindex(logs, index)), problems };
  } finally {
    await logs.close();
    await index.close();
    lock.release();
  }
}

/** Formats a reindex outcome for the terminal. */
export function formatReindexOutcome(outcome: ReindexOutcome): string {
  const lines = [`indexed ${outcome.conversations} conversations in ${outcome.durationMs.toFixed(0)} ms`];
  for (const skipped of outcome.skipped) lines.push(`skipped ${skipped.conversationId}: ${skipped.reason}`);
  for (const invalid of outcome.invalidEntries) lines.push(`invalid entry in ${invalid.conversationId}/${invalid.stream} seq ${invalid.seq}: ${invalid.message}`);
  for (const problem of outcome.problems) lines.push(`damaged log ${problem.location}: ${problem.message}`);
  return `${lines.join('\n')}\n`;
}

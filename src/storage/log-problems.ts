/**
 * Reporting of damaged stored log values (SPEC §4: a value that no longer parses is skipped
 * and reported, never fails the read), shared by the LogStorage backends.
 */
import type { LogEntry, LogProblem, LogProblemListener } from './log-storage.js';

/** The default {@link LogProblemListener}: a process warning with code `OPENVAALA_LOG_PROBLEM`. */
export function defaultLogProblemListener(problem: LogProblem): void {
  process.emitWarning(`${problem.kind} in ${problem.location}: ${problem.message}`, { code: 'OPENVAALA_LOG_PROBLEM' });
}

/** Hands a problem to the listener; an error thrown by the listener is swallowed. */
export function notifyLogProblem(listener: LogProblemListener, problem: LogProblem): void {
  try {
    listener(problem);
  } catch {
    // A failing listener must not turn damaged data into a failed read.
  }
}

/** A stored entry as a database returns it: seq (a number, or a string for 64-bit columns) and the value's JSON text. */
export interface StoredLogRow {
  seq: number | string;
  value: string;
}

/**
 * Parses the rows of one stream in order. A value that is not valid JSON is skipped and
 * reported as `corrupt_line` with the location `locate(seq)` returns.
 */
export function parseStoredLogRows<T>(
  rows: readonly StoredLogRow[],
  where: { path: string; stream: string; locate: (seq: number) => string; onProblem: LogProblemListener },
): LogEntry<T>[] {
  const entries: LogEntry<T>[] = [];
  for (const row of rows) {
    const seq = Number(row.seq);
    try {
      entries.push({ seq, value: JSON.parse(row.value) as T });
    } catch (error) {
      notifyLogProblem(where.onProblem, {
        path: where.path,
        stream: where.stream,
        kind: 'corrupt_line',
        location: where.locate(seq),
        message: `stored value skipped: ${(error as Error).message}`,
      });
    }
  }
  return entries;
}

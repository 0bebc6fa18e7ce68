/**
 * The two read directions of FileLogStorage over one stream file. Both read only the
 * region `[0, state.end)` as it was when they started, so appends running meanwhile (which
 * write beyond it) never show half-written data.
 */
import type { LogEntry } from '../log-storage.js';
import type { NormalizedReadOptions } from '../log-validation.js';
import { backwardLines, forwardLines, parseLine } from './line-reader.js';
import { locateFirstAfter, type StreamState } from './stream-state.js';

/** Reports a corrupt line at a byte offset; the read then skips it. */
export type CorruptLineSink = (offset: number, reason: string) => Promise<void>;

/**
 * Reads entries with after < seq < before in file order, up to the limit. Finds its start
 * with {@link locateFirstAfter} instead of scanning from the beginning.
 */
export async function readStreamForward(fd: number, state: StreamState, options: NormalizedReadOptions, onCorrupt: CorruptLineSink): Promise<LogEntry[]> {
  const { end, lastSeq } = state;
  const entries: LogEntry[] = [];
  if (options.after >= lastSeq || options.before <= options.after + 1) return entries;
  const start = options.after === 0 ? 0 : await locateFirstAfter(fd, state, options.after, end);
  for await (const lines of forwardLines(fd, start, end)) {
    for (const line of lines) {
      const parsed = parseLine(line.data);
      if (!parsed.valid) {
        await onCorrupt(line.offset, parsed.reason);
        continue;
      }
      if (parsed.seq <= options.after) continue;
      if (parsed.seq >= options.before) return entries;
      entries.push({ seq: parsed.seq, value: parsed.value });
      if (entries.length >= options.limit) return entries;
    }
  }
  return entries;
}

/**
 * Reads entries with after < seq < before from the last to the first, up to the limit,
 * reading backwards in blocks from the end (or from the line of `before`).
 */
export async function readStreamBackward(fd: number, state: StreamState, options: NormalizedReadOptions, onCorrupt: CorruptLineSink): Promise<LogEntry[]> {
  const { end, lastSeq } = state;
  const entries: LogEntry[] = [];
  if (options.before <= options.after + 1 || lastSeq <= options.after) return entries;
  const stop = options.before > lastSeq ? end : await locateFirstAfter(fd, state, options.before - 1, end);
  for await (const lines of backwardLines(fd, stop)) {
    for (const line of lines) {
      const parsed = parseLine(line.data);
      if (!parsed.valid) {
        await onCorrupt(line.offset, parsed.reason);
        continue;
      }
      if (parsed.seq >= options.before) continue;
      if (parsed.seq <= options.after) return entries;
      entries.push({ seq: parsed.seq, value: parsed.value });
      if (entries.length >= options.limit) return entries;
    }
  }
  return entries;
}

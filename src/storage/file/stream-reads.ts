/**
 * The two read directions of FileLogStorage over one stream file. Both read only the
 * region `[0, state.end)` as it was when they started, so appends running meanwhile (which
 * write beyond it) never show half-written data.
 */
import type { LogEntry } from '../log-storage.js';
import type { NormalizedReadOptions } from '../log-validation.js';
import { backwardLines, forwardLines, parseLine } from './line-reader.js';
import { SeqOrder, type EntrySink } from './seq-order.js';
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
  // The seq search needs seqs that grow along the file; a file known not to is read from its start.
  const start = options.after === 0 || state.unordered ? 0 : await locateFirstAfter(fd, state, options.after, end);
  const order = new SeqOrder();
  const take: EntrySink = (seq, value) => {
    if (seq <= options.after) return false;
    if (seq >= options.before) return true;
    entries.push({ seq, value });
    return entries.length >= options.limit;
  };
  const reportSkipped = async () => {
    if (order.skipped.length > 0) state.unordered = true;
    await order.reportSkipped(onCorrupt);
  };
  for await (const lines of forwardLines(fd, start, end)) {
    for (const line of lines) {
      const parsed = parseLine(line.data);
      if (!parsed.valid) {
        await onCorrupt(line.offset, parsed.reason);
        continue;
      }
      const done = order.push(parsed.seq, parsed.value, line.offset, take);
      // Only lines out of order cost an await: one per line would slow every read.
      if (order.skipped.length > 0) await reportSkipped();
      if (done) return entries;
    }
  }
  order.finish(take);
  await reportSkipped();
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
  if (state.unordered) {
    // Which of two lines out of order is skipped is only known reading forward: the same
    // entries as a forward read, the last ones first.
    const all = await readStreamForward(fd, state, { ...options, direction: 'forward', limit: Number.MAX_SAFE_INTEGER }, onCorrupt);
    return all.slice(-options.limit).reverse();
  }
  const stop = options.before > lastSeq ? end : await locateFirstAfter(fd, state, options.before - 1, end);
  // Seqs must fall line by line going back; the line before the last one taken is looked at
  // too, so that a line out of order at the edge of the range is not taken for its end.
  let later = Number.POSITIVE_INFINITY;
  let complete = false;
  for await (const lines of backwardLines(fd, stop)) {
    for (const line of lines) {
      const parsed = parseLine(line.data);
      if (!parsed.valid) {
        if (!complete) await onCorrupt(line.offset, parsed.reason);
        continue;
      }
      if (parsed.seq >= later) {
        state.unordered = true;
        return readStreamBackward(fd, state, options, onCorrupt);
      }
      if (complete) return entries;
      later = parsed.seq;
      if (parsed.seq >= options.before) continue;
      if (parsed.seq <= options.after) {
        complete = true;
        continue;
      }
      entries.push({ seq: parsed.seq, value: parsed.value });
      if (entries.length >= options.limit) complete = true;
    }
  }
  return entries;
}

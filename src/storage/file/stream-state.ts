/**
 * What FileLogStorage keeps in memory per stream file after first opening it, how that is
 * derived from the file's tail (never by a scan from the start), and the seq → byte offset
 * search used by cursor reads.
 */
import { readAt, tornTailMessage } from './file-io.js';
import { READ_BLOCK_BYTES, backwardLines, forwardLines, parseLine, peekSeq } from './line-reader.js';
import { SeqOrder } from './seq-order.js';

const NEWLINE = 0x0a;

/** Probes of the seq search read this much at a time, in bytes. */
const PROBE_BLOCK_BYTES = 4 * 1024;

/**
 * A sparse, rebuildable map from seq to the byte offset of its line. Checkpoints are kept
 * at least `spacing` bytes apart, so memory stays proportional to file size / spacing.
 * It only narrows searches; the file stays the source of truth.
 */
export class SparseOffsetIndex {
  private readonly seqs: number[] = [];
  private readonly offsets: number[] = [];

  /** @param spacing minimum distance between checkpoints, in bytes. */
  constructor(private readonly spacing = READ_BLOCK_BYTES) {}

  /** Records that the line starting at byte `offset` holds `seq`. */
  add(seq: number, offset: number): void {
    const position = this.firstAbove(seq);
    const previous = this.offsets[position - 1];
    const next = this.offsets[position];
    if (this.seqs[position - 1] === seq) return;
    if (previous !== undefined && offset - previous < this.spacing) return;
    if (next !== undefined && next - offset < this.spacing) return;
    this.seqs.splice(position, 0, seq);
    this.offsets.splice(position, 0, offset);
  }

  /**
   * Byte range known to contain the first line with seq > `target`: `lower` is a line start
   * whose seq is <= target (0 when none is known), `upper` a line start whose seq is > target.
   */
  bounds(target: number): { lower: number; upper: number | undefined } {
    const position = this.firstAbove(target);
    return { lower: this.offsets[position - 1] ?? 0, upper: this.offsets[position] };
  }

  private firstAbove(seq: number): number {
    let low = 0;
    let high = this.seqs.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.seqs[middle] as number) <= seq) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** The cached state of one stream file (valid while this process is the only writer). */
export interface StreamState {
  path: string;
  stream: string;
  filePath: string;
  /** End of the readable region in bytes: a line boundary. Reads never look past it. */
  end: number;
  /** Actual file size in bytes; anything between `end` and it is a torn tail to cut off. */
  fileLength: number;
  /** The last line is a complete entry without its newline: write one before the next batch. */
  needsNewline: boolean;
  /** seq of the last valid line, 0 when there is none. */
  lastSeq: number;
  /**
   * A line whose seq does not follow the one before it was found (a file edited or joined by
   * hand): the seq search, which assumes seqs grow along the file, is not used for it any more;
   * reads scan it from its start and skip such lines.
   */
  unordered?: boolean;
  index: SparseOffsetIndex;
  /** Problems already reported for this file (kind@offset), so each is reported once. */
  reported: Set<string>;
}

/** Reports one problem found in a file at a byte offset. */
export type ProblemSink = (kind: 'torn_tail' | 'corrupt_line', offset: number, message: string) => Promise<void>;

/**
 * Derives a stream's state from the end of its file: detects a torn last line, skips corrupt
 * lines at the end, and finds the last valid seq, checked against the valid line before it (when
 * the two are out of order the file is marked `unordered` and its last entry is found by one
 * read from the start with the rule of `SeqOrder`). Otherwise reads only as far back as it must.
 */
export async function inspectStreamFile(
  fd: number,
  size: number,
  identity: { path: string; stream: string; filePath: string },
  report: ProblemSink,
): Promise<StreamState> {
  const state: StreamState = {
    ...identity,
    end: size,
    fileLength: size,
    needsNewline: false,
    lastSeq: 0,
    index: new SparseOffsetIndex(),
    reported: new Set(),
  };
  if (size === 0) return state;
  const lastByte = await readAt(fd, 1, size - 1);
  let unterminated = lastByte[0] !== NEWLINE;
  /** The valid line that is the last one, unless the valid line before it has a seq as high. */
  let candidate: { seq: number; offset: number } | undefined;
  scan: for await (const lines of backwardLines(fd, size)) {
    for (const line of lines) {
      const parsed = parseLine(line.data);
      if (unterminated) {
        unterminated = false;
        if (parsed.valid) {
          // Every byte of the entry is there, only its newline is not: keep it.
          state.needsNewline = true;
          await report('torn_tail', line.offset, 'the last line lacks its newline but is a complete entry; it is kept and terminated on the next append');
        } else {
          state.end = line.offset;
          await report('torn_tail', line.offset, tornTailMessage(line.data.length, identity.filePath));
          continue;
        }
      }
      if (parsed.valid) {
        if (candidate !== undefined) {
          if (candidate.seq > parsed.seq) break scan;
          // The last two lines are out of order. Which of them is an entry depends on the lines
          // before them (see SeqOrder), so the file is read once from its start by the rule every
          // read uses, and from now on always so: the next append follows the last entry reads see.
          state.unordered = true;
          candidate = await lastEntryInOrder(fd, state.end, report);
          break scan;
        }
        candidate = { seq: parsed.seq, offset: line.offset };
        continue;
      }
      await report('corrupt_line', line.offset, `corrupt line skipped: ${parsed.reason}`);
    }
  }
  if (candidate !== undefined) {
    state.lastSeq = candidate.seq;
    state.index.add(candidate.seq, candidate.offset);
  }
  return state;
}


/** The last entry of `[0, end)` by the rule of {@link SeqOrder}, reporting the lines it skips. */
async function lastEntryInOrder(fd: number, end: number, report: ProblemSink): Promise<{ seq: number; offset: number } | undefined> {
  const order = new SeqOrder();
  let last: { seq: number; offset: number } | undefined;
  const take = (seq: number, _value: unknown, offset: number) => {
    last = { seq, offset };
    return false;
  };
  for await (const lines of forwardLines(fd, 0, end)) {
    for (const line of lines) {
      const parsed = parseLine(line.data);
      if (parsed.valid) order.push(parsed.seq, parsed.value, line.offset, take);
    }
  }
  order.finish(take);
  await order.reportSkipped((offset, reason) => report('corrupt_line', offset, `corrupt line skipped: ${reason}`));
  return last;
}

/** Counts the newlines before byte `offset`, i.e. the zero-based line number of a line starting there. */
export async function countLinesBefore(fd: number, offset: number): Promise<number> {
  const blockBytes = 1024 * 1024;
  let count = 0;
  for (let position = 0; position < offset; position += blockBytes) {
    const block = await readAt(fd, Math.min(blockBytes, offset - position), position);
    let index = block.indexOf(NEWLINE);
    while (index !== -1) {
      count += 1;
      index = block.indexOf(NEWLINE, index + 1);
    }
    if (block.length === 0) break;
  }
  return count;
}

interface Probe {
  offset: number;
  seq: number;
  /** Offset of the following line. */
  next: number;
}

/** The first line starting in [from, limit) whose seq can be read. */
async function probeLine(fd: number, from: number, limit: number, end: number): Promise<Probe | undefined> {
  // Start one byte early: the first piece read is the rest of the line containing `from`
  // (empty when a line starts exactly at `from`), which is skipped.
  let skip = true;
  for await (const lines of forwardLines(fd, from - 1, end, PROBE_BLOCK_BYTES)) {
    for (const line of lines) {
      if (skip) {
        skip = false;
        continue;
      }
      if (line.offset >= limit) return undefined;
      const seq = peekSeq(line.data);
      if (seq !== undefined) return { offset: line.offset, seq, next: line.offset + line.data.length + 1 };
    }
  }
  return undefined;
}

/**
 * Byte offset of the first line whose seq is greater than `target`, or `end` when there is
 * none. Binary search over byte offsets (seq grows along the file), narrowed by the sparse
 * index, then a short linear scan; it never reads the file from the start.
 */
export async function locateFirstAfter(fd: number, state: StreamState, target: number, end: number): Promise<number> {
  const bounds = state.index.bounds(target);
  let low = bounds.lower;
  let high = Math.min(bounds.upper ?? end, end);
  while (high - low > READ_BLOCK_BYTES) {
    const middle = low + Math.floor((high - low) / 2);
    const probe = await probeLine(fd, middle, high, end);
    if (probe === undefined) high = middle;
    else if (probe.seq > target) high = probe.offset;
    else low = probe.next;
  }
  for await (const lines of forwardLines(fd, low, end)) {
    for (const line of lines) {
      const seq = peekSeq(line.data);
      if (seq !== undefined && seq > target) {
        state.index.add(seq, line.offset);
        return line.offset;
      }
    }
  }
  return end;
}

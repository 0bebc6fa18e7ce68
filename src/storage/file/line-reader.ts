/**
 * Block-wise line iteration over a stream file, forwards from a byte offset or backwards
 * from one, and the parser of one stored line. Lines are yielded a block at a time to keep
 * the per-line cost of async iteration low.
 */
import { readAt } from './file-io.js';
import { jsonSyntaxProblem } from '../../printable-text.js';

/** Default read block size in bytes. */
export const READ_BLOCK_BYTES = 64 * 1024;

/** Largest block the readers grow to while crossing one very long line, in bytes. */
const MAXIMUM_BLOCK_BYTES = 8 * 1024 * 1024;

const NEWLINE = 0x0a;

/** One line of a file, without its newline. */
export interface LineSlice {
  /** Byte offset of the line's first byte in the file. */
  offset: number;
  data: Buffer;
}

/** A stored line after parsing: a valid entry, or why it is not one. */
export type ParsedLine = { valid: true; seq: number; value: unknown } | { valid: false; reason: string };

/**
 * Parses one stored line, `{"seq":N,"value":…}`. Other top-level fields are ignored so
 * that later versions may add some.
 */
export function parseLine(data: Buffer): ParsedLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch (error) {
    return { valid: false, reason: `not valid JSON (${jsonSyntaxProblem(error)})` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { valid: false, reason: 'not a JSON object' };
  }
  const record = parsed as { seq?: unknown; value?: unknown };
  if (typeof record.seq !== 'number' || !Number.isSafeInteger(record.seq) || record.seq < 1) {
    return { valid: false, reason: 'missing or invalid "seq"' };
  }
  if (!('value' in record)) return { valid: false, reason: 'missing "value"' };
  return { valid: true, seq: record.seq, value: record.value };
}

const SEQ_PREFIX = Buffer.from('{"seq":');

/**
 * The seq of a line, read from its first bytes when it has the written shape (no full
 * parse), else by parsing it. Undefined for a line that is not a valid entry. Used only to
 * steer searches; reads always parse lines fully.
 */
export function peekSeq(data: Buffer): number | undefined {
  if (data.length > SEQ_PREFIX.length && data.subarray(0, SEQ_PREFIX.length).equals(SEQ_PREFIX)) {
    let seq = 0;
    let index = SEQ_PREFIX.length;
    while (index < data.length && index < SEQ_PREFIX.length + 16) {
      const byte = data[index] as number;
      if (byte < 0x30 || byte > 0x39) break;
      seq = seq * 10 + (byte - 0x30);
      index += 1;
    }
    if (index > SEQ_PREFIX.length && data[index] === 0x2c && seq >= 1) return seq;
  }
  const parsed = parseLine(data);
  return parsed.valid ? parsed.seq : undefined;
}

function lastNewline(block: Buffer, before: number): number {
  // Buffer#lastIndexOf treats a negative offset as counting from the end, so guard it.
  return before > 0 ? block.lastIndexOf(NEWLINE, before - 1) : -1;
}

/**
 * Yields the lines of `[start, end)` in file order, a block at a time. `start` must be a
 * line start and `end` a line boundary; the last line may lack its newline.
 */
export async function* forwardLines(
  fd: number,
  start: number,
  end: number,
  blockBytes = READ_BLOCK_BYTES,
): AsyncGenerator<LineSlice[]> {
  let position = start;
  let pending: Buffer[] = [];
  let pendingOffset = start;
  let size = blockBytes;
  while (position < end) {
    const block = await readAt(fd, Math.min(size, end - position), position);
    if (block.length === 0) break;
    const blockOffset = position;
    position += block.length;
    const lines: LineSlice[] = [];
    let lineStart = 0;
    let newline = block.indexOf(NEWLINE);
    while (newline !== -1) {
      const piece = block.subarray(lineStart, newline);
      if (pending.length > 0) {
        pending.push(piece);
        lines.push({ offset: pendingOffset, data: Buffer.concat(pending) });
        pending = [];
      } else {
        lines.push({ offset: blockOffset + lineStart, data: piece });
      }
      lineStart = newline + 1;
      newline = block.indexOf(NEWLINE, lineStart);
    }
    if (lineStart < block.length) {
      if (pending.length === 0) pendingOffset = blockOffset + lineStart;
      pending.push(block.subarray(lineStart));
    }
    // Crossing one very long line: grow the block so the copying stays linear overall.
    size = lines.length > 0 ? blockBytes : Math.min(size * 2, MAXIMUM_BLOCK_BYTES);
    if (lines.length > 0) yield lines;
  }
  if (pending.length > 0) yield [{ offset: pendingOffset, data: Buffer.concat(pending) }];
}

/**
 * Yields the lines of `[0, end)` from the last to the first, a block at a time. `end` must
 * be a line boundary (just after a newline, or the end of an unterminated last line).
 */
export async function* backwardLines(fd: number, end: number, blockBytes = READ_BLOCK_BYTES): AsyncGenerator<LineSlice[]> {
  let position = end;
  // The end part of a line whose start lies in an earlier block, in file order.
  let pending: Buffer[] = [];
  let size = blockBytes;
  while (position > 0) {
    const length = Math.min(size, position);
    const atEnd = position === end;
    position -= length;
    const block = await readAt(fd, length, position);
    let lineEnd = block.length;
    if (atEnd && block[lineEnd - 1] === NEWLINE) lineEnd -= 1;
    const lines: LineSlice[] = [];
    let newline = lastNewline(block, lineEnd);
    while (newline !== -1) {
      const piece = block.subarray(newline + 1, lineEnd);
      lines.push({ offset: position + newline + 1, data: pending.length > 0 ? Buffer.concat([piece, ...pending]) : piece });
      pending = [];
      lineEnd = newline;
      newline = lastNewline(block, lineEnd);
    }
    pending.unshift(block.subarray(0, lineEnd));
    size = lines.length > 0 ? blockBytes : Math.min(size * 2, MAXIMUM_BLOCK_BYTES);
    if (lines.length > 0) yield lines;
  }
  if (end > 0) yield [{ offset: 0, data: Buffer.concat(pending) }];
}

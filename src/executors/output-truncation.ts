/**
 * Keeping the head and the tail of long output, with one marker line in between that names
 * what was left out. The format is shared by every place that cuts output (the executors'
 * collectors, the tools' retention bound, the cap on what the model reads), and a cut of text
 * that already holds a marker merges both into one, so the model always sees a single marker
 * whose positions refer to the original output.
 *
 * Marker (positions are 1-based and inclusive, as `sed -n A,Bp` and `tail -c +N` take them):
 * `[… 104857 bytes omitted (bytes 32769–137625 of 168000, lines 812–3410 of 5000) …]`
 */

/** What a cut left out, in positions of the original output. */
export interface OmittedRange {
  /** First omitted byte, 1-based. */
  fromByte: number;
  /** Last omitted byte, 1-based, inclusive. */
  toByte: number;
  /** Size of the whole original output, in bytes. */
  totalBytes: number;
  /** Line holding the first omitted byte, 1-based. */
  fromLine: number;
  /** Line holding the last omitted byte, 1-based. */
  toLine: number;
  /** Lines of the whole original output (a last line without a line break counts). */
  totalLines: number;
}

/** The marker line for an omitted range (without line breaks around it). */
export function omissionMarker(range: OmittedRange): string {
  const bytes = range.toByte - range.fromByte + 1;
  return `[… ${bytes} bytes omitted (bytes ${range.fromByte}–${range.toByte} of ${range.totalBytes}, lines ${range.fromLine}–${range.toLine} of ${range.totalLines}) …]`;
}

const MARKER_PATTERN = /\[… (\d+) bytes omitted \(bytes (\d+)–(\d+) of (\d+), lines (\d+)–(\d+) of (\d+)\) …\]\n/;

/**
 * How head, marker and tail are joined: the marker always stands on a line of its own, so a
 * line break is added before it when the head ends within a line.
 */
export function joinAroundMarker(head: string, range: OmittedRange, tail: string): string {
  return `${head}${head === '' || head.endsWith('\n') ? '' : '\n'}${omissionMarker(range)}\n${tail}`;
}

/** Result of `truncateMiddle`. */
export interface TruncatedText {
  /** The text itself when it fits, else head + marker + tail. */
  text: string;
  /** True when something was left out (now or by an earlier cut whose marker it holds). */
  truncated: boolean;
  /** What is missing from the original output, when anything is. */
  omitted?: OmittedRange;
}

/** Bytes reserved for the marker and its line breaks. */
const MARKER_RESERVE_BYTES = 128;

/** Counts line feeds in `bytes[start, end)`. */
export function countNewlines(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let count = 0;
  let index = bytes.indexOf(0x0a, start);
  while (index !== -1 && index < end) {
    count += 1;
    index = bytes.indexOf(0x0a, index + 1);
  }
  return count;
}

/** Whether a byte continues a UTF-8 character (so a cut before it would split one). */
function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/**
 * Where to end a head of at most `budget` bytes: after the last line break in its last
 * eighth when there is one (whole lines read better), else at a character boundary.
 */
export function headCut(bytes: Uint8Array, budget: number): number {
  let end = Math.min(budget, bytes.length);
  const newline = bytes.lastIndexOf(0x0a, end - 1);
  if (newline !== -1 && newline + 1 >= end - Math.ceil(budget / 8)) return newline + 1;
  while (end > 0 && isContinuation(bytes[end])) end -= 1;
  return end;
}

/**
 * Where to start a tail of at most `budget` bytes: after the first line break in its first
 * eighth when there is one, else at a character boundary.
 * @param followsOmission true when `bytes` itself starts after omitted output (a collector's
 *   tail), so that even its first byte may be mid-line
 */
export function tailCut(bytes: Uint8Array, budget: number, followsOmission = false): number {
  let start = Math.max(0, bytes.length - budget);
  const newline = bytes.indexOf(0x0a, start);
  if ((start > 0 || followsOmission) && newline !== -1 && newline + 1 <= start + Math.ceil(budget / 8) && newline + 1 < bytes.length) return newline + 1;
  while (start < bytes.length && isContinuation(bytes[start])) start += 1;
  return start;
}

/** Line (1-based) of the byte at `offset`, given the line breaks before it. */
function lineOf(bytes: Uint8Array, offset: number): number {
  return 1 + countNewlines(bytes, 0, offset);
}

/** Lines of a whole text: a last line without a line break counts. */
export function lineCount(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  return countNewlines(bytes) + (bytes[bytes.length - 1] === 0x0a ? 0 : 1);
}

/**
 * Cuts `text` to at most `limitBytes` UTF-8 bytes, keeping its head and its tail (half each,
 * cut at line breaks when one is near) and putting a marker between them that names the
 * omitted bytes and lines. When `text` already holds a marker from an earlier cut, the new
 * cut covers it and the single marker it writes names the range of the original output.
 * Never splits a UTF-8 character.
 */
export function truncateMiddle(text: string, limitBytes: number): TruncatedText {
  const bytes = Buffer.from(text, 'utf8');
  const inner = MARKER_PATTERN.exec(text);
  if (bytes.length <= limitBytes) {
    return inner ? { text, truncated: true, omitted: rangeFromMatch(inner) } : { text, truncated: false };
  }
  const budget = Math.max(0, limitBytes - MARKER_RESERVE_BYTES);
  let headEnd = headCut(bytes, Math.floor(budget / 2));
  let tailStart = tailCut(bytes, Math.ceil(budget / 2));
  if (tailStart < headEnd) tailStart = headEnd;
  if (!inner) {
    const range: OmittedRange = {
      fromByte: headEnd + 1,
      toByte: tailStart,
      totalBytes: bytes.length,
      fromLine: lineOf(bytes, headEnd),
      toLine: lineOf(bytes, tailStart - 1),
      totalLines: lineCount(bytes),
    };
    return { text: joinAroundMarker(bytes.subarray(0, headEnd).toString('utf8'), range, bytes.subarray(tailStart).toString('utf8')), truncated: true, omitted: range };
  }
  // The earlier marker must fall inside the new cut, so that only one marker remains. The head
  // before it is the original's first bytes, so its length says where the marker's block starts.
  const earlier = rangeFromMatch(inner);
  const innerStart = earlier.fromByte - 1;
  const innerEnd = Buffer.byteLength(text.slice(0, inner.index), 'utf8') + Buffer.byteLength(inner[0], 'utf8');
  headEnd = Math.min(headEnd, innerStart);
  tailStart = Math.max(tailStart, innerEnd);
  // Bytes before the earlier marker sit at their original positions; bytes after it are
  // counted back from the original end.
  const totalBytes = earlier.totalBytes;
  const fromByte = headEnd + 1;
  const toByte = totalBytes - (bytes.length - tailStart);
  const fromLine = headEnd === innerStart ? earlier.fromLine : lineOf(bytes, headEnd);
  const linesAfter = (offset: number): number => countNewlines(bytes, offset, bytes.length) - (bytes[bytes.length - 1] === 0x0a ? 1 : 0);
  const toLine = tailStart === innerEnd ? earlier.toLine : earlier.totalLines - linesAfter(tailStart - 1);
  const range: OmittedRange = { fromByte, toByte, totalBytes, fromLine, toLine, totalLines: earlier.totalLines };
  return { text: joinAroundMarker(bytes.subarray(0, headEnd).toString('utf8'), range, bytes.subarray(tailStart).toString('utf8')), truncated: true, omitted: range };
}

function rangeFromMatch(match: RegExpExecArray): OmittedRange {
  const number = (index: number): number => Number(match[index]);
  return { fromByte: number(2), toByte: number(3), totalBytes: number(4), fromLine: number(5), toLine: number(6), totalLines: number(7) };
}

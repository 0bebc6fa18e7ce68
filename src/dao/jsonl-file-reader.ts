/**
 * Fast reads of FileLogStorage files for `reindex` (the file format is in docs/storage.md):
 * each file is read whole with one synchronous read; a metadata log is parsed line by line as
 * FileLogStorage reads it, and a session log is only scanned for its user and assistant
 * messages — most of its lines are tool calls the search does not need, and they are skipped
 * unparsed. For offline use on a data directory no other process writes meanwhile (reindex
 * holds the data-dir lock): synchronous reads block the event loop.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { tornTailMessage } from '../storage/file/file-io.js';
import { parseLine } from '../storage/file/line-reader.js';
import { SeqOrder, type EntrySink } from '../storage/file/seq-order.js';
import { asUnreadable, checkOpenedLogFile, danglingLinkErrorSync, NON_BLOCKING_OPEN } from '../storage/file/stream-file-access.js';
import type { LogEntry, LogProblem } from '../storage/log-storage.js';
import { STREAM_FILE_SUFFIX, validateLogPath, validateStreamId } from '../storage/log-validation.js';
import { searchableText } from './conversation-search-index.js';

/** What a scan found in one session log. */
export interface StreamMessages {
  /** Entries in the stream: the seq of its last line, or its line count when that is damaged. */
  lines: number;
  /** Searchable texts in stream order. */
  texts: string[];
}

/** Files above this size are left to the LogStorage, which reads them block by block (bytes). */
const MAXIMUM_READ_BYTES = 256 * 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Every line holding a user or assistant message contains `user_message` or
 * `assistant_message` (its `kind`; JSON.stringify never escapes ASCII letters or `_`), so
 * the scan searches the whole buffer for their common part and looks only at the lines
 * where it occurs. A line that mentions the words elsewhere (a tool output, say) is parsed
 * and then checked properly.
 */
const COMMON_MARKER = Buffer.from('_message');
const MESSAGE_MARKERS = [Buffer.from('user_message'), Buffer.from('assistant_message')];

/**
 * The largest read buffer kept for reuse between reads, in bytes. A larger file gets a buffer
 * of its own, dropped once read: a buffer kept at the size of the largest file ever read
 * would hold that memory for the life of the server (issue 12, "buffers released after big
 * outputs").
 */
export const RETAINED_READ_BUFFER_BYTES = 1024 * 1024;

/** The read buffer, grown as needed up to {@link RETAINED_READ_BUFFER_BYTES} and reused: a fresh one per file costs a page fault per 4 KiB. */
let readBuffer = Buffer.alloc(0);

/** The bytes of the read buffer kept between reads (for tests of the retention rule). */
export function retainedReadBufferBytes(): number {
  return readBuffer.length;
}

/** A buffer of at least `size` bytes: the shared one for sizes it may hold, a one-off one above that. */
function bufferFor(size: number): Buffer {
  if (size > RETAINED_READ_BUFFER_BYTES) return Buffer.allocUnsafeSlow(size);
  if (readBuffer.length < size) readBuffer = Buffer.allocUnsafeSlow(Math.min(RETAINED_READ_BUFFER_BYTES, Math.max(size, readBuffer.length * 2)));
  return readBuffer;
}

/**
 * Reads a stream file whole into a buffer (the shared one when the file fits
 * {@link RETAINED_READ_BUFFER_BYTES}) and passes its bytes to `use`, which must copy what it
 * keeps (the buffer is reused by the next read). Undefined when the file is too
 * large; `use` gets an empty buffer for a missing file.
 * @throws UnreadableStreamError naming the file when it is no log file (a directory, a named
 *   pipe, a dangling link) or opening or reading it fails for a reason of the file's own
 */
function withStreamFile<T>(root: string, path: string, stream: string, use: (data: Buffer, file: string) => T): T | undefined {
  validateLogPath(path);
  validateStreamId(stream, path);
  const file = nodePath.join(root, ...path.split('/'), `${stream}${STREAM_FILE_SUFFIX}`);
  let descriptor: number;
  try {
    descriptor = fs.openSync(file, fs.constants.O_RDONLY | NON_BLOCKING_OPEN);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw asUnreadable(file, error);
    const dangling = danglingLinkErrorSync(file);
    if (dangling) throw dangling;
    return use(Buffer.alloc(0), file);
  }
  checkOpenedLogFile(file, descriptor);
  let data: Buffer;
  try {
    const { size } = fs.fstatSync(descriptor);
    if (size > MAXIMUM_READ_BYTES) return undefined;
    const buffer = bufferFor(size);
    let filled = 0;
    while (filled < size) {
      const bytesRead = fs.readSync(descriptor, buffer, filled, size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    data = buffer.subarray(0, filled);
  } catch (error) {
    throw asUnreadable(file, error);
  } finally {
    fs.closeSync(descriptor);
  }
  return use(data, file);
}

/**
 * Scans a session log's bytes for its messages. Damaged lines are skipped as reads skip them,
 * but not reported: the scan looks at too few lines to be a damage check.
 */
export function scanMessageLines(data: Buffer): StreamMessages {
  const texts: string[] = [];
  for (let from = 0; from < data.length; ) {
    const found = data.indexOf(COMMON_MARKER, from);
    if (found === -1) break;
    // lastIndexOf from `found` finds the newline ending the previous line (-1 on the first line).
    const start = data.lastIndexOf(NEWLINE, found) + 1;
    let end = data.indexOf(NEWLINE, found);
    if (end === -1) end = data.length;
    const line = data.subarray(start, end);
    if (MESSAGE_MARKERS.some((marker) => line.includes(marker))) {
      const parsed = parseLine(line);
      const text = parsed.valid ? searchableText(parsed.value) : undefined;
      if (text !== undefined) texts.push(text);
    }
    from = end + 1;
  }
  return { lines: lastSeq(data) ?? countLines(data), texts };
}

/** Number of lines, complete or not. */
function countLines(data: Buffer): number {
  let lines = 0;
  for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) lines += 1;
  return data.length > 0 && data[data.length - 1] !== NEWLINE ? lines + 1 : lines;
}

/**
 * The seq of the last line when it is a valid entry — the number of entries, since seqs start
 * at 1 and are contiguous — found without reading the rest; undefined otherwise.
 */
function lastSeq(data: Buffer): number | undefined {
  let end = data.length;
  if (end > 0 && data[end - 1] === NEWLINE) end -= 1;
  const start = end > 0 ? data.lastIndexOf(NEWLINE, end - 1) + 1 : 0;
  const parsed = parseLine(data.subarray(start, end));
  return parsed.valid ? parsed.seq : undefined;
}

/**
 * Scans one session log of the FileLogStorage rooted at `root` (see {@link scanMessageLines}).
 * @returns undefined for a file too large to read at once; empty for a missing file
 * @throws Error naming the path or stream when they are not valid log names
 * @throws UnreadableStreamError naming the file when it cannot be read
 */
export function scanStreamFile(root: string, path: string, stream: string): StreamMessages | undefined {
  return withStreamFile(root, path, stream, (data) => scanMessageLines(data));
}

/**
 * Reads every valid entry of one stream of the FileLogStorage rooted at `root`, as its
 * forward read does, reporting damage with the same kinds, locations and messages: a corrupt
 * complete line is skipped (`corrupt_line`, with line number and byte offset), and so is a line
 * whose seq does not follow the one before it; an unterminated last line is kept when it is a
 * complete entry and ignored otherwise (`torn_tail`, with byte offset).
 * @returns undefined for a file too large to read at once; empty for a missing file
 * @throws Error naming the path or stream when they are not valid log names
 * @throws UnreadableStreamError naming the file when it cannot be read
 */
export function readStreamEntries(root: string, path: string, stream: string, onProblem: (problem: LogProblem) => void): LogEntry[] | undefined {
  return withStreamFile(root, path, stream, (data, file) => {
    const entries: LogEntry[] = [];
    const order = new SeqOrder();
    // A line the rule skips is the one just fed or the jump it held, the valid line before it:
    // their line numbers are all it can name.
    let held = { offset: -1, lineNumber: 0 };
    let current = { offset: -1, lineNumber: 0 };
    const lineNumberAt = (offset: number) => (offset === current.offset ? current.lineNumber : held.lineNumber);
    const take: EntrySink = (seq, value) => {
      entries.push({ seq, value });
      return false;
    };
    const reportSkipped = () => {
      if (order.skipped.length === 0) return;
      for (const { offset, reason } of order.skipped.splice(0)) {
        onProblem({ path, stream, kind: 'corrupt_line', location: `${file}, line ${lineNumberAt(offset)} (byte offset ${offset})`, message: `corrupt line skipped: ${reason}` });
      }
    };
    let lineNumber = 0;
    for (let start = 0; start < data.length; ) {
      let end = data.indexOf(NEWLINE, start);
      const terminated = end !== -1;
      if (!terminated) end = data.length;
      lineNumber += 1;
      const parsed = parseLine(data.subarray(start, end));
      if (parsed.valid) {
        held = current;
        current = { offset: start, lineNumber };
        order.push(parsed.seq, parsed.value, start, take);
        reportSkipped();
      }
      if (!terminated) {
        const message = parsed.valid
          ? 'the last line lacks its newline but is a complete entry; it is kept and terminated on the next append'
          : tornTailMessage(end - start, file);
        onProblem({ path, stream, kind: 'torn_tail', location: `${file}, byte offset ${start}`, message });
      } else if (!parsed.valid) {
        onProblem({ path, stream, kind: 'corrupt_line', location: `${file}, line ${lineNumber} (byte offset ${start})`, message: `corrupt line skipped: ${parsed.reason}` });
      }
      start = end + 1;
    }
    order.finish(take);
    reportSkipped();
    return entries;
  });
}

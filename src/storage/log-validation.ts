/**
 * Argument checks shared by every LogStorage backend (SPEC §4), so that all of them reject
 * the same inputs with the same messages and the conformance suite can hold them to it.
 */
import type { LogReadOptions } from './log-storage.js';

/** Longest stream id in UTF-8 bytes: a file name is at most 255 bytes and `.jsonl` takes 6. */
export const MAXIMUM_STREAM_ID_BYTES = 249;

/** File name suffix of a stream file in the file backend; path segments may not end with it. */
export const STREAM_FILE_SUFFIX = '.jsonl';

/** Longest path segment in UTF-8 bytes (the usual file-name limit). */
export const MAXIMUM_SEGMENT_BYTES = 255;

/** A read request after validation, with the defaults filled in. */
export interface NormalizedReadOptions {
  direction: 'forward' | 'backward';
  /** Exclusive lower bound of seq; 0 when not given. */
  after: number;
  /** Exclusive upper bound of seq; `Infinity` when not given. */
  before: number;
  /** Maximum entries; `Infinity` when not given. */
  limit: number;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function checkSegment(segment: string, kind: string, whole: string): void {
  if (segment.length === 0) {
    throw new Error(`Invalid log ${kind} ${JSON.stringify(whole)}: empty segment`);
  }
  if (segment === '.' || segment === '..') {
    throw new Error(`Invalid log ${kind} ${JSON.stringify(whole)}: segment "${segment}" is not allowed`);
  }
  if (segment.includes('\0')) {
    throw new Error(`Invalid log ${kind} ${JSON.stringify(whole)}: contains a NUL character`);
  }
}

/**
 * Checks a log path and returns its segments (`''` is the root and has none).
 *
 * @throws Error naming the path when it is not a string, has an empty segment (leading,
 *   trailing or doubled `/`), a `.` or `..` segment, a NUL character, a segment ending in
 *   `.jsonl` (it would collide with a stream file) or a segment longer than
 *   {@link MAXIMUM_SEGMENT_BYTES} bytes.
 */
export function validateLogPath(path: unknown): string[] {
  if (typeof path !== 'string') {
    throw new Error(`Invalid log path ${describe(path)}: must be a string`);
  }
  if (path === '') return [];
  const segments = path.split('/');
  for (const segment of segments) {
    checkSegment(segment, 'path', path);
    if (segment.endsWith(STREAM_FILE_SUFFIX)) {
      // The file backend stores stream `x` as `x.jsonl` next to child directories.
      throw new Error(`Invalid log path ${JSON.stringify(path)}: segment "${segment}" must not end with "${STREAM_FILE_SUFFIX}"`);
    }
    if (Buffer.byteLength(segment) > MAXIMUM_SEGMENT_BYTES) {
      throw new Error(`Invalid log path ${JSON.stringify(path)}: segment longer than ${MAXIMUM_SEGMENT_BYTES} bytes`);
    }
  }
  return segments;
}

/**
 * Checks a stream id: one non-empty path segment.
 *
 * @throws Error naming the stream and its path when the id is not a string, is empty, is
 *   `.` or `..`, contains `/` or NUL, or is longer than {@link MAXIMUM_STREAM_ID_BYTES} bytes.
 */
export function validateStreamId(stream: unknown, path: string): void {
  const where = `in path ${JSON.stringify(path)}`;
  if (typeof stream !== 'string') {
    throw new Error(`Invalid stream id ${describe(stream)} ${where}: must be a string`);
  }
  if (stream.includes('/')) {
    throw new Error(`Invalid stream id ${JSON.stringify(stream)} ${where}: must not contain "/"`);
  }
  checkSegment(stream, 'stream id', stream);
  if (Buffer.byteLength(stream) > MAXIMUM_STREAM_ID_BYTES) {
    throw new Error(`Invalid stream id ${JSON.stringify(stream)} ${where}: longer than ${MAXIMUM_STREAM_ID_BYTES} bytes`);
  }
}

/** Joins a path and a child segment (`''` is the root). */
export function joinLogPath(path: string, child: string): string {
  return path === '' ? child : `${path}/${child}`;
}

/**
 * The string range holding every path strictly below `path` (`path/...`): from `path/`
 * inclusive to `path0` exclusive, as `0` follows `/` in code point order. For SQL range scans.
 */
export function descendantPathRange(path: string): { from: string; to: string } {
  return { from: `${path}/`, to: `${path}0` };
}

/** Whether `path` is `ancestor` itself or lies below it (`''` contains everything). */
export function isWithinLogPath(path: string, ancestor: string): boolean {
  return ancestor === '' || path === ancestor || path.startsWith(`${ancestor}/`);
}

function checkCursor(name: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new Error(`Invalid log read option "${name}": ${describe(value)} (expected an integer >= 0)`);
  }
}

/**
 * Checks read options and fills in the defaults. Besides the contract, both cursors may be
 * given together in either direction; they then bound the range on both sides.
 *
 * @throws Error naming the option when `direction` is unknown or `after`, `before` or
 *   `limit` is not an integer >= 0.
 */
export function normalizeReadOptions(options: LogReadOptions | undefined): NormalizedReadOptions {
  const direction = options?.direction ?? 'forward';
  if (direction !== 'forward' && direction !== 'backward') {
    throw new Error(`Invalid log read option "direction": ${describe(direction)} (expected "forward" or "backward")`);
  }
  checkCursor('after', options?.after);
  checkCursor('before', options?.before);
  checkCursor('limit', options?.limit);
  return {
    direction,
    after: options?.after ?? 0,
    before: options?.before ?? Number.POSITIVE_INFINITY,
    limit: options?.limit ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * Serialises every value of a batch up front, so a bad value rejects the whole batch before
 * anything is written.
 *
 * @returns one JSON text per value, in order.
 * @throws Error naming the path, stream and index of the first value that is not an array,
 *   not JSON-serialisable (`undefined`, a function, a symbol, a BigInt, a cycle).
 */
export function serializeLogValues(path: string, stream: string, values: unknown): string[] {
  const where = `stream ${JSON.stringify(stream)} in path ${JSON.stringify(path)}`;
  if (!Array.isArray(values)) {
    throw new Error(`Cannot append to ${where}: values must be an array`);
  }
  return values.map((value, index) => {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      throw new Error(`Cannot append to ${where}: entry ${index} is not JSON-serialisable (${(error as Error).message})`, { cause: error });
    }
    if (typeof text !== 'string') {
      throw new Error(`Cannot append to ${where}: entry ${index} is not JSON-serialisable (${typeof value})`);
    }
    return text;
  });
}

/** Sorts names by UTF-16 code units, the order every backend returns listings in. */
export function sortNames(names: Iterable<string>): string[] {
  return [...names].sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
}

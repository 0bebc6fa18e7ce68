/**
 * The LogStorage contract (SPEC §4): append-only streams of JSON entries addressed by
 * (path, stream id). Everything above storage is written against this interface, so a new
 * backend is accepted by passing the conformance suite in `test/storage/`.
 */

/** A JSON value as stored in a log entry. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** One stored entry: the value handed to `append`, with the sequence number it was given. */
export interface LogEntry<T = unknown> {
  /** Position in its stream, from 1, contiguous (no gaps, no repeats). */
  seq: number;
  /** The JSON value that was appended. */
  value: T;
}

/** Where to start reading and in which direction. */
export interface LogReadOptions {
  /**
   * `forward` reads ascending seq, `backward` descending. Default `forward`.
   */
  direction?: 'forward' | 'backward';
  /**
   * Exclusive cursor: forward returns entries with seq > `after`; backward returns entries
   * with seq < `before`. Omitted means from the start (forward) or from the end (backward).
   * Both may be given, in either direction, to read the range `after < seq < before`.
   * Integers >= 0; anything else is rejected with an error naming the option.
   */
  after?: number;
  /** Exclusive cursor for backward reads (see `after`). */
  before?: number;
  /** Maximum entries returned. Default: all. */
  limit?: number;
}

/** A problem found in a stream while reading it (torn final line, corrupt middle line). */
export interface LogProblem {
  /** Path and stream where it was found. */
  path: string;
  stream: string;
  /** `torn_tail`: an incomplete last line (crash mid-write); `corrupt_line`: a complete line that is not a valid entry. */
  kind: 'torn_tail' | 'corrupt_line';
  /** Human-readable location: file name plus byte offset (torn tail) or line number (corrupt line). */
  location: string;
  /** What was wrong. */
  message: string;
}

/**
 * A stream whose stored data cannot be read at all (for files: the stream's file is a
 * directory, a named pipe or a dangling link, or opening or reading it fails). Unlike a damaged
 * line, which is skipped and reported, this fails the operation: what the stream holds is
 * unknown, so nothing may be read from it or appended to it.
 */
export class UnreadableStreamError extends Error {
  /**
   * @param location where the stream is stored (for files: the file's absolute path)
   * @param reason why it cannot be read, in words (`it is a directory`, `permission denied (EACCES)`)
   */
  constructor(
    readonly location: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`log file ${location} cannot be read: ${reason}`, options);
    this.name = 'UnreadableStreamError';
  }
}

/**
 * Receives problems found while reading or opening streams. Reads never throw for damaged
 * data: the damaged part is skipped and reported here.
 */
export type LogProblemListener = (problem: LogProblem) => void;

/**
 * Append-only streams of JSON entries (SPEC §4, contract).
 *
 * Paths are `/`-separated relative names (`conversations/conv_…`); `''` is the root. Stream
 * ids are single path segments (`metadata`, `sess_…`). Neither may contain `.` or `..`
 * segments, empty segments or NUL, and path segments may not end in `.jsonl` (rules in
 * `log-validation.ts`, shared by every backend).
 */
export interface LogStorage {
  /**
   * Appends a batch to one stream and resolves once it is durable (fsync), returning the
   * entries with the sequence numbers they were given (contiguous, continuing the stream,
   * starting at 1 for a new stream). Appends to one stream are applied in call order.
   *
   * @throws Error naming the path and stream when the path or stream id is invalid or an
   *   entry is not JSON-serialisable; nothing of the batch is written then.
   * @throws UnreadableStreamError when the stream's stored data cannot be read (nothing is written)
   */
  append<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]>;

  /**
   * Reads entries of one stream; a missing stream reads as empty. Damaged entries are skipped
   * and reported to the backend's problem listener.
   * @throws UnreadableStreamError when the stream's stored data cannot be read at all
   */
  read<T = unknown>(path: string, stream: string, options?: LogReadOptions): Promise<LogEntry<T>[]>;

  /**
   * The last seq of a stream, 0 when empty or missing.
   * @throws UnreadableStreamError when the stream's stored data cannot be read at all
   */
  lastSeq(path: string, stream: string): Promise<number>;

  /** Lists the stream ids directly under a path, sorted. */
  listStreams(path: string): Promise<string[]>;

  /**
   * Lists the child paths directly under a path (e.g. conversation directories), sorted.
   * Returns their names (single segments, e.g. `conv_…`), to be joined to `path` with `/`.
   * A child is listed while it holds at least one stream somewhere below it.
   */
  listPaths(path: string): Promise<string[]>;

  /**
   * Replaces the whole content of one stream, atomically: a reader (or a process restarted
   * after a crash at any moment) sees either every old entry or every new one, never a mix.
   * The values are numbered from 1 (a stream cut to a prefix of itself keeps its seq numbers);
   * an empty list leaves an empty stream. Resolves once the new content is durable. Runs in
   * order with the stream's appends. Used to rewind a session (SPEC §3; docs/storage.md).
   *
   * @throws Error naming the path and stream when the path or stream id is invalid or a
   *   value is not JSON-serialisable; the old content is kept then.
   */
  replaceStream<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]>;

  /** Deletes one stream; deleting a missing stream is not an error. */
  deleteStream(path: string, stream: string): Promise<void>;

  /** Deletes every stream under a path, recursively (`''`: everything). */
  deletePath(path: string): Promise<void>;

  /** Releases file handles and caches. */
  close(): Promise<void>;
}

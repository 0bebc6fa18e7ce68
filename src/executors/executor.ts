/**
 * The executor contract (SPEC §7): an environment with a file system and a shell, where
 * environment tools run. Tools are written against these interfaces only, so the same tool
 * runs on the local machine, over SSH or in an in-memory sandbox.
 */

/** Kind of a file system entry. */
export type FileKind = 'file' | 'directory' | 'symlink' | 'other';

/** What `stat` reports about one path (without following a final symlink). */
export interface FileStat {
  kind: FileKind;
  /** Size in bytes. */
  size: number;
  /** Last modification, ms since the epoch. */
  modifiedAt: number;
}

/** One entry of a directory listing. */
export interface DirectoryEntry {
  name: string;
  kind: FileKind;
}

/**
 * The file operations of an executor. Every path is absolute on that executor; resolving a
 * tool's relative path against the workspace, and refusing escapes, is the workspace's job.
 * Errors are thrown as `Error`s whose message names the path.
 */
export interface ExecutorFileSystem {
  /** Reads a whole file as bytes. @throws when missing or a directory. */
  readFile(path: string): Promise<Uint8Array>;
  /** Creates or replaces a file. Parent directories must exist. */
  writeFile(path: string, data: Uint8Array | string): Promise<void>;
  /** Stat without following a final symlink; undefined when the path does not exist. */
  stat(path: string): Promise<FileStat | undefined>;
  /** Lists a directory, sorted by name. @throws when not a directory. */
  readDirectory(path: string): Promise<DirectoryEntry[]>;
  /** Creates a directory and its missing parents. */
  makeDirectory(path: string): Promise<void>;
  /** Removes a file or symlink (never a directory). @throws when missing or a directory. */
  removeFile(path: string): Promise<void>;
  /** Resolves symlinks in an existing path, returning its canonical absolute path. */
  realPath(path: string): Promise<string>;
}

/** A command to run in the executor's shell. */
export interface CommandRequest {
  /** Shell command line, run by `bash -c` (or the executor's equivalent). */
  command: string;
  /** Absolute working directory. */
  cwd: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Kill the command (its whole process group) after this many ms. */
  timeoutMs: number;
  /** Stop collecting output after this many bytes of stdout+stderr (the process keeps running until it ends). */
  maxOutputBytes: number;
  /** Receives output chunks as they arrive (for live streaming to clients). */
  onOutput?: (chunk: string) => void;
  /** Aborting kills the command's process group. */
  signal?: AbortSignal;
}

/** How a command ended. */
export interface CommandResult {
  /** Exit code; null when killed by a signal. */
  exitCode: number | null;
  /** Signal name when killed (`SIGKILL`…). */
  signal: string | null;
  /** stdout and stderr interleaved in arrival order, at most `maxOutputBytes` bytes. */
  output: string;
  /** True when output beyond `maxOutputBytes` was dropped. */
  truncated: boolean;
  /** Bytes of output dropped beyond `maxOutputBytes`, when the executor counts them. */
  omittedBytes?: number;
  /** True when the command was killed for exceeding `timeoutMs`. */
  timedOut: boolean;
  /** True when the command was killed through `signal`. */
  aborted: boolean;
  /** Wall time in ms. */
  durationMs: number;
}

/** An execution environment (SPEC §7). */
export interface Executor {
  /** Name from configuration (`local`, `build-box`…), unique in the runtime. */
  readonly name: string;
  /** `local`, `ssh` or `virtual`. */
  readonly kind: 'local' | 'ssh' | 'virtual';
  /** The executor's file system. */
  readonly fs: ExecutorFileSystem;
  /** Runs a command to completion (or timeout/abort). Never rejects for a failing command. */
  run(request: CommandRequest): Promise<CommandResult>;
  /** Releases connections and kills what is still running. */
  close(): Promise<void>;
}

/**
 * The executor contract (SPEC §7): an environment with a file system and a shell, where
 * environment tools run. Tools are written against these interfaces only, so the same tool
 * runs on the local machine, over SSH or in an in-memory sandbox.
 */

import type { OmittedRange } from './output-truncation.js';

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
  /**
   * Reads at most `length` bytes of a file from byte `offset` (fewer at its end, none past it),
   * without reading the rest. Optional: where it is missing, callers read the whole file.
   * @throws when missing or a directory
   */
  readRange?(path: string, offset: number, length: number): Promise<Uint8Array>;
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
  /**
   * Absolute root of the workspace the command runs for. Sandboxing executors (local with
   * `sandbox: bwrap`) make it writable; when absent they use `cwd`.
   */
  workspaceRoot?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Kill the command (its whole process group) after this many ms. */
  timeoutMs: number;
  /**
   * Bound on the output kept, in bytes of stdout+stderr: the first half keeps the head, the
   * second half the newest tail, and what falls between is only counted (the process keeps
   * running until it ends; memory stays bounded). See `OutputCollector`.
   */
  maxOutputBytes: number;
  /** Receives output chunks as they arrive (for live streaming to clients), until `maxOutputBytes` were streamed. */
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
  /**
   * Present only when neither `exitCode` nor `signal` is known although the command ran: why
   * (an SSH server that closed the channel without an exit status, a dropped connection, a
   * command that outlived its kill). Absent for a timeout or abort before the command started.
   */
  unknownExitReason?: string;
  /**
   * stdout and stderr interleaved in arrival order: all of it, or when longer than
   * `maxOutputBytes` its head and tail around a marker line naming the omitted bytes and
   * lines (`output-truncation.ts`).
   */
  output: string;
  /** True when output was omitted. */
  truncated: boolean;
  /** Bytes of output omitted between head and tail. */
  omittedBytes?: number;
  /** What was omitted, in positions of the whole output, when anything was. */
  omitted?: OmittedRange;
  /** True when the command was killed for exceeding `timeoutMs`. */
  timedOut: boolean;
  /** True when the command was killed through `signal`. */
  aborted: boolean;
  /** Wall time in ms. */
  durationMs: number;
}

/** A command to start and leave running (`Executor.spawn`): background and interactive commands. */
export interface SpawnRequest {
  /** Shell command line, run by `bash -c` (or the executor's equivalent). */
  command: string;
  /** Absolute working directory. */
  cwd: string;
  /** Absolute root of the workspace the command runs for (see `CommandRequest.workspaceRoot`). */
  workspaceRoot?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Run in a pseudo-terminal (stdout and stderr merged, line editing, prompts) instead of pipes. */
  tty?: boolean;
  /** Terminal width in columns, with `tty` (default 120). */
  columns?: number;
  /** Terminal height in rows, with `tty` (default 40). */
  rows?: number;
}

/** How a spawned process ended. */
export interface ProcessExit {
  /** Exit code; null when killed by a signal. */
  exitCode: number | null;
  /** Signal name when killed (`SIGTERM`…), else null. */
  signal: string | null;
  /**
   * Present only when neither `exitCode` nor `signal` is known: why (an SSH server that closed
   * the channel without an exit status, a dropped connection).
   */
  unknownExitReason?: string;
}

/** A process started by `Executor.spawn`, running until it ends or is killed. */
export interface RunningProcess {
  /** Process id of the group leader on its executor, when known. */
  readonly pid: number | undefined;
  /**
   * Sends text to the process's standard input (or the terminal, with `tty`).
   * @throws Error when the process has ended or its input is closed.
   */
  write(input: string): void;
  /**
   * Subscribes to output (stdout and stderr interleaved, decoded as UTF-8) from now on.
   * @returns a function that unsubscribes
   */
  onOutput(listener: (chunk: string) => void): () => void;
  /** Settles once the process ended and its output was read; never rejects. */
  readonly exited: Promise<ProcessExit>;
  /** Kills the whole process group (SIGTERM, then SIGKILL after a grace period). Safe after the end. */
  kill(): void;
  /**
   * Changes the terminal size of a `tty` process (the program gets SIGWINCH). Absent, or
   * a no-op, for processes without a terminal; ignored after the end.
   */
  resize?(columns: number, rows: number): void;
  /**
   * Stops reading the process's output until `resume`: output waits in the kernel's (or the
   * SSH channel's) buffer and, once that is full, the program blocks on writing. This is how a
   * slow reader slows a fast program down instead of output piling up in memory. Absent on
   * processes that cannot be paused.
   */
  pause?(): void;
  /** Reads output again after `pause`. */
  resume?(): void;
}

/**
 * A program to start with separate byte pipes for stdin, stdout and stderr
 * (`Executor.spawnPiped`), for protocols spoken over stdio such as MCP servers.
 */
export interface PipedSpawnRequest {
  /** The program (looked up on the executor's `PATH` when it has no slash). */
  command: string;
  /** Its arguments, passed as they are (no shell expansion). */
  args: string[];
  /** Absolute working directory; absent: the executor's default (the remote account's home over SSH). */
  cwd?: string;
  /** Absolute root of the workspace the program runs for (see `CommandRequest.workspaceRoot`). */
  workspaceRoot?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

/** A process started by `Executor.spawnPiped`. */
export interface PipedProcess {
  /** Process id on its executor, once known (over SSH it arrives after the channel opened). */
  readonly pid: number | undefined;
  /**
   * Writes bytes to the process's standard input.
   * @throws Error when the process has ended or its input was closed
   */
  write(data: string | Uint8Array): void;
  /** Closes standard input (the program reads end of file). */
  endInput(): void;
  /** Subscribes to standard output, as raw bytes. @returns a function that unsubscribes */
  onStdout(listener: (chunk: Buffer) => void): () => void;
  /** Subscribes to standard error, as raw bytes. @returns a function that unsubscribes */
  onStderr(listener: (chunk: Buffer) => void): () => void;
  /** Settles once the process ended (or could not be started); never rejects. */
  readonly exited: Promise<ProcessExit>;
  /** Kills the process and its descendants (SIGTERM, then SIGKILL after a grace period). Safe after the end. */
  kill(): void;
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
  /**
   * Starts a command and returns at once, leaving it running (background and interactive
   * commands). Absent on executors that cannot do this.
   * @throws Error when the executor is closed or the process cannot be started.
   */
  spawn?(request: SpawnRequest): RunningProcess;
  /**
   * Starts a program with separate stdin/stdout/stderr pipes and returns at once (stdio MCP
   * servers). Absent on executors that cannot do this (`virtual`).
   * @throws Error when the executor is closed or the program cannot be started.
   */
  spawnPiped?(request: PipedSpawnRequest): PipedProcess;
  /**
   * Told of each workspace root tools will use on this executor (called by `Workspace`).
   * A sandboxed executor makes that root writable for its file operations, as it is for
   * the commands run for it; other executors do not need it.
   */
  useWorkspace?(root: string): void;
  /**
   * The file system a new work location's directory is checked on, when not `fs`: a sandboxed
   * local executor binds that directory from this machine into each of its commands' sandboxes,
   * so it must exist here, while `fs` outside every workspace shows `/tmp` and the home
   * directory empty, as the sandbox does.
   */
  readonly workLocationFileSystem?: ExecutorFileSystem;
  /** Releases connections and kills what is still running. */
  close(): Promise<void>;
}

/**
 * The property by which a view of an executor (one that adjusts the commands it runs, e.g. with
 * a project's environment) names the configured executor it wraps.
 */
export const UNDERLYING_EXECUTOR = Symbol('underlying executor');

/**
 * The configured executor behind `executor`: itself, unless it is a view made over another one.
 * What is kept per machine (file edit locks, which programs it has) is keyed by this, so every
 * view of one executor shares it.
 * @param executor an executor or a view of one
 */
export function underlyingExecutor(executor: Executor): Executor {
  return (executor as unknown as Record<symbol, Executor | undefined>)[UNDERLYING_EXECUTOR] ?? executor;
}

import path from 'node:path';
import type { CommandRequest, CommandResult, Executor, RunningProcess, SpawnRequest } from '../executor.js';
import { bubblewrapProgram, findBubblewrap, missingBubblewrapError, type BubblewrapPolicy } from './bubblewrap.js';
import type { ProcessTracker } from '../process-tracker.js';
import { LocalFileSystem } from './local-file-system.js';
import { startCommand, type RunningCommand } from './run-command.js';
import { spawnLocalProcess } from './spawn-process.js';

/** Options of `LocalExecutor`. */
export interface LocalExecutorOptions {
  /** The executor's name from configuration (`local`). */
  name: string;
  /** `bwrap` to run every command inside bubblewrap; absent = plain child processes. */
  sandbox?: 'bwrap';
  /** With `sandbox: bwrap`: keep network access (default false). */
  network?: boolean;
  /** With `sandbox: bwrap`: absolute paths writable besides the workspace. */
  writablePaths?: string[];
  /** With `sandbox: bwrap`: where `bwrap` is (default: found on `PATH`). */
  bwrapPath?: string;
}

/**
 * The executor of the machine the server runs on (SPEC §7): the local file system and
 * `bash`, with each command in its own process group; optionally inside bubblewrap
 * (`sandbox: 'bwrap'`: read-only system, writable workspace, private `/tmp`, no network unless
 * `network: true`). File operations are never sandboxed: tools confine them to the workspace
 * themselves (`Workspace.resolveSafe`).
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local' as const;
  readonly name: string;
  readonly fs = new LocalFileSystem();
  /** The bubblewrap policy, or undefined for unsandboxed commands. */
  readonly sandbox: BubblewrapPolicy | undefined;
  private readonly bwrapPath: string | undefined;
  private readonly running = new Set<RunningCommand>();
  /** Processes started by `spawn` that have not ended yet. */
  private readonly spawned = new Set<RunningProcess>();
  private closed = false;
  private tracker: ProcessTracker | undefined;

  /**
   * @param options name and optional sandbox settings
   * @throws Error naming the entry when a writable path is not absolute, or sandbox settings
   *   are given without `sandbox: 'bwrap'`
   */
  constructor(options: LocalExecutorOptions) {
    this.name = options.name;
    this.bwrapPath = options.bwrapPath;
    if (options.sandbox === 'bwrap') {
      const writablePaths = options.writablePaths ?? [];
      for (const writable of writablePaths) {
        if (!path.isAbsolute(writable)) throw new Error(`executor "${this.name}": writable path "${writable}" must be absolute`);
      }
      this.sandbox = { network: options.network ?? false, writablePaths };
    } else {
      if (options.network !== undefined || options.writablePaths !== undefined) {
        throw new Error(`executor "${this.name}": network and writablePaths only apply with sandbox: bwrap`);
      }
      this.sandbox = undefined;
    }
  }

  /** The request with the tracker's environment variables added (the request's own win). */
  private tagged<R extends { env?: Record<string, string> }>(request: R): R {
    const extra = this.tracker?.environment;
    return extra ? { ...request, env: { ...extra, ...request.env } } : request;
  }

  /** Reports every process group this executor starts from now on (see `ProcessTracker`). */
  trackProcesses(tracker: ProcessTracker): void {
    this.tracker = tracker;
  }

  /**
   * Runs a command to completion, timeout or abort (see `startCommand` for the output and
   * kill rules). The result also carries `omittedBytes`, the bytes dropped after the cap.
   * Inside the bwrap sandbox, background jobs end with the command (the sandbox's PID
   * namespace goes away) and a command killed by a signal reports exit code 128+N.
   * @throws Error when the executor is closed, bubblewrap is missing (sandboxed executors),
   *   or the process cannot be started (e.g. the working directory does not exist).
   */
  async run(original: CommandRequest): Promise<CommandResult> {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const request = this.tagged(original);
    let command: RunningCommand;
    if (this.sandbox !== undefined) {
      const bwrap = findBubblewrap(this.bwrapPath);
      if (bwrap === undefined) throw missingBubblewrapError(this.name, this.bwrapPath);
      command = startCommand(request, bubblewrapProgram(request, this.sandbox, bwrap, this.name));
    } else {
      command = startCommand(request);
    }
    this.running.add(command);
    const { pid } = command;
    if (pid !== undefined) this.tracker?.started(pid);
    try {
      return await command.result;
    } finally {
      this.running.delete(command);
      if (pid !== undefined) this.tracker?.ended(pid);
    }
  }

  /**
   * Starts a command and leaves it running (background and `tty` commands; see
   * `spawnLocalProcess`), inside bubblewrap when the executor is sandboxed.
   * @throws Error when the executor is closed, bubblewrap is missing (sandboxed executors),
   *   or node-pty cannot be loaded (`tty`).
   */
  spawn(original: SpawnRequest): RunningProcess {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const request = this.tagged(original);
    let started: RunningProcess;
    if (this.sandbox !== undefined) {
      const bwrap = findBubblewrap(this.bwrapPath);
      if (bwrap === undefined) throw missingBubblewrapError(this.name, this.bwrapPath);
      started = spawnLocalProcess(request, bubblewrapProgram(request, this.sandbox, bwrap, this.name));
    } else {
      started = spawnLocalProcess(request);
    }
    this.spawned.add(started);
    const { pid } = started;
    if (pid !== undefined) this.tracker?.started(pid);
    const ended = (): void => {
      this.spawned.delete(started);
      if (pid !== undefined) this.tracker?.ended(pid);
    };
    // `exited` never rejects; the second handler is there so nothing can float.
    started.exited.then(ended, ended);
    return started;
  }

  /**
   * Kills every command still running, `spawn`ed ones included (their whole process groups),
   * and waits for them to end. Later `run` and `spawn` calls are refused.
   */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.running];
    const spawned = [...this.spawned];
    for (const command of pending) command.kill();
    for (const started of spawned) started.kill();
    await Promise.allSettled([...pending.map((command) => command.result), ...spawned.map((started) => started.exited)]);
  }
}

import path from 'node:path';
import { CommandEnvironment, type EnvironmentPolicy } from '../command-environment.js';
import type { CommandRequest, CommandResult, Executor, ExecutorFileSystem, PipedProcess, PipedSpawnRequest, RunningProcess, SpawnRequest } from '../executor.js';
import { shellQuote } from '../../shell-quote.js';
import { startLocalPipedProcess } from './piped-process.js';
import { bashProgram, startCommand, type CommandProgram, type RunningCommand } from './run-command.js';
import { accountHomeDirectory, bubblewrapProgram, findBubblewrap, missingBubblewrapError, type BubblewrapPolicy } from './bubblewrap.js';
import type { ProcessTracker } from '../process-tracker.js';
import { LocalFileSystem } from './local-file-system.js';
import { SandboxFileSystem } from './sandbox-file-system.js';
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
  /** With `sandbox: bwrap`: absolute paths shown read-only even under the emptied home (e.g. `~/.gitconfig`). */
  readablePaths?: string[];
  /** With `sandbox: bwrap`: where `bwrap` is (default: found on `PATH`). */
  bwrapPath?: string;
  /**
   * With `sandbox: bwrap`: absolute directories the sandbox never sees (the server's
   * configuration, data and state directories); each is replaced by an empty directory.
   */
  hiddenPaths?: string[];
  /** With `sandbox: bwrap`: the home directory, emptied in the sandbox (default: none emptied). */
  homeDirectory?: string;
  /**
   * With `sandbox: bwrap` and a `homeDirectory`: the account's home in the password database,
   * emptied too when it differs (default: looked up, see `accountHomeDirectory`).
   */
  accountHomeDirectory?: string;
  /** Which variables of the server's environment commands receive (default: all but credentials, see `CommandEnvironment`). */
  environment?: EnvironmentPolicy;
}

/**
 * The executor of the machine the server runs on (SPEC §7): the local file system and
 * `bash`, with each command in its own process group; optionally inside bubblewrap
 * (`sandbox: 'bwrap'`: read-only system, writable workspace, private `/tmp`, no network unless
 * `network: true`, server directories and home hidden). With the sandbox, file operations
 * run inside it too (`SandboxFileSystem`), so they see and write exactly what the commands
 * of the same workspace do; without it they use `node:fs` and tools confine them with
 * `Workspace.resolveSafe`. Commands get the server's environment without its credentials
 * (`environment` policy).
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local' as const;
  readonly name: string;
  readonly fs: ExecutorFileSystem;
  /** The file system a new work location is checked on (see `Executor.workLocationFileSystem`); set when sandboxed. */
  readonly workLocationFileSystem?: ExecutorFileSystem;
  /** The bubblewrap policy, or undefined for unsandboxed commands. */
  readonly sandbox: BubblewrapPolicy | undefined;
  private readonly bwrapPath: string | undefined;
  private readonly environment: CommandEnvironment;
  private readonly running = new Set<RunningCommand>();
  /** Processes started by `spawn` that have not ended yet. */
  private readonly spawned = new Set<RunningProcess | PipedProcess>();
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
    this.environment = new CommandEnvironment(options.environment);
    if (options.sandbox === 'bwrap') {
      const writablePaths = options.writablePaths ?? [];
      const readablePaths = options.readablePaths ?? [];
      for (const [what, list] of [['writable', writablePaths], ['readable', readablePaths], ['hidden', options.hiddenPaths ?? []]] as const) {
        for (const entry of list) if (!path.isAbsolute(entry)) throw new Error(`executor "${this.name}": ${what} path "${entry}" must be absolute`);
      }
      // A home to empty was asked for: the account's own home is emptied with it, wherever HOME points.
      const accountHome = options.homeDirectory !== undefined ? (options.accountHomeDirectory ?? accountHomeDirectory()) : undefined;
      this.sandbox = {
        network: options.network ?? false,
        writablePaths,
        readablePaths,
        hiddenPaths: options.hiddenPaths ?? [],
        homeDirectory: options.homeDirectory,
        ...(accountHome !== undefined ? { accountHomeDirectory: accountHome } : {}),
      };
      this.fs = new SandboxFileSystem({ executorName: this.name, policy: this.sandbox, bwrap: () => this.requireBubblewrap() });
      this.workLocationFileSystem = new LocalFileSystem();
    } else {
      if (options.network !== undefined || options.writablePaths !== undefined || options.readablePaths !== undefined) {
        throw new Error(`executor "${this.name}": network, writablePaths and readablePaths only apply with sandbox: bwrap`);
      }
      this.sandbox = undefined;
      this.fs = new LocalFileSystem();
    }
  }

  /** A sandboxed executor's file operations may write inside `root` (see `Executor.useWorkspace`). */
  useWorkspace(root: string): void {
    if (this.fs instanceof SandboxFileSystem) this.fs.addWorkspaceRoot(root);
  }

  private requireBubblewrap(): string {
    const bwrap = findBubblewrap(this.bwrapPath);
    if (bwrap === undefined) throw missingBubblewrapError(this.name, this.bwrapPath);
    return bwrap;
  }

  /** The program of one command: bash, or bash in the sandbox, with the filtered environment. */
  private program(request: CommandRequest | SpawnRequest): CommandProgram {
    const environment = this.environment.build(request.env);
    if (this.sandbox === undefined) return { ...bashProgram(request.command), env: environment };
    return bubblewrapProgram(request, this.sandbox, this.requireBubblewrap(), this.name, environment);
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
   * kill rules). The result also carries `omittedBytes`, the bytes omitted between head and tail.
   * Inside the bwrap sandbox, background jobs end with the command (the sandbox's PID
   * namespace goes away) and a command killed by a signal reports exit code 128+N.
   * @throws Error when the executor is closed, bubblewrap is missing (sandboxed executors),
   *   or the process cannot be started (e.g. the working directory does not exist).
   */
  async run(original: CommandRequest): Promise<CommandResult> {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const request = this.tagged(original);
    const command = startCommand(request, this.program(request));
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
    return this.keepUntilExit(spawnLocalProcess(request, this.program(request)));
  }

  /**
   * Starts a program with separate stdin/stdout/stderr pipes (stdio MCP servers), inside
   * bubblewrap when the executor is sandboxed: there the workspace root (or `cwd`) is the
   * writable directory, as for commands, and the program sees what commands see.
   * @throws Error when the executor is closed, bubblewrap is missing, or a sandboxed executor
   *   is given neither `cwd` nor `workspaceRoot` (the sandbox needs a workspace)
   */
  spawnPiped(original: PipedSpawnRequest): PipedProcess {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const request = this.tagged(original);
    const cwd = request.cwd ?? request.workspaceRoot;
    if (cwd === undefined && this.sandbox !== undefined) throw new Error(`executor "${this.name}" is sandboxed: a program needs a working directory or workspace root to run in`);
    const command = ['exec', request.command, ...request.args].map(shellQuote).join(' ');
    const directory = cwd ?? process.cwd();
    const program = this.program({ command, cwd: directory, ...(request.workspaceRoot !== undefined ? { workspaceRoot: request.workspaceRoot } : {}), ...(request.env ? { env: request.env } : {}) });
    return this.keepUntilExit(startLocalPipedProcess({ file: program.file, args: program.args, env: program.env ?? {} }, directory));
  }

  /**
   * Holds a started process among those {@link close} kills, and reports its pid to the
   * process tracker, until it exits. Returns the process it was given.
   */
  private keepUntilExit<Started extends RunningProcess | PipedProcess>(started: Started): Started {
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
    if (this.fs instanceof SandboxFileSystem) this.fs.close();
    const pending = [...this.running];
    const spawned = [...this.spawned];
    for (const command of pending) command.kill();
    for (const started of spawned) started.kill();
    await Promise.allSettled([...pending.map((command) => command.result), ...spawned.map((started) => started.exited)]);
  }
}

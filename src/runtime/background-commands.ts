/**
 * Background and interactive commands of one session (SPEC §6–§7): started by `exec_command`
 * with `yield_after_ms` or `tty`, driven with `write_stdin`, listed by `list_commands`, ended by
 * `kill_command`. They outlive the tool call and the turn that started them, and are killed
 * (whole process group) when the session closes or the server stops.
 */
import { newId } from '../ids.js';
import type { Executor, ProcessExit, RunningProcess, SpawnRequest } from '../executors/executor.js';
import { OutputCollector } from '../executors/output-collector.js';
import type { OmittedRange } from '../executors/output-truncation.js';
import { TOOL_OUTPUT_RETAINED_BYTES } from '../tools/tool.js';

/**
 * Default bound on a command's unread output, in bytes: beyond it the head and the newest
 * tail are kept around a marker (the stored bound of a tool result, less room for the status lines).
 */
export const BACKGROUND_OUTPUT_LIMIT_BYTES = TOOL_OUTPUT_RETAINED_BYTES - 1024;
/** Default number of commands a session may have running at once. */
export const BACKGROUND_MAX_RUNNING = 32;
/** Ended commands kept for `list_commands` and a last read; older ones are forgotten. */
const MAX_ENDED_KEPT = 50;

/** One command as `list_commands` reports it. */
export interface BackgroundCommandInfo {
  /** `cmd_…`, the id the tools take. */
  id: string;
  /** The command line as given. */
  command: string;
  /** Name of the executor it runs on. */
  executor: string;
  /** Process id of its group leader on that executor, when known. */
  pid: number | undefined;
  /** Whether it ran in a pseudo-terminal. */
  tty: boolean;
  /** `running` until the process ended. */
  status: 'running' | 'exited';
  /** Exit code once ended (null when killed by a signal or still running). */
  exitCode: number | null;
  /** Signal name when killed, else null. */
  signal: string | null;
  /** Start, ms since the epoch. */
  startedAt: number;
  /** End, ms since the epoch, once ended. */
  endedAt: number | null;
}

/** Output collected since the last read. */
export interface CommandOutput {
  /** The text: all of it, or its head and tail around a marker naming what was omitted. */
  text: string;
  /** Bytes omitted because unread output exceeded the limit. */
  droppedBytes: number;
  /** What was omitted, in positions of the output since the last read, when anything was. */
  omitted?: OmittedRange;
}

/** A command started through the registry; the tools read its output and write its input. */
export class BackgroundCommand {
  /** Start, ms since the epoch. */
  readonly startedAt = Date.now();
  /** True when it was killed for running past its timeout. */
  timedOut = false;
  private unread: OutputCollector;
  private exit: ProcessExit | undefined;
  private endedAt: number | null = null;
  private readonly changeWaiters = new Set<() => void>();
  private timeoutTimer: NodeJS.Timeout | undefined;

  /** Absolute working directory it was started in. */
  readonly cwd: string;

  /**
   * @param id the command's id
   * @param command the command line as given
   * @param cwd absolute working directory it runs in
   * @param executorName where it runs
   * @param tty whether it runs in a pseudo-terminal
   * @param process the running process
   * @param outputLimitBytes cap on unread output, in bytes
   * @param timeoutMs kill it after this many ms; undefined = no limit
   */
  constructor(
    readonly id: string,
    readonly command: string,
    cwd: string,
    readonly executorName: string,
    readonly tty: boolean,
    readonly process: RunningProcess,
    private readonly outputLimitBytes: number,
    timeoutMs?: number,
  ) {
    this.cwd = cwd;
    this.unread = new OutputCollector(outputLimitBytes);
    process.onOutput((chunk) => this.append(chunk));
    const ended = (exit: ProcessExit): void => {
      this.exit = exit;
      this.endedAt = Date.now();
      if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
      this.notify();
    };
    // An executor whose exit report fails still ends the command, with no code known.
    process.exited.then(ended, () => ended({ exitCode: null, signal: null }));
    if (timeoutMs !== undefined) {
      this.timeoutTimer = setTimeout(() => {
        this.timedOut = true;
        process.kill();
      }, timeoutMs);
      this.timeoutTimer.unref();
    }
  }

  /** How it ended, or undefined while running. */
  get ended(): ProcessExit | undefined {
    return this.exit;
  }

  /** The command as `list_commands` reports it. */
  info(): BackgroundCommandInfo {
    return {
      id: this.id,
      command: this.command,
      executor: this.executorName,
      pid: this.process.pid,
      tty: this.tty,
      status: this.exit ? 'exited' : 'running',
      exitCode: this.exit?.exitCode ?? null,
      signal: this.exit?.signal ?? null,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
    };
  }

  /** Removes and returns the output collected since the last read. */
  read(): CommandOutput {
    const collected = this.unread.result();
    this.unread = new OutputCollector(this.outputLimitBytes);
    return { text: collected.output, droppedBytes: collected.omittedBytes, ...(collected.omitted ? { omitted: collected.omitted } : {}) };
  }

  /**
   * Sends input to the process. @throws Error when it has ended.
   */
  write(input: string): void {
    if (this.exit) throw new Error(`command ${this.id} has ended; it takes no more input`);
    this.process.write(input);
  }

  /**
   * Waits `ms` ms, or less when the process ends or `signal` aborts first.
   * @returns true when the process has ended
   */
  async waitForExit(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.exit) return true;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.changeWaiters.delete(onChange);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const onChange = (): void => {
        if (this.exit) done();
      };
      const timer = setTimeout(done, ms);
      this.changeWaiters.add(onChange);
      signal?.addEventListener('abort', done, { once: true });
    });
    return this.exit !== undefined;
  }

  /** Kills the process group and waits until it ended. */
  async kill(): Promise<ProcessExit> {
    this.process.kill();
    return this.process.exited;
  }

  private append(chunk: string): void {
    // Bounded however much is written between reads: head and newest tail, the rest counted.
    this.unread.add(chunk);
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.changeWaiters]) waiter();
  }
}

/** Options of `BackgroundCommandRegistry`. */
export interface BackgroundCommandRegistryOptions {
  /** Bound on each command's unread output, in bytes (default `BACKGROUND_OUTPUT_LIMIT_BYTES`). */
  outputLimitBytes?: number;
  /** Commands that may run at once (default `BACKGROUND_MAX_RUNNING`). */
  maxRunning?: number;
}

/** The background commands of one session. */
export class BackgroundCommandRegistry {
  private readonly commands = new Map<string, BackgroundCommand>();
  private readonly outputLimitBytes: number;
  private readonly maxRunning: number;
  private closed = false;

  /** @param options output cap and running limit */
  constructor(options: BackgroundCommandRegistryOptions = {}) {
    this.outputLimitBytes = options.outputLimitBytes ?? BACKGROUND_OUTPUT_LIMIT_BYTES;
    this.maxRunning = options.maxRunning ?? BACKGROUND_MAX_RUNNING;
  }

  /**
   * Starts a command on `executor` and keeps it until the registry closes.
   * @param timeoutMs kill it after this many ms; undefined = run until it ends or is killed
   * @throws Error when the registry is closed, too many commands run, the executor cannot
   *   spawn processes (`not supported on executor kind …`) or the process cannot be started
   */
  start(executor: Executor, request: SpawnRequest, timeoutMs?: number): BackgroundCommand {
    if (this.closed) throw new Error('the session is closed; no more commands can be started');
    if (!executor.spawn) throw new Error(`background and tty commands are not supported on executor kind "${executor.kind}" (executor "${executor.name}")`);
    const running = [...this.commands.values()].filter((command) => !command.ended).length;
    if (running >= this.maxRunning) throw new Error(`${running} commands are already running in this session (the limit); stop some with kill_command`);
    const started = executor.spawn(request);
    const command = new BackgroundCommand(newId('cmd'), request.command, request.cwd, executor.name, request.tty ?? false, started, this.outputLimitBytes, timeoutMs);
    this.commands.set(command.id, command);
    // Ended commands stay listed (with their exit code), but only the newest few.
    const ended = [...this.commands.values()].filter((candidate) => candidate.ended);
    for (const old of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_KEPT))) this.commands.delete(old.id);
    return command;
  }

  /** The command with this id, or undefined. */
  get(id: string): BackgroundCommand | undefined {
    return this.commands.get(id);
  }

  /** Every command started in the session, oldest first, running and ended. */
  list(): BackgroundCommandInfo[] {
    return [...this.commands.values()].map((command) => command.info());
  }

  /** True while one of the commands has not ended. */
  get hasRunning(): boolean {
    return [...this.commands.values()].some((command) => !command.ended);
  }


  /**
   * Kills every running command (whole process groups), waits until they ended, and refuses
   * new ones. Safe to call more than once.
   */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.commands.values()].filter((command) => !command.ended).map((command) => command.kill()));
  }
}

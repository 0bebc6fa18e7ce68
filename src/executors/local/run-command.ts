import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { CommandRequest, CommandResult } from '../executor.js';
import { defaultCommandEnvironment } from '../command-environment.js';
import { OutputCollector } from '../output-collector.js';
import { launchProcess } from './launch-process.js';

/**
 * After the foreground process exits, how long to keep reading output that is still buffered
 * in the pipes, in ms. The window restarts whenever data arrives, up to `DRAIN_LIMIT_MS`.
 */
const DRAIN_IDLE_MS = 100;
/**
 * Upper bound of the drain after exit, in ms: a background child that keeps writing to the
 * inherited pipe (`yes &`) must not hold the result back.
 */
const DRAIN_LIMIT_MS = 500;
/** Time between SIGTERM and SIGKILL when killing a command, in ms. */
export const KILL_GRACE_MS = 2000;
/** Longest delay `setTimeout` honours, in ms; larger values fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A `CommandResult` with the local runner's extra accounting. */
export interface LocalCommandResult extends CommandResult {
  /** Bytes of stdout+stderr omitted between the kept head and tail (0 when not truncated). */
  omittedBytes: number;
}

/** The program that runs a command: `bash -c COMMAND`, or a sandbox wrapping it. */
export interface CommandProgram {
  /** Executable, looked up on `PATH` when not absolute. */
  file: string;
  /** Its arguments. */
  args: string[];
  /**
   * The whole environment of the process. Absent: the server's environment filtered by the
   * default policy (`CommandEnvironment`), plus the request's own variables.
   */
  env?: Record<string, string>;
}

/** `bash -c COMMAND`, the program of an unsandboxed command. */
export function bashProgram(command: string): CommandProgram {
  return { file: 'bash', args: ['-c', command] };
}

/** A command that has been started and can be killed before it ends. */
export interface RunningCommand {
  /** The leader's pid (= the process group id); undefined when the command never started. */
  readonly pid: number | undefined;
  /** Settles once the command ended (or was killed); never rejects for a failing command. */
  readonly result: Promise<LocalCommandResult>;
  /**
   * Kills the command's process group and its descendants (SIGTERM, then SIGKILL after a
   * grace period). Safe to call after the command ended.
   */
  kill(): void;
}

/** Whether a process (or, with a negative id, a process group) still exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM means it exists but belongs to someone else; it is not ours to kill either way.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends a signal to a process (or, with a negative id, a process group), ignoring one that is gone. */
export function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: nothing left to kill.
  }
}

/** Parent of every running process, read from /proc (Linux) or `ps` elsewhere. */
function readParentTable(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  const add = (pid: number, parent: number): void => {
    if (!Number.isInteger(pid) || !Number.isInteger(parent)) return;
    const list = children.get(parent);
    if (list) list.push(pid);
    else children.set(parent, [pid]);
  };
  let entries: string[] | undefined;
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    entries = undefined;
  }
  if (entries) {
    for (const name of entries) {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        // The command name (field 2) is in parentheses and may itself contain spaces or ")".
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        add(Number(name), Number(fields[1]));
      } catch {
        // The process ended while we were reading.
      }
    }
    return children;
  }
  const listing = spawnSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  for (const line of (listing.stdout ?? '').split('\n')) {
    const [pid, parent] = line.trim().split(/\s+/).map(Number);
    if (pid !== undefined && parent !== undefined) add(pid, parent);
  }
  return children;
}

/**
 * Every descendant of `rootPid`. Needed besides the process group because a descendant that
 * called `setsid` left the group, and once its parent dies it is re-parented and untraceable.
 */
export function findDescendants(rootPid: number): number[] {
  const children = readParentTable();
  const found: number[] = [];
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    for (const child of children.get(pid) ?? []) {
      if (!found.includes(child)) {
        found.push(child);
        pending.push(child);
      }
    }
  }
  return found;
}

/**
 * Starts a command with `bash -c` (or the given `program`, e.g. bubblewrap wrapping bash) as
 * the leader of a new process group, so that a timeout, an abort or `kill()` can end it
 * together with everything it started.
 *
 * Output of stdout and stderr is interleaved in arrival order, kept as head and tail within
 * `request.maxOutputBytes` bytes (`OutputCollector`) and streamed through `request.onOutput`. The
 * result settles shortly (at most ~0.5 s) after the foreground process exits, even when a
 * background child still holds the output pipes open; such children are left running, as
 * with any shell, and the pipes are closed on our side.
 *
 * Spawn failures (a missing working directory, no `bash`) reject with an Error naming the
 * working directory; a command that fails is a normal result.
 */
export function startCommand(request: CommandRequest, program: CommandProgram = bashProgram(request.command)): RunningCommand {
  const startedAt = performance.now();
  const collector = new OutputCollector(request.maxOutputBytes, request.onOutput);
  let timedOut = false;
  let aborted = false;
  let killRequested = false;
  let settled = false;
  const knownDescendants = new Set<number>();

  if (request.signal?.aborted) {
    const result: LocalCommandResult = {
      exitCode: null,
      signal: null,
      output: '',
      truncated: false,
      timedOut: false,
      aborted: true,
      durationMs: 0,
      omittedBytes: 0,
    };
    return { pid: undefined, result: Promise.resolve(result), kill: () => undefined };
  }

  const child = launchProcess(program.file, program.args, {
    cwd: request.cwd,
    env: program.env ?? defaultCommandEnvironment().build(request.env),
    stdin: 'ignore',
  });
  const pid = child.pid;

  const collect = (text: string): void => collector.add(text);

  const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')];
  const streams = [child.stdout, child.stderr];
  let drainTimer: NodeJS.Timeout | undefined;
  let restartDrain: (() => void) | undefined;
  streams.forEach((stream, index) => {
    stream?.on('data', (data: Buffer) => {
      if (settled) return;
      collect((decoders[index] as StringDecoder).write(data));
      restartDrain?.();
    });
    // Destroying the pipe while a background child writes can raise EPIPE-like errors.
    stream?.on('error', () => undefined);
  });

  let killTimer: NodeJS.Timeout | undefined;
  const killGroup = (): void => {
    if (killRequested || pid === undefined) return;
    killRequested = true;
    for (const descendant of findDescendants(pid)) knownDescendants.add(descendant);
    sendSignal(-pid, 'SIGTERM');
    for (const descendant of knownDescendants) sendSignal(descendant, 'SIGTERM');
    killTimer = setTimeout(() => {
      if (processExists(pid)) {
        for (const descendant of findDescendants(pid)) knownDescendants.add(descendant);
      }
      sendSignal(-pid, 'SIGKILL');
      for (const descendant of knownDescendants) {
        if (processExists(descendant)) sendSignal(descendant, 'SIGKILL');
      }
    }, KILL_GRACE_MS);
    // Escalation must not keep the server process alive on shutdown.
    killTimer.unref();
  };

  const timeoutTimer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, Math.min(request.timeoutMs, MAX_TIMER_MS));
  const onAbort = (): void => {
    aborted = true;
    killGroup();
  };
  request.signal?.addEventListener('abort', onAbort, { once: true });

  const result = new Promise<LocalCommandResult>((resolve, reject) => {
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let exitedAt: number | undefined;

    const cleanUp = (): void => {
      settled = true;
      clearTimeout(timeoutTimer);
      if (drainTimer) clearTimeout(drainTimer);
      request.signal?.removeEventListener('abort', onAbort);
      for (const stream of streams) stream?.destroy();
    };

    const finish = (): void => {
      if (settled) return;
      for (const decoder of decoders) collect(decoder.end());
      cleanUp();
      resolve({
        exitCode,
        signal: exitSignal,
        ...collector.result(),
        timedOut,
        aborted,
        durationMs: Math.round((exitedAt ?? performance.now()) - startedAt),
      });
    };

    child.once('error', (error) => {
      if (settled) return;
      cleanUp();
      if (killTimer) clearTimeout(killTimer);
      reject(new Error(`cannot run command in "${request.cwd}": ${error.message}`, { cause: error }));
    });

    child.once('exit', (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      exitedAt = performance.now();
      const drainDeadline = exitedAt + DRAIN_LIMIT_MS;
      restartDrain = () => {
        if (drainTimer) clearTimeout(drainTimer);
        const wait = Math.min(DRAIN_IDLE_MS, Math.max(0, drainDeadline - performance.now()));
        drainTimer = setTimeout(finish, wait);
      };
      restartDrain();
    });

    // When nobody else holds the pipes, `close` comes right after `exit` and ends the drain early.
    child.once('close', finish);
  });

  return { pid, result, kill: killGroup };
}

/**
 * Runs a command to completion, timeout or abort (see `startCommand`).
 * @returns the exit code, signal, interleaved output (head and tail within `maxOutputBytes`
 *   bytes around a marker when longer), whether output was truncated, whether it timed out or was aborted, and the wall time in ms.
 * @throws Error naming the working directory when the process cannot be started.
 */
export function runCommand(request: CommandRequest): Promise<LocalCommandResult> {
  return startCommand(request).result;
}

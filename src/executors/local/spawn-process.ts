/**
 * Long-running local processes (`Executor.spawn`): background commands with pipes, and
 * interactive commands in a pseudo-terminal (node-pty). Each process leads its own process
 * group (pipes: a new session, `launchProcess`; PTY: node-pty's `setsid`), so killing it ends everything it
 * started.
 */
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { defaultCommandEnvironment } from '../command-environment.js';
import type { ProcessExit, RunningProcess, SpawnRequest } from '../executor.js';
import { launchProcess } from './launch-process.js';
import { bashProgram, findDescendants, KILL_GRACE_MS, processExists, sendSignal, type CommandProgram } from './run-command.js';

/** After the process exits, longest wait for output still buffered in its pipes, in ms. */
const EXIT_DRAIN_LIMIT_MS = 500;
/** Default terminal size of a PTY command. */
const DEFAULT_COLUMNS = 120;
const DEFAULT_ROWS = 40;
/** While a terminal's output is paused, how often to check whether its program has ended, ms. */
const PAUSED_EXIT_POLL_MS = 40;

type NodePty = typeof import('node-pty');
let nodePty: NodePty | undefined;

/**
 * Loads node-pty on first use: it is a native addon, so servers that never run a terminal
 * command never load it, and a failed build shows up as a clear error on the call.
 */
function loadNodePty(): NodePty {
  if (nodePty) return nodePty;
  try {
    nodePty = createRequire(import.meta.url)('node-pty') as NodePty;
    return nodePty;
  } catch (error) {
    throw new Error(`terminal (tty) commands need the node-pty package, which failed to load: ${(error as Error).message}`, { cause: error });
  }
}

/** Output fan-out shared by both kinds of process. */
class OutputListeners {
  private readonly listeners = new Set<(chunk: string) => void>();

  add(listener: (chunk: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(chunk: string): void {
    if (chunk === '') return;
    for (const listener of this.listeners) listener(chunk);
  }
}

/**
 * Kills a process group and its descendants that left the group: SIGTERM now, SIGKILL after
 * `KILL_GRACE_MS` to whatever is still there. Returns at once.
 */
export function killTree(pid: number, signalFirst: NodeJS.Signals = 'SIGTERM'): void {
  const known = new Set(findDescendants(pid));
  sendSignal(-pid, signalFirst);
  for (const descendant of known) sendSignal(descendant, signalFirst);
  const timer = setTimeout(() => {
    if (processExists(pid)) for (const descendant of findDescendants(pid)) known.add(descendant);
    sendSignal(-pid, 'SIGKILL');
    for (const descendant of known) if (processExists(descendant)) sendSignal(descendant, 'SIGKILL');
  }, KILL_GRACE_MS);
  // Escalation must not keep the server process alive on shutdown.
  timer.unref();
}

/** Starts `program` with pipes for stdin, stdout and stderr. */
function spawnWithPipes(request: SpawnRequest, program: CommandProgram): RunningProcess {
  const child = launchProcess(program.file, program.args, {
    cwd: request.cwd,
    env: program.env ?? defaultCommandEnvironment().build(request.env),
    stdin: 'pipe',
  });
  const listeners = new OutputListeners();
  const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')];
  [child.stdout, child.stderr].forEach((stream, index) => {
    stream?.on('data', (data: Buffer) => listeners.emit((decoders[index] as StringDecoder).write(data)));
    // A background grandchild may keep the pipe open; destroying it on our side can raise errors.
    stream?.on('error', () => undefined);
  });
  // Writing to a process that already exited raises EPIPE asynchronously; `write` reports it instead.
  child.stdin?.on('error', () => undefined);
  let ended = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    let exit: ProcessExit | undefined;
    const finish = (): void => {
      if (ended) return;
      ended = true;
      for (const decoder of decoders) listeners.emit(decoder.end());
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(exit ?? { exitCode: null, signal: null });
    };
    child.once('error', (error) => {
      listeners.emit(`[cannot run command in "${request.cwd}": ${error.message}]\n`);
      exit = { exitCode: 127, signal: null };
      finish();
    });
    child.once('exit', (code, signal) => {
      exit = { exitCode: code, signal };
      // Output still in the pipes arrives after `exit`; `close` ends the wait unless a child holds them.
      setTimeout(finish, EXIT_DRAIN_LIMIT_MS).unref();
    });
    child.once('close', finish);
  });
  return {
    pid: child.pid,
    write(input) {
      if (ended || !child.stdin || child.stdin.destroyed || child.stdin.writableEnded) throw new Error('the process has ended; its input is closed');
      child.stdin.write(input);
    },
    onOutput: (listener) => listeners.add(listener),
    exited,
    kill() {
      if (!ended && child.pid !== undefined) killTree(child.pid);
    },
  };
}

/** Starts `program` in a pseudo-terminal; stdout and stderr arrive merged, as on a terminal. */
function spawnInTerminal(request: SpawnRequest, program: CommandProgram): RunningProcess {
  const pty = loadNodePty();
  const terminal = pty.spawn(program.file, program.args, {
    name: 'xterm-256color',
    cols: request.columns ?? DEFAULT_COLUMNS,
    rows: request.rows ?? DEFAULT_ROWS,
    cwd: request.cwd,
    env: program.env ?? defaultCommandEnvironment().build(request.env),
  });
  const listeners = new OutputListeners();
  terminal.onData((data) => listeners.emit(data));
  let ended = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    terminal.onExit(({ exitCode, signal }) => {
      ended = true;
      // node-pty reports signal 0 for a normal exit and the number of the signal otherwise.
      const signalName = signal ? (Object.entries(constants.signals).find(([, number]) => number === signal)?.[0] ?? `signal ${signal}`) : null;
      resolve(signalName ? { exitCode: null, signal: signalName } : { exitCode, signal: null });
    });
  });
  let pausedWatch: NodeJS.Timeout | undefined;
  const resume = (): void => {
    if (pausedWatch === undefined) return;
    clearInterval(pausedWatch);
    pausedWatch = undefined;
    terminal.resume();
  };
  return {
    pid: terminal.pid,
    write(input) {
      if (ended) throw new Error('the process has ended; its input is closed');
      terminal.write(input);
    },
    onOutput: (listener) => listeners.add(listener),
    exited,
    kill() {
      // The PTY's child is a session (and group) leader, so the group id is its pid.
      if (!ended) killTree(terminal.pid, 'SIGHUP');
    },
    resize(columns, rows) {
      if (!ended) terminal.resize(columns, rows);
    },
    pause() {
      // node-pty drops what is still unread 200 ms after the program exits unless the
      // terminal is being read, so a program that has ended is never paused, and one that
      // ends while paused is read again at once.
      if (ended || pausedWatch !== undefined || !processExists(terminal.pid)) return;
      terminal.pause();
      pausedWatch = setInterval(() => {
        if (!processExists(terminal.pid)) resume();
      }, PAUSED_EXIT_POLL_MS);
      pausedWatch.unref();
    },
    resume,
  };
}

/**
 * Starts a command on the local machine and leaves it running (see `RunningProcess`).
 * @param request the command; `tty` chooses a pseudo-terminal over pipes
 * @param program what to run (default `bash -c COMMAND`; a sandbox passes its wrapper)
 * @throws Error when node-pty cannot be loaded (tty) or the terminal cannot be opened; a
 *   missing working directory with pipes is reported as output and exit code 127
 */
export function spawnLocalProcess(request: SpawnRequest, program: CommandProgram = bashProgram(request.command)): RunningProcess {
  return request.tty ? spawnInTerminal(request, program) : spawnWithPipes(request, program);
}

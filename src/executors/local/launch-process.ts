/**
 * Starting a local program as the leader of a new session, with pipes for its output: the one
 * place the local executor creates processes with pipes.
 *
 * Node.js 20 (libuv) creates a child with `fork` then `exec`. The fork copies the server's page
 * tables and write-protects all its private memory, so the server then faults once on every page
 * it writes, until the next fork does it again; with one command per agent step this was the
 * largest kernel cost of a step (docs/performance.md, eighth round). Where the small addon
 * `@openvaala/spawn-process` (`native/spawn-process`) is built and works (Linux 5.3+, glibc 2.29+),
 * the program is started with `posix_spawn`, which shares the memory until `exec` instead. It is
 * an optional dependency: elsewhere `child_process.spawn` starts the program, with the same
 * options and the same events.
 */
import { spawn as spawnChild } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** How to start a program: see {@link launchProcess}. */
export interface LaunchOptions {
  /** Absolute working directory. */
  cwd: string;
  /** The whole environment of the program; its `PATH` is where a bare program name is looked up. */
  env: NodeJS.ProcessEnv;
  /** A pipe for stdin (`pipe`), or /dev/null (`ignore`). */
  stdin: 'pipe' | 'ignore';
  /**
   * Which way to start it, to compare the two (benchmarks, tests); default {@link processLauncher}.
   * `posix_spawn` where the addon does not work falls back to `child_process`.
   */
  launcher?: 'posix_spawn' | 'child_process';
}

/**
 * A started program: the part of Node.js's `ChildProcess` the local executor uses. Events, in
 * order: `error` once when it could not be started (then no `exit`; `child_process` still sends a
 * `close` after it, which callers ignore); otherwise `exit` with
 * `(exitCode, signal)` when it ended, and `close` with the same arguments once it has ended and
 * its stdout and stderr are closed (a background grandchild holding them delays `close`).
 */
export interface LaunchedProcess {
  /** Its pid (= its session and process group id); undefined when it could not be started. */
  readonly pid?: number | undefined;
  /** Its stdin, when piped and started. */
  readonly stdin: Writable | null;
  /** Its stdout, when started. */
  readonly stdout: Readable | null;
  /** Its stderr, when started. */
  readonly stderr: Readable | null;
  once(event: 'error', listener: (error: Error) => void): this;
  once(event: 'exit' | 'close', listener: (exitCode: number | null, signal: NodeJS.Signals | null) => void): this;
}

/** The addon's interface (`native/spawn-process/index.d.ts`). */
interface SpawnProcessAddon {
  spawn(file: string, argv: string[], envp: string[], cwd: string, pipeStdin: boolean, onExit: (exitCode: number | null, signal: number) => void): [number, number, number, number];
  supported(): boolean;
}

/** Loaded on the first launch: `null` once it failed to load or does not work here. */
let addon: SpawnProcessAddon | null | undefined;

function loadAddon(ignoreEnvironment = false): SpawnProcessAddon | null {
  if (!ignoreEnvironment && process.env.OPENVAALA_SPAWN === 'child_process') return null;
  if (addon !== undefined) return addon;
  try {
    const loaded = createRequire(import.meta.url)('@openvaala/spawn-process') as SpawnProcessAddon;
    addon = loaded.supported() ? loaded : null;
  } catch {
    // An optional dependency that was not built (no compiler at install time): child_process it is.
    addon = null;
  }
  return addon;
}

/**
 * How programs are started in this process: `posix_spawn` through the addon, or
 * `child_process` (the addon is not built, does not work here, or `OPENVAALA_SPAWN=child_process`
 * asks for it).
 */
export function processLauncher(): 'posix_spawn' | 'child_process' {
  return loadAddon() ? 'posix_spawn' : 'child_process';
}

function isExecutableFile(file: string): 'yes' | 'not executable' | 'absent' {
  try {
    // Most directories of PATH lack the program: `throwIfNoEntry: false` answers those without
    // building an Error and its stack (about three quarters of a lookup's CPU when it threw).
    if (statSync(file, { throwIfNoEntry: false })?.isFile() !== true) return 'absent';
  } catch {
    return 'absent';
  }
  try {
    accessSync(file, fsConstants.X_OK);
    return 'yes';
  } catch {
    return 'not executable';
  }
}

/**
 * Where `file` is run from, as `execvp` and libuv look it up: as given when it holds a `/`
 * (relative to the child's working directory), else the first executable file of that name in
 * the directories of `searchPath` (an empty entry is the working directory). Looked up at every
 * start (a few `stat` calls), so a program installed or removed meanwhile is seen at once.
 * @returns the path to give `posix_spawn`, or the error code of `execvp` when there is none:
 *   `EACCES` when a file of that name was found but none executable, else `ENOENT`
 */
export function findProgram(file: string, searchPath: string, cwd: string): { path: string } | { code: 'ENOENT' | 'EACCES' } {
  if (file.includes('/')) return { path: file };
  let sawNotExecutable = false;
  for (const directory of searchPath.split(':')) {
    const candidate = path.resolve(cwd, directory || '.', file);
    const found = isExecutableFile(candidate);
    if (found === 'yes') return { path: candidate };
    if (found === 'not executable') sawNotExecutable = true;
  }
  return { code: sawNotExecutable ? 'EACCES' : 'ENOENT' };
}

/** Signal numbers to names; the first of two names wins (SIGABRT, not its alias SIGIOT; SIGIO, not SIGPOLL), as Node.js reports them. */
const signalNames = new Map<number, NodeJS.Signals>();
for (const [name, number] of Object.entries(osConstants.signals)) if (!signalNames.has(number)) signalNames.set(number, name as NodeJS.Signals);

/** Negative errno values of the codes the launcher produces itself. */
const ERRNO = { ENOENT: -2, EACCES: -13 } as const;

/** The shell that runs a program file of no executable format (a script without `#!`), as `execvp` does on ENOEXEC. */
const FALLBACK_SHELL = '/bin/sh';

/** An error shaped as Node.js's spawn errors: `spawn FILE CODE`, with `code`, `errno`, `syscall`, `path`, `spawnargs`. */
function spawnError(file: string, args: string[], code: string, errno: number): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException & { spawnargs?: string[] } = new Error(`spawn ${file} ${code}`);
  Object.assign(error, { code, errno, syscall: `spawn ${file}`, path: file, spawnargs: args });
  return error;
}

/** A program started by the addon, with the events of {@link LaunchedProcess}. */
class PosixSpawnedProcess extends EventEmitter implements LaunchedProcess {
  pid: number | undefined;
  stdin: Writable | null = null;
  stdout: Readable | null = null;
  stderr: Readable | null = null;
  private exit: [number | null, NodeJS.Signals | null] | undefined;
  private openOutputs = 2;

  constructor(loaded: SpawnProcessAddon, file: string, args: string[], options: LaunchOptions) {
    super();
    const searchPath = options.env.PATH ?? '/usr/bin:/bin';
    const environment = Object.entries(options.env).flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}`]));
    const start = (program: string, argv: string[]): [number, number, number, number] | NodeJS.ErrnoException => {
      try {
        return loaded.spawn(program, argv, environment, options.cwd, options.stdin === 'pipe', (exitCode, signal) => this.exited(exitCode, signal));
      } catch (error) {
        const { code, errno } = error as NodeJS.ErrnoException;
        if (code === undefined) throw error;
        return spawnError(file, args, code, errno ?? 0);
      }
    };
    const found = findProgram(file, searchPath, options.cwd);
    let started = 'path' in found ? start(found.path, [file, ...args]) : spawnError(file, args, found.code, ERRNO[found.code]);
    // A file of no executable format is a shell script without `#!`: sh runs it, as execvp has it run.
    if ('path' in found && !Array.isArray(started) && started.code === 'ENOEXEC') started = start(FALLBACK_SHELL, [FALLBACK_SHELL, found.path, ...args]);
    if (!Array.isArray(started)) {
      const error = started;
      process.nextTick(() => this.emit('error', error));
      return;
    }
    const [pid, stdinFd, stdoutFd, stderrFd] = started;
    this.pid = pid;
    if (stdinFd >= 0) this.stdin = new Socket({ fd: stdinFd, readable: false, writable: true });
    this.stdout = this.output(stdoutFd);
    this.stderr = this.output(stderrFd);
  }

  private output(fd: number): Readable {
    const socket = new Socket({ fd, readable: true, writable: false });
    socket.once('close', () => {
      this.openOutputs--;
      this.maybeClose();
    });
    return socket;
  }

  private exited(exitCode: number | null, signal: number): void {
    const signalName = signal === 0 ? null : (signalNames.get(signal) ?? null);
    this.exit = [exitCode, signalName];
    // Nothing will be written to stdin any more; a pending write would otherwise wait for EPIPE.
    if (this.stdin && !this.stdin.destroyed) this.stdin.destroy();
    this.emit('exit', exitCode, signalName);
    this.maybeClose();
  }

  private maybeClose(): void {
    if (this.exit === undefined || this.openOutputs > 0) return;
    const [exitCode, signal] = this.exit;
    this.exit = undefined;
    this.openOutputs = -1;
    this.emit('close', exitCode, signal);
  }
}

/** A TypeError like Node.js's own for a string that holds a NUL byte, which no C string can carry. */
function nullByteError(where: string, value: string): TypeError {
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  const error = new TypeError(`${where} must be a string without null bytes. Received ${JSON.stringify(shown)}`);
  return Object.assign(error, { code: 'ERR_INVALID_ARG_VALUE' });
}

/**
 * Refuses a program, argument, working directory or environment entry holding a NUL byte: the
 * C side would cut the string there and run something else than asked (a command cut short).
 * @throws TypeError (`ERR_INVALID_ARG_VALUE`) naming the first such value
 */
function checkNoNullBytes(file: string, args: string[], options: LaunchOptions): void {
  if (file.includes('\0')) throw nullByteError('the program', file);
  args.forEach((argument, index) => {
    if (argument.includes('\0')) throw nullByteError(`argument ${index + 1}`, argument);
  });
  if (options.cwd.includes('\0')) throw nullByteError('the working directory', options.cwd);
  for (const [name, value] of Object.entries(options.env)) {
    if (name.includes('\0') || (value ?? '').includes('\0')) throw nullByteError(`the environment variable ${JSON.stringify(name)}`, `${name}=${value ?? ''}`);
    // `A=B=c` would reach the program as the variable A.
    if (name.includes('=')) throw Object.assign(new TypeError(`the environment variable name ${JSON.stringify(name)} must not hold "="`), { code: 'ERR_INVALID_ARG_VALUE' });
  }
}

/**
 * Starts `file` with `args` as the leader of a new session (so its process group can be killed
 * as one), stdout and stderr on pipes, stdin on a pipe or /dev/null, every signal at its default
 * action. Returns at once; a program that cannot be started (not found, a missing working
 * directory, not executable) emits `error` with a Node.js-style error (`spawn bash ENOENT`).
 * @param file a program name looked up on `options.env.PATH`, or a path
 * @throws TypeError (`ERR_INVALID_ARG_VALUE`) when the program, an argument, the working
 *   directory or an environment entry holds a NUL byte (or a variable's name holds `=`)
 */
export function launchProcess(file: string, args: string[], options: LaunchOptions): LaunchedProcess {
  checkNoNullBytes(file, args, options);
  const loaded = options.launcher === 'child_process' ? null : loadAddon(options.launcher === 'posix_spawn');
  if (loaded) return new PosixSpawnedProcess(loaded, file, args, options);
  return spawnChild(file, args, { cwd: options.cwd, env: options.env, detached: true, stdio: [options.stdin, 'pipe', 'pipe'] });
}

/**
 * The `virtual` executor (SPEC §7): an in-memory file system and a simulated bash
 * (`just-bash`). Nothing leaves memory: commands cannot touch the real disk, start processes
 * or reach the network; a seed directory is only read, once.
 */
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
// just-bash is imported when the executor is first used: a server that never runs a virtual
// executor does not load it.
import type { InMemoryFs } from 'just-bash';
import type { CommandRequest, CommandResult, Executor } from '../executor.js';
import { OutputCollector } from '../output-collector.js';
import { VirtualFileSystem } from './virtual-file-system.js';

/** Where the workspace lives in the virtual file system unless configured otherwise. */
export const VIRTUAL_DEFAULT_ROOT = '/workspace';
/** Largest seed (directory plus inline files) copied into memory, in bytes. */
export const VIRTUAL_MAX_SEED_BYTES = 256 * 1024 * 1024;
/** How just-bash words the end of a run stopped by its own deadline. */
const DEADLINE_MESSAGE = /exceeded (?:its )?execution deadline/;
/**
 * How just-bash words a program it does not simulate: `command not found`, or, for the
 * interpreters it leaves switched off (python3, js-exec), a hint about its browser bundle that
 * means nothing here.
 */
const MISSING_COMMAND = /^bash: ([^\s:]+): command not (?:found|available in browser environments\.[^\n]*)$/gm;
/** Longest delay `setTimeout` honours, in ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The error output of a run with each missing program said plainly (`bash: NAME: command not
 * found`) and, once, what this executor is: a model or a user who expects a real machine learns
 * why `python3`, `git` or `npm` are not there instead of guessing at the environment.
 * @param stderr the simulation's error output
 * @param executorName named in the explanation
 * @returns the error output, unchanged when no program was missing
 */
export function explainMissingCommands(stderr: string, executorName: string): string {
  const missing = new Set<string>();
  const plain = stderr.replace(MISSING_COMMAND, (_line, name: string) => {
    missing.add(name);
    return `bash: ${name}: command not found`;
  });
  if (missing.size === 0) return stderr;
  const names = [...missing].join(', ');
  const note = `(executor "${executorName}" is virtual: an in-memory shell with simulated commands only (ls, cat, grep, sed, awk, find, jq…), no other programs; ${names} ${missing.size === 1 ? 'is' : 'are'} not among them)\n`;
  return `${plain}${plain.endsWith('\n') || plain === '' ? '' : '\n'}${note}`;
}

/** Options of `VirtualExecutor`. */
export interface VirtualExecutorOptions {
  /** Executor name from configuration. */
  name: string;
  /** Absolute directory of the workspace in the virtual file system (default `/workspace`). */
  root?: string;
  /** Absolute real directory whose contents are copied under `root` on first use (only read). */
  seedDirectory?: string;
  /** Files to create: paths relative to `root` (or absolute) → content. Applied after the seed directory. */
  files?: Record<string, string | Uint8Array>;
}

async function copyDirectory(source: string, target: string, memory: InMemoryFs, budget: { bytes: number }, seedDirectory: string): Promise<void> {
  await memory.mkdir(target, { recursive: true });
  for (const entry of await readdir(source, { withFileTypes: true })) {
    const from = path.join(source, entry.name);
    const to = path.posix.join(target, entry.name);
    if (entry.isDirectory()) {
      await copyDirectory(from, to, memory, budget, seedDirectory);
    } else if (entry.isSymbolicLink()) {
      await memory.symlink(await readlink(from), to);
    } else if (entry.isFile()) {
      budget.bytes -= (await lstat(from)).size;
      if (budget.bytes < 0) throw new Error(`seedDirectory ${seedDirectory} holds more than ${VIRTUAL_MAX_SEED_BYTES} bytes`);
      await memory.writeFile(to, await readFile(from));
    }
    // Sockets, devices and FIFOs have no meaning in memory: skipped.
  }
}

/**
 * An executor whose files live in memory and whose commands run in a simulated bash.
 *
 * Differences from a real shell: the simulated commands are just-bash's (no other programs),
 * stdout and stderr come back together at the end (stdout first; no live streaming), a
 * background job (`cmd &`) runs to its end before the command returns (there are no
 * processes), and a timeout or abort returns at once with the output discarded while the
 * simulation is stopped at its next statement.
 */
export class VirtualExecutor implements Executor {
  readonly kind = 'virtual' as const;
  readonly name: string;
  /** Absolute workspace directory in the virtual file system. */
  readonly root: string;
  readonly fs: VirtualFileSystem;
  /** The in-memory file system, created by the first operation (see `ready`). */
  private loaded: { memory: InMemoryFs; Bash: typeof import('just-bash').Bash } | undefined;
  private seeding: Promise<void> | undefined;
  private readonly running = new Set<AbortController>();
  private closed = false;

  /**
   * @throws Error naming the option when `root` or `seedDirectory` is not absolute, the seed
   *   directory does not exist or is not a directory, or a file path is empty
   */
  constructor(private readonly options: VirtualExecutorOptions) {
    this.name = options.name;
    this.root = options.root ?? VIRTUAL_DEFAULT_ROOT;
    if (!path.posix.isAbsolute(this.root)) throw new Error(`virtual executor "${this.name}": root must be an absolute path, got "${this.root}"`);
    const seed = options.seedDirectory;
    if (seed !== undefined) {
      if (!path.isAbsolute(seed)) throw new Error(`virtual executor "${this.name}": seedDirectory must be an absolute path, got "${seed}"`);
      let isDirectory: boolean;
      try {
        isDirectory = statSync(seed).isDirectory();
      } catch {
        isDirectory = false;
      }
      if (!isDirectory) throw new Error(`virtual executor "${this.name}": seedDirectory ${seed} does not exist or is not a directory`);
    }
    for (const file of Object.keys(options.files ?? {})) {
      if (file.trim() === '' || file.includes('\0')) throw new Error(`virtual executor "${this.name}": files has an empty or invalid path "${file}"`);
    }
    this.fs = new VirtualFileSystem(() => this.memory, () => this.ready());
  }

  private get memory(): InMemoryFs {
    if (!this.loaded) throw new Error(`virtual executor "${this.name}" was used before it was ready`);
    return this.loaded.memory;
  }

  /** Seeds the memory once: the seed directory, then the inline files. */
  private ready(): Promise<void> {
    this.seeding ??= (async () => {
      const { Bash, InMemoryFs } = await import('just-bash');
      this.loaded = { memory: new InMemoryFs(), Bash };
      await this.memory.mkdir(this.root, { recursive: true });
      const budget = { bytes: VIRTUAL_MAX_SEED_BYTES };
      if (this.options.seedDirectory !== undefined) {
        await copyDirectory(this.options.seedDirectory, this.root, this.memory, budget, this.options.seedDirectory);
      }
      for (const [file, content] of Object.entries(this.options.files ?? {})) {
        const target = path.posix.resolve(this.root, file);
        budget.bytes -= typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength;
        if (budget.bytes < 0) throw new Error(`the seed files hold more than ${VIRTUAL_MAX_SEED_BYTES} bytes`);
        await this.memory.mkdir(path.posix.dirname(target), { recursive: true });
        await this.memory.writeFile(target, content);
      }
    })().catch((error: unknown) => {
      throw new Error(`virtual executor "${this.name}" cannot be seeded: ${(error as Error).message}`, { cause: error });
    });
    return this.seeding;
  }

  /**
   * Runs a command in the simulated bash, in `cwd` with the extra environment variables.
   * A timeout or abort ends the call at once (`timedOut`/`aborted`, signal `SIGKILL`, no output).
   * @throws Error when the executor is closed, seeding failed, or `cwd` is not a directory
   */
  async run(request: CommandRequest): Promise<CommandResult> {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const startedAt = performance.now();
    const stopped = (how: 'timedOut' | 'aborted'): CommandResult => ({
      exitCode: null,
      signal: 'SIGKILL',
      output: '',
      truncated: false,
      timedOut: how === 'timedOut',
      aborted: how === 'aborted',
      durationMs: Math.round(performance.now() - startedAt),
    });
    if (request.signal?.aborted) return { ...stopped('aborted'), signal: null, durationMs: 0 };
    await this.ready();
    const cwdKind = (await this.fs.stat(request.cwd))?.kind;
    const cwdIsDirectory = cwdKind === 'directory' || (cwdKind === 'symlink' && (await this.memory.stat(request.cwd).catch(() => undefined))?.isDirectory === true);
    if (!cwdIsDirectory) throw new Error(`cannot run command in "${request.cwd}": no such directory in virtual executor "${this.name}"`);

    const controller = new AbortController();
    this.running.add(controller);
    const bash = new (this.loaded as NonNullable<typeof this.loaded>).Bash({
      fs: this.memory,
      cwd: request.cwd,
      // The simulation checks its deadline itself, between statements. That matters for a busy
      // loop, which never yields to the event loop, so our own timer cannot fire meanwhile.
      executionLimits: { maxExecutionTimeMs: Math.min(request.timeoutMs, MAX_TIMER_MS) },
    });
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const interrupted = new Promise<CommandResult>((resolve) => {
      // Resolve before aborting: the simulation's own abort handling must not win the race.
      timer = setTimeout(() => {
        resolve(stopped('timedOut'));
        controller.abort();
      }, Math.min(request.timeoutMs, MAX_TIMER_MS));
      onAbort = () => {
        resolve(stopped('aborted'));
        controller.abort();
      };
      request.signal?.addEventListener('abort', onAbort, { once: true });
      // close() aborts the controller directly.
      controller.signal.addEventListener('abort', () => resolve(stopped('aborted')), { once: true });
    });
    const finished = bash
      .exec(request.command, { cwd: request.cwd, env: request.env, signal: controller.signal, rawScript: true })
      .then((result): CommandResult => {
        if (result.exitCode === 124 && DEADLINE_MESSAGE.test(result.stderr)) return stopped('timedOut');
        const collector = new OutputCollector(request.maxOutputBytes, request.onOutput);
        collector.add(result.stdout);
        collector.add(explainMissingCommands(result.stderr, this.name));
        return {
          exitCode: result.exitCode,
          signal: null,
          ...collector.result(),
          timedOut: false,
          aborted: false,
          durationMs: Math.round(performance.now() - startedAt),
        };
      });
    // Once interrupted, a late failure of the abandoned simulation has nobody to report to.
    finished.catch(() => undefined);
    try {
      return await Promise.race([finished, interrupted]);
    } finally {
      clearTimeout(timer);
      if (onAbort) request.signal?.removeEventListener('abort', onAbort);
      this.running.delete(controller);
      // A finished simulation ignores this; an interrupted one stops at its next statement.
      controller.abort();
    }
  }

  /** Stops every simulated command still running; later calls are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.running) controller.abort();
    this.running.clear();
  }
}

/**
 * What the benchmarks that run a real `openvaala serve` share: a temporary home (configuration,
 * data and state directories, a work directory), the mock provider named in `providers.yaml`,
 * the server process, child processes run to completion, and the kernel's figures of a process
 * (resident memory, its peak, CPU time) read from `/proc` (source: proc(5)).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { findServer } from '../src/cli/server-discovery.js';
import type { ServerInfo } from '../src/server/server-info.js';
import { MockProviderServer, parseMockScript } from '../src/models/mock/index.js';
import { CLI_EXECUTABLE } from '../src/package-info.js';

/** A temporary home for one benchmark: XDG directories in `env`, their OpenVaala paths, a work directory. */
export interface BenchHome {
  root: string;
  env: NodeJS.ProcessEnv;
  paths: { configDir: string; dataDir: string; stateDir: string };
  work: string;
  /** Removes the whole temporary tree. */
  remove(): void;
}

/** Creates a temporary home under the system's temporary directory, named after `name`. */
export function createBenchHome(name: string): BenchHome {
  const root = mkdtempSync(path.join(os.tmpdir(), `openvaala-bench-${name}-`));
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state'), OPENVAALA_LOG_LEVEL: 'warn' };
  const paths = { configDir: path.join(root, 'config', 'openvaala'), dataDir: path.join(root, 'data', 'openvaala'), stateDir: path.join(root, 'state', 'openvaala') };
  const work = path.join(root, 'work');
  mkdirSync(work, { recursive: true });
  mkdirSync(paths.configDir, { recursive: true });
  return { root, env, paths, work, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Starts the mock provider with a YAML script and names it as the default model in the home's
 * `providers.yaml` (OpenAI Responses API). @throws MockScriptError when the script is invalid
 */
export async function startMockFor(home: BenchHome, scriptYaml: string): Promise<{ mock: MockProviderServer; baseURL: string }> {
  const mock = new MockProviderServer(parseMockScript(scriptYaml, 'bench.yaml'));
  const { baseURL } = await mock.start({ port: 0 });
  writeFileSync(path.join(home.paths.configDir, 'providers.yaml'), `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`);
  return { mock, baseURL };
}

/** A running `openvaala serve`: its process (the Node.js process itself, so its pid is the server's) and where it answers. */
export interface ServeProcess {
  child: ChildProcess;
  pid: number;
  info: ServerInfo;
  /** Sends SIGTERM and waits for the exit. */
  stop(): Promise<void>;
}

/** Starts `openvaala serve --port 0` in the home and waits until it answers (through its state file and `/healthz`). */
export async function startServe(home: BenchHome, nodeArgs: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...nodeArgs, CLI_EXECUTABLE, 'serve', '--port', '0'], { env: home.env, stdio: 'ignore' });
  let info: ServerInfo | undefined;
  while (!(info = await findServer(home.paths))) {
    if (child.exitCode !== null) throw new Error(`openvaala serve exited ${child.exitCode} before answering`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    pid: child.pid ?? 0,
    info,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs a process to its end, gathering its output (asynchronously: the mock provider answers from this process's event loop). */
export function runProcess(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs `openvaala exec --json PROMPT` in the home's work directory. @throws Error when it exits non-zero */
export async function runExec(home: BenchHome, prompt: string, nodeArgs: string[] = [], extraArgs: string[] = []): Promise<{ wallMs: number; stdout: string }> {
  const started = performance.now();
  const result = await runProcess(process.execPath, [...nodeArgs, CLI_EXECUTABLE, 'exec', '--json', ...extraArgs, prompt], { cwd: home.work, env: home.env });
  const wallMs = performance.now() - started;
  if (result.status !== 0) throw new Error(`openvaala exec exited ${String(result.status)}: ${result.stderr}`);
  return { wallMs, stdout: result.stdout };
}

/** Resident memory now and its peak since start (or since {@link resetPeakMemory}), in KiB, from `/proc/PID/status`. */
export function memoryKilobytes(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0), peak: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) };
}

/** Sets a process's peak resident memory (VmHWM) back to its current resident memory (writing 5 to `/proc/PID/clear_refs`, proc(5)). */
export function resetPeakMemory(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

let clockTicks: number | undefined;

/** CPU time a process has used so far, user plus system, in ms (fields 14 and 15 of `/proc/PID/stat`, in clock ticks). */
export function cpuMilliseconds(pid: number): number {
  clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/**
 * CPU time a process's threads have run so far, in ms with nanosecond precision: the sum of the
 * first field of `/proc/PID/task/TID/schedstat` (the scheduler's run time of each thread, in ns).
 * `/proc/PID/stat` counts in clock ticks (10 ms), too coarse for a figure of about 100 ms; this
 * one is exact but misses threads that ended between two readings (the server's thread pools
 * live as long as it does). Returns `null` where the kernel keeps no scheduler statistics.
 */
export function schedulerCpuMilliseconds(pid: number): number | null {
  let nanoseconds = 0;
  try {
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        nanoseconds += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
      } catch (error) {
        // A thread may end between the listing and the read; it is simply not counted.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return Number.isFinite(nanoseconds) ? nanoseconds / 1e6 : null;
}

/** A TCP port free on 127.0.0.1 right now (bound to port 0, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** MiB with one decimal, from KiB. */
export function mebibytes(kilobytes: number): string {
  return `${(kilobytes / 1024).toFixed(1)} MiB`;
}

/** The load average over the last minute, for the printed context of a run. */
export function loadAverage(): string {
  return os.loadavg().map((value) => value.toFixed(2)).join(', ');
}

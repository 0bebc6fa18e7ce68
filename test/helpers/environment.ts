/**
 * An isolated OpenVaala installation for one test: its own XDG directories under a temp dir,
 * a mock model provider, and helpers to run the real CLI as a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findServer } from '../../src/cli/server-discovery.js';
import type { OpenVaalaPaths } from '../../src/config/paths.js';
import { MockProviderServer, parseMockScript } from '../../src/models/mock/index.js';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import type { ServerInfo } from '../../src/server/server-info.js';
import { processGone, until } from './processes.js';

/** One isolated installation. */
export interface TestEnvironment {
  root: string;
  paths: OpenVaalaPaths;
  env: NodeJS.ProcessEnv;
  /** A working directory for conversations. */
  workDir: string;
  mock: MockProviderServer;
  /** Removes the temp dir and stops the mock (call in afterEach). */
  dispose(): Promise<void>;
}

/**
 * Creates an installation whose default model is the mock, scripted by `scriptYaml`.
 * @param providersYaml writes `providers.yaml` from the mock's base URL (default: `mock/mock-model` over the Responses API)
 */
export async function createTestEnvironment(scriptYaml: string, providersYaml?: (baseURL: string) => string): Promise<TestEnvironment> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-test-'));
  const paths = { configDir: path.join(root, 'config', 'openvaala'), dataDir: path.join(root, 'data', 'openvaala'), stateDir: path.join(root, 'state', 'openvaala') };
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state'), OPENVAALA_LOG_LEVEL: 'warn' };
  const workDir = path.join(root, 'work');
  mkdirSync(workDir, { recursive: true });
  const mock = new MockProviderServer(parseMockScript(scriptYaml, 'script.yaml'));
  const { baseURL } = await mock.start({ port: 0 });
  mkdirSync(paths.configDir, { recursive: true });
  writeFileSync(
    path.join(paths.configDir, 'providers.yaml'),
    providersYaml?.(baseURL) ?? `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`,
  );
  return {
    root,
    paths,
    env,
    workDir,
    mock,
    async dispose() {
      await mock.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Result of a finished CLI process. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `openvaala ARGS` as a child process to its end. */
export function runCli(args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_EXECUTABLE, ...args], { env: options.env, cwd: options.cwd ?? process.cwd(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`openvaala ${args.join(' ')} did not finish within ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A `openvaala serve` child process. */
export interface ServeProcess {
  child: ChildProcess;
  info: ServerInfo;
  /** Everything the server printed so far (stdout and stderr, its JSON log lines included). */
  output(): string;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `openvaala serve --port 0` and waits until it answers. */
export async function startServe(environment: TestEnvironment, extraArgs: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI_EXECUTABLE, 'serve', '--port', '0', ...extraArgs], { env: environment.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const info = await findServer(environment.paths);
    if (info && info.pid === child.pid) {
      return {
        child,
        info,
        output: () => output,
        async stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          // A server that does not end within 10 s is killed, so the test fails on what it checks, not on its own timeout.
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          try {
            return await exited;
          } finally {
            clearTimeout(timer);
          }
        },
      };
    }
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`openvaala serve did not start: ${output}`);
}

/** A CLI process left running, to signal it or read its output as it comes. */
export interface RunningCli {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has ended. */
  done: Promise<CliResult>;
}

/** Starts `openvaala ARGS` as a child process and returns at once. */
export function spawnCli(args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string }): RunningCli {
  const child = spawn(process.execPath, [CLI_EXECUTABLE, ...args], { env: options.env, cwd: options.cwd ?? process.cwd(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin?.end(options.input ?? '');
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Stops the server a CLI command started in the background, by the pid it wrote, and waits for it to exit (for afterEach). */
export async function stopBackgroundServer(environment: TestEnvironment): Promise<void> {
  for (const file of [path.join(environment.paths.stateDir, 'runtime-server.yaml'), path.join(environment.paths.dataDir, 'runtime-server.yaml')]) {
    let pid: number;
    try {
      pid = Number(/^pid: (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1]);
      if (!pid) continue;
      process.kill(pid, 'SIGTERM');
    } catch {
      // No file, or the server is already gone.
      continue;
    }
    await until(() => processGone(pid), 15_000, `server ${pid} to exit`).catch(() => process.kill(pid, 'SIGKILL'));
  }
}

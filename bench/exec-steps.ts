/**
 * Benchmark: a scripted 100-step turn through `openvaala exec` (each step one
 * `exec_command "echo N"`), against a real server and the mock provider over HTTP.
 *
 * Prints the median and p95 time per tool step (between consecutive tool results), the part
 * of it spent in the tool itself, and the server's RSS afterwards; and, as baselines measured
 * in the same run, the time to spawn `bash -c "echo N"` directly and one raw streaming
 * request to the mock provider.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findServer } from '../src/cli/server-discovery.js';
import { MockProviderServer, parseMockScript } from '../src/models/mock/index.js';
import { CLI_EXECUTABLE } from '../src/package-info.js';
import { median, percentile, printTable } from './statistics.js';

const STEPS = 100;

function scriptYaml(steps: number): string {
  const lines = ['responses:'];
  for (let step = 1; step <= steps; step++) {
    lines.push(`  - text: "step ${step}"`, '    toolCalls:', `      - { name: exec_command, arguments: { command: "echo ${step}" } }`);
  }
  lines.push('  - text: "done"');
  return lines.join('\n');
}

function runProcess(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
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

function rssKilobytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

async function rawMockRequestMs(baseURL: string, samples: number): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = performance.now();
    const response = await fetch(`${baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-model', input: 'ping', stream: true }),
    });
    await response.text();
    times.push(performance.now() - started);
  }
  return times;
}

/** Runs the benchmark and prints its table. */
export async function runExecStepsBenchmark(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-bench-exec-'));
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state'), OPENVAALA_LOG_LEVEL: 'warn' };
  const paths = { configDir: path.join(root, 'config', 'openvaala'), dataDir: path.join(root, 'data', 'openvaala'), stateDir: path.join(root, 'state', 'openvaala') };
  const work = path.join(root, 'work');
  mkdirSync(work, { recursive: true });
  const mock = new MockProviderServer(parseMockScript(scriptYaml(STEPS), 'bench.yaml'));
  const { baseURL } = await mock.start({ port: 0 });
  mkdirSync(paths.configDir, { recursive: true });
  writeFileSync(path.join(paths.configDir, 'providers.yaml'), `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`);
  const server = spawn(process.execPath, [CLI_EXECUTABLE, 'serve', '--port', '0'], { env, stdio: 'ignore' });
  try {
    while (!(await findServer(paths))) await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    // Asynchronous on purpose: the mock provider answers from this process's event loop.
    const exec = await runProcess(process.execPath, [CLI_EXECUTABLE, 'exec', '--json', 'run the steps'], { cwd: work, env });
    const wallMs = performance.now() - started;
    if (exec.status !== 0) throw new Error(`exec failed (${exec.status}): ${exec.stderr}`);
    const toolItems = exec.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { method: string; params: { item?: { kind: string; completedAt: number; durationMs: number } } })
      .flatMap((event) => (event.method === 'item/completed' && event.params.item?.kind === 'tool_call' ? [event.params.item] : []));
    if (toolItems.length !== STEPS) throw new Error(`expected ${STEPS} tool calls, got ${toolItems.length}`);
    const stepTimes = toolItems.slice(1).map((item, index) => item.completedAt - (toolItems[index]?.completedAt ?? 0));
    const toolTimes = toolItems.map((item) => item.durationMs);
    // Runtime overhead of a step: from the mock finishing an answer to the next request, minus the tool's own time.
    const overheads = toolItems.map((item, index) => {
      const answered = mock.requests[index]?.answeredAt;
      const next = mock.requests[index + 1]?.receivedAt;
      if (!answered || !next) throw new Error(`request ${index + 1} has no answer or successor time`);
      return next.getTime() - answered.getTime() - item.durationMs;
    });
    const rss = rssKilobytes(server.pid ?? 0);

    const spawnTimes: number[] = [];
    for (let index = 0; index < 50; index++) {
      const begin = performance.now();
      spawnSync('bash', ['-c', `echo ${index}`]);
      spawnTimes.push(performance.now() - begin);
    }
    const mockTimes = await rawMockRequestMs(baseURL, 50);

    printTable(`openvaala exec: ${STEPS}-step turn (exec_command "echo N" each step)`, [
      ['time per tool step, median', `${median(stepTimes).toFixed(1)} ms`],
      ['time per tool step, p95', `${percentile(stepTimes, 95).toFixed(1)} ms`],
      ['  of which in the tool (exec_command), median', `${median(toolTimes).toFixed(1)} ms`],
      ['runtime overhead per step (answer end → next request, minus tool), median', `${median(overheads).toFixed(1)} ms`],
      ['runtime overhead per step, p95', `${percentile(overheads, 95).toFixed(1)} ms`],
      ['baseline: spawnSync bash -c "echo N", median', `${median(spawnTimes).toFixed(1)} ms`],
      ['baseline: one raw streaming request to the mock, median', `${median(mockTimes).toFixed(1)} ms`],
      ['whole exec (process start to exit)', `${(wallMs / 1000).toFixed(2)} s`],
      ['server RSS after the turn', `${(rss / 1024).toFixed(1)} MiB`],
    ]);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await mock.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runExecStepsBenchmark().catch((error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  });
}

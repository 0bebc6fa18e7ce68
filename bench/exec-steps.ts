/**
 * Benchmark: scripted coding turns through `openvaala exec`, against a real `openvaala serve`
 * and the mock provider over HTTP (OpenAI Responses SSE) in this process. W20 and W100 are turns
 * of 20 and 100 steps, each step one `exec_command "echo N"`.
 *
 * Each figure is printed next to the floor of a step measured in the same run: what any runtime
 * has to do per step at least — spawn `bash -c "echo N"`, append three synced log lines
 * (`writeSync` + `fsyncSync` of about 300 bytes each: the tool call, its output, the assistant
 * message) and make one loopback SSE request to the same mock; the spawn is measured both through
 * `child_process` (a fork) and `posix_spawn` (where the addon works) and the floor takes the
 * faster. Also the server's CPU time for one W20 turn (from `/proc/PID/stat` in clock ticks,
 * and exactly from each thread's `schedstat`) next to its CPU floor: what 20 whole floor steps
 * (and, apart, their 20 spawns) cost a bare `node` of the server's idle resident memory in the
 * same run. Then its resident memory idle and its peak over W100.
 *
 * The server is long-lived, so the W20 figures are those of a running server: one W20 turn
 * runs first and is reported on its own (the first turn after start also loads the model
 * provider's and the executor's code and compiles the agent loop), then a few turns while V8
 * still optimises the hot code (their CPU is printed too), then the measured turns.
 */
import { spawn } from 'node:child_process';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchProcess, processLauncher } from '../src/executors/local/launch-process.js';
import type { MockProviderServer } from '../src/models/mock/index.js';
import { cpuMilliseconds, createBenchHome, schedulerCpuMilliseconds, loadAverage, mebibytes, memoryKilobytes, resetPeakMemory, runExec, startMockFor, startServe, type BenchHome } from './server-process.js';
import { median, percentile, printTable } from './statistics.js';

/**
 * W20 turns after the first that are reported on their own: V8 is still compiling the server's
 * hot code with its optimising compiler, and each turn costs a little less than the one before
 * (about 95 ms of CPU in turns 2–11 against 78 ms in turns 15–25 on the reference machine).
 */
const W20_WARM_UP = 4;
/** W20 turns measured after those, a running server's steady state; the medians over their steps are shown. */
const W20_RUNS = 15;
/** Samples of each part of the floor. */
const FLOOR_SAMPLES = 40;
/** A log line of about the size of a tool call entry. */
const LOG_LINE = `${JSON.stringify({ kind: 'tool_call', id: 'item_01JBENCH', name: 'exec_command', arguments: { command: 'echo 1' }, output: 'x'.repeat(150) })}\n`;

/** Script entries of one turn of `steps` steps: each answer one `exec_command "echo N"`, then a final text. */
function turnEntries(steps: number): string[] {
  const lines: string[] = [];
  for (let step = 1; step <= steps; step++) {
    lines.push(`  - text: "step ${step}"`, '    toolCalls:', `      - { name: exec_command, arguments: { command: "echo ${step}" } }`);
  }
  lines.push('  - text: "done"');
  return lines;
}

/**
 * A bare Node.js process that grows to `rssMiB` of resident memory and measures, each median of
 * 40 samples after 5 to warm up, the CPU (user + system of all its threads, ms) it spends on:
 * - one start of `bash -c "echo N"` up to the child's exit being read, with each launcher of
 *   `launch-process.ts` (`child_process`, a fork; `posix_spawn`, when the addon works here);
 * - one whole step of the floor, done the simplest way: that start with the launcher the server
 *   uses, three synced appends of {@link LOG_LINE} and one streamed request to the mock over a
 *   kept-alive `node:http` connection, read to its end (not parsed).
 * A fork costs the parent in proportion to the memory it writes afterwards, so the baseline is
 * measured at the server's size. It prints one JSON line.
 */
const CPU_FLOOR_SCRIPT = `
const [rssMiB, launcherUrl, baseURL, logPath, logLine] = process.argv.slice(1);
const fs = require('node:fs');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true });
const kept = [];
while (process.memoryUsage().rss < Number(rssMiB) * 1048576) kept.push(Buffer.alloc(1048576, 1));
const grownMiB = process.memoryUsage().rss / 1048576;
(async () => {
  const { launchProcess, processLauncher } = await import(launcherUrl);
  const once = (n, launcher) => new Promise((resolve) => { const child = launchProcess('bash', ['-c', 'echo ' + n], { cwd: process.cwd(), env: process.env, stdin: 'ignore', launcher }); child.stdout.resume(); child.once('close', resolve); });
  const log = fs.openSync(logPath, 'a');
  const step = async (n, launcher) => {
    await once(n, launcher);
    for (let line = 0; line < 3; line++) { fs.writeSync(log, logLine); fs.fsyncSync(log); }
    const text = await new Promise((resolve, reject) => {
      const request = http.request(baseURL + '/responses', { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve(body));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(JSON.stringify({ model: 'mock-model', input: 'run step 1', stream: true }));
    });
    if (!text.includes('response.completed')) throw new Error('the CPU floor request got no complete SSE answer');
  };
  const median = async (work, launcher) => {
    for (let n = 0; n < 5; n++) await work(n, launcher);
    const costs = [];
    for (let n = 0; n < 40; n++) { const start = process.cpuUsage(); await work(n, launcher); const used = process.cpuUsage(start); costs.push((used.user + used.system) / 1000); }
    return costs.sort((a, b) => a - b)[20];
  };
  const forkCpuMs = await median(once, 'child_process');
  const posixSpawnCpuMs = processLauncher() === 'posix_spawn' ? await median(once, 'posix_spawn') : null;
  const stepCpuMs = await median(step, processLauncher());
  fs.closeSync(log);
  agent.destroy();
  console.log(JSON.stringify({ forkCpuMs, posixSpawnCpuMs, stepCpuMs, rssMiB: grownMiB }));
})().catch((error) => { console.error(error); process.exit(1); });
`;
/** Model requests the CPU floor makes (see {@link CPU_FLOOR_SCRIPT}): 5 to warm up, 40 measured. */
const CPU_FLOOR_REQUESTS = 45;

/** The compiled launcher, imported by the baseline scripts. */
const LAUNCHER_URL = new URL('../src/executors/local/launch-process.js', import.meta.url).href;

/** The CPU floor's figures (ms), from {@link CPU_FLOOR_SCRIPT}. */
interface CpuFloor {
  forkCpuMs: number;
  posixSpawnCpuMs: number | null;
  stepCpuMs: number;
  rssMiB: number;
}

/** What one start of `bash -c "echo N"` and one whole floor step cost a bare `node` of `rssMiB` (see {@link CPU_FLOOR_SCRIPT}). */
async function measureCpuFloor(rssMiB: number, home: BenchHome, baseURL: string): Promise<CpuFloor> {
  const args = ['-e', CPU_FLOOR_SCRIPT, String(rssMiB), LAUNCHER_URL, baseURL, path.join(home.root, 'cpu-floor.jsonl'), LOG_LINE];
  const child = spawn(process.execPath, args, { cwd: home.work, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`the CPU floor baseline exited with ${code}`);
  return JSON.parse(output) as CpuFloor;
}

/** The whole script, in the order the benchmark asks: the floor's SSE requests (wall time, then CPU), the first W20 turn, the measured W20 turns, the W100 turn. */
function scriptYaml(): string {
  const floor = ['  - text: "step 1"', '    toolCalls:', '      - { name: exec_command, arguments: { command: "echo 1" } }', `    repeat: ${FLOOR_SAMPLES + CPU_FLOOR_REQUESTS}`];
  const turns = Array.from({ length: 1 + W20_WARM_UP + W20_RUNS }, () => turnEntries(20)).flat();
  return ['responses:', ...floor, ...turns, ...turnEntries(100)].join('\n');
}

/** Wall time (ms) of starting `bash -c "echo N"` one way and reading it to its end. */
async function timeStart(cwd: string, sample: number, launcher: 'child_process' | 'posix_spawn'): Promise<number> {
  const begin = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = launchProcess('bash', ['-c', `echo ${sample}`], { cwd, env: process.env, stdin: 'ignore', launcher });
    child.stdout?.resume();
    child.once('error', reject);
    child.once('close', () => resolve());
  });
  return performance.now() - begin;
}

/** The floor of one step, each part sampled alternately; medians in ms. */
async function measureFloor(home: BenchHome, baseURL: string): Promise<{ spawnMs: number; forkSpawnMs: number; posixSpawnMs: number | null; appendMs: number; sseMs: number }> {
  const spawns: number[] = [];
  const posixSpawns: number[] = [];
  const appends: number[] = [];
  const requests: number[] = [];
  const log = openSync(path.join(home.root, 'floor.jsonl'), 'a');
  try {
    for (let sample = 0; sample < FLOOR_SAMPLES; sample++) {
      spawns.push(await timeStart(home.work, sample, 'child_process'));
      if (processLauncher() === 'posix_spawn') posixSpawns.push(await timeStart(home.work, sample, 'posix_spawn'));
      let begin = performance.now();
      writeSync(log, LOG_LINE);
      fsyncSync(log);
      appends.push(performance.now() - begin);
      begin = performance.now();
      const response = await fetch(`${baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-model', input: 'run step 1', stream: true }) });
      if (!(await response.text()).includes('response.completed')) throw new Error('the floor request got no complete SSE answer');
      requests.push(performance.now() - begin);
    }
  } finally {
    closeSync(log);
  }
  const forkSpawnMs = median(spawns);
  const posixSpawnMs = posixSpawns.length > 0 ? median(posixSpawns) : null;
  // The floor takes the faster way to start a program that this machine offers.
  return { spawnMs: Math.min(forkSpawnMs, posixSpawnMs ?? Infinity), forkSpawnMs, posixSpawnMs, appendMs: median(appends), sseMs: median(requests) };
}

/** One turn's figures: wall time of `exec`, the time of each step (model request to the next), each tool's own time. */
interface TurnFigures {
  wallMs: number;
  stepMs: number[];
  toolMs: number[];
}

/** Runs one `exec` turn of `steps` steps and reads its step times from the requests the mock received. */
async function runTurn(home: BenchHome, mock: MockProviderServer, steps: number): Promise<TurnFigures> {
  const first = mock.requests.length;
  const { wallMs, stdout } = await runExec(home, `run the ${steps} steps`);
  const toolItems = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { method: string; params: { item?: { kind: string; durationMs: number } } })
    .flatMap((event) => (event.method === 'item/completed' && event.params.item?.kind === 'tool_call' ? [event.params.item] : []));
  const requests = mock.requests.slice(first);
  if (toolItems.length !== steps || requests.length !== steps + 1) throw new Error(`expected ${steps} tool calls and ${steps + 1} model requests, got ${toolItems.length} and ${requests.length}`);
  const stepMs = requests.slice(1).map((request, index) => request.receivedAt.getTime() - (requests[index]?.receivedAt.getTime() ?? 0));
  return { wallMs, stepMs, toolMs: toolItems.map((item) => item.durationMs) };
}

/** The rows of one workload next to the floor. */
function workloadRows(steps: number, turns: TurnFigures[], floorMs: number): [string, string][] {
  const stepMs = turns.flatMap((turn) => turn.stepMs);
  const wallMs = median(turns.map((turn) => turn.wallMs));
  const step = median(stepMs);
  const overhead = step - floorMs;
  return [
    [`whole exec (process start to exit)${turns.length > 1 ? `, median of ${turns.length}` : ''}`, `${(wallMs / 1000).toFixed(2)} s (${(wallMs / steps).toFixed(1)} ms per step)`],
    ['time per step (model request → next model request), median', `${step.toFixed(1)} ms (p99 ${percentile(stepMs, 99).toFixed(1)})`],
    ['  of which in the tool (exec_command durationMs), median', `${median(turns.flatMap((turn) => turn.toolMs)).toFixed(1)} ms`],
    ['runtime overhead per step (step − floor), median', `${overhead.toFixed(1)} ms (${(overhead / floorMs).toFixed(2)}x the floor)`],
  ];
}

/** Runs the benchmark and prints its tables. */
export async function runExecStepsBenchmark(): Promise<void> {
  const home = createBenchHome('exec');
  const { mock, baseURL } = await startMockFor(home, scriptYaml());
  const server = await startServe(home);
  try {
    console.log(`load average at start: ${loadAverage()}`);
    const idle = memoryKilobytes(server.pid);
    const floor = await measureFloor(home, baseURL);
    const floorMs = floor.spawnMs + 3 * floor.appendMs + floor.sseMs;
    const cpuFloor = await measureCpuFloor(idle.rss / 1024, home, baseURL);
    const serverLauncher = cpuFloor.posixSpawnCpuMs === null ? 'child_process' : 'posix_spawn';
    const serverSpawnCpuMs = cpuFloor.posixSpawnCpuMs ?? cpuFloor.forkCpuMs;
    printTable(`floor of one step (median of ${FLOOR_SAMPLES} each, same run)`, [
      ['spawn bash -c "echo N" (async, output read): child_process (fork)', `${floor.forkSpawnMs.toFixed(2)} ms`],
      ...(floor.posixSpawnMs === null ? [] : [['spawn bash -c "echo N" (async, output read): posix_spawn', `${floor.posixSpawnMs.toFixed(2)} ms`] as [string, string]]),
      ['synced append of a ~300-byte line (writeSync + fsyncSync), x3', `3 x ${floor.appendMs.toFixed(2)} ms`],
      ['one loopback SSE request to the mock (a step answer)', `${floor.sseMs.toFixed(2)} ms`],
      ['floor per step (the faster spawn)', `${floorMs.toFixed(1)} ms`],
      [`CPU of one spawn to a bare node of the server's idle RSS (${cpuFloor.rssMiB.toFixed(1)} MiB): child_process (fork)`, `${cpuFloor.forkCpuMs.toFixed(2)} ms`],
      ...(cpuFloor.posixSpawnCpuMs === null ? [] : [[`CPU of one spawn to a bare node of the server's idle RSS: posix_spawn`, `${cpuFloor.posixSpawnCpuMs.toFixed(2)} ms`] as [string, string]]),
      [`CPU of one whole floor step (${serverLauncher} + 3 synced appends + SSE request) to a bare node of that RSS`, `${cpuFloor.stepCpuMs.toFixed(2)} ms`],
    ]);

    const firstCpuBefore = cpuMilliseconds(server.pid);
    const first = await runTurn(home, mock, 20);
    const firstCpu = cpuMilliseconds(server.pid) - firstCpuBefore;
    const warmUpCpu: number[] = [];
    for (let run = 0; run < W20_WARM_UP; run++) {
      const before = schedulerCpuMilliseconds(server.pid) ?? cpuMilliseconds(server.pid);
      await runTurn(home, mock, 20);
      warmUpCpu.push((schedulerCpuMilliseconds(server.pid) ?? cpuMilliseconds(server.pid)) - before);
    }
    const w20: TurnFigures[] = [];
    const cpu: number[] = [];
    const exactCpu: number[] = [];
    for (let run = 0; run < W20_RUNS; run++) {
      const before = cpuMilliseconds(server.pid);
      const exactBefore = schedulerCpuMilliseconds(server.pid);
      w20.push(await runTurn(home, mock, 20));
      cpu.push(cpuMilliseconds(server.pid) - before);
      const exactAfter = schedulerCpuMilliseconds(server.pid);
      if (exactBefore !== null && exactAfter !== null) exactCpu.push(exactAfter - exactBefore);
    }
    const cpuRows: Array<[string, string]> = [['server CPU for one W20 turn (utime + stime, in 10 ms clock ticks), median', `${median(cpu).toFixed(0)} ms`]];
    if (exactCpu.length === W20_RUNS) {
      const sorted = [...exactCpu].sort((a, b) => a - b);
      cpuRows.push([
        'server CPU for one W20 turn (all threads\' run time from schedstat, ns), median',
        `${median(exactCpu).toFixed(1)} ms (${(median(exactCpu) / 20).toFixed(2)} ms per step; range ${sorted[0]!.toFixed(1)}–${sorted.at(-1)!.toFixed(1)})`,
      ]);
    }
    const cpuFigure = exactCpu.length === W20_RUNS ? median(exactCpu) : median(cpu);
    printTable(`W20: 20 steps of exec_command "echo N" (the first turn, ${W20_WARM_UP} warming up, then ${W20_RUNS} measured)`, [
      ['the first turn after start: whole exec; server CPU', `${(first.wallMs / 1000).toFixed(2)} s; ${firstCpu.toFixed(0)} ms`],
      [`turns 2–${1 + W20_WARM_UP} (V8 still optimising the hot code): server CPU, median`, `${median(warmUpCpu).toFixed(1)} ms`],
      ...workloadRows(20, w20, floorMs),
      ...cpuRows,
      [`  of which the 20 spawns alone (${serverLauncher}, as the server) would cost a bare node of its size`, `${(20 * serverSpawnCpuMs).toFixed(0)} ms (${((20 * serverSpawnCpuMs) / cpuFigure).toFixed(2)} of it)`],
      ['  CPU floor of a W20 turn: 20 whole floor steps in a bare node of its size (baseline)', `${(20 * cpuFloor.stepCpuMs).toFixed(0)} ms: the server spends ${(cpuFigure / (20 * cpuFloor.stepCpuMs)).toFixed(2)}x that`],
    ]);

    resetPeakMemory(server.pid);
    const w100 = await runTurn(home, mock, 100);
    const after = memoryKilobytes(server.pid);
    printTable('W100: 100 steps of exec_command "echo N"', [
      ...workloadRows(100, [w100], floorMs),
      ['server RSS idle (after start, before any turn)', mebibytes(idle.rss)],
      ['server peak RSS over the W100 turn (VmHWM, reset before it)', `${mebibytes(after.peak)} (${(after.peak / idle.rss).toFixed(2)}x idle)`],
      ['server RSS after the W100 turn', mebibytes(after.rss)],
    ]);
  } finally {
    await server.stop();
    await mock.stop();
    home.remove();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runExecStepsBenchmark().catch((error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  });
}

/**
 * Benchmark: start-up, each figure next to a baseline measured in the same run, alternating
 * runs so both see the same load.
 *
 * - `openvaala --help` next to `node -e 0`: the command table only (each command's module is
 *   imported when it runs), so its cost over a bare Node.js start is what the CLI adds.
 * - `openvaala serve` from spawn to `/healthz` answering (a fresh temporary data directory each
 *   time, polled tightly), next to `node -e` of a tiny HTTP server listening and answering. The
 *   server listens before it opens its storage and runtime (`/healthz` says `starting` until
 *   then), so the time until it says `ok` (ready to serve clients) is given too. Both also
 *   report, from inside (`listening-recorder.ts` loaded with `node --import`), the time from
 *   process start to listening and the CPU time used until then: steadier on a loaded machine
 *   than the polled figure, which also counts the spawn and the polling.
 * - `openvaala exec` against an already running server (one scripted text reply): wall time and
 *   the client's peak resident memory (VmHWM, written at exit by `peak-memory-recorder.ts`
 *   loaded with `node --import`), next to a bare `ws` client connecting and exchanging one
 *   message (`bare-ws-client.ts`), measured the same way.
 *
 * Every figure is taken in the environment the benchmark runs in. When that environment sets
 * `NODE_EXTRA_CA_CERTS`, every Node.js process reads and parses that certificate file as it
 * starts (Node.js documentation, "NODE_EXTRA_CA_CERTS=file"), baseline and product alike, so
 * `node -e 0` is also timed without it, to show what the machine's setting adds to each start.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PROTOCOL_VERSION } from '../src/protocol/methods.js';
import { API_PATH } from '../src/protocol/transport.js';
import { createBenchHome, freePort, loadAverage, mebibytes, runProcess, startMockFor, startServe } from './server-process.js';
import { median, percentile, printTable } from './statistics.js';

const SAMPLES = 15;
const SERVE_SAMPLES = 10;
const EXEC_SAMPLES = 10;
const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../../bin/openvaala');
const PEAK_RECORDER = pathToFileURL(path.join(here, 'peak-memory-recorder.js')).href;
const BARE_WS_CLIENT = path.join(here, 'bare-ws-client.js');
const LISTENING_RECORDER = pathToFileURL(path.join(here, 'listening-recorder.js')).href;
/** The baseline server: listens on the port given as its first argument and answers every request. */
const TINY_HTTP_SERVER = "require('http').createServer((q,s)=>s.end('{\"status\":\"ok\"}')).listen(Number(process.argv[1]),'127.0.0.1')";

/** Wall time of one run of `node ...args`, in ms. @throws Error when it exits non-zero. */
function timeRun(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return elapsed;
}

/**
 * One GET of `/healthz`: undefined when nothing listens yet, else the `status` of its 200
 * answer (`ok`, or `starting` while the server opens its services).
 */
function healthStatus(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.once('end', () => {
        if (response.statusCode !== 200) return resolve(undefined);
        try {
          resolve(String((JSON.parse(body) as { status?: unknown }).status));
        } catch {
          resolve(undefined);
        }
      });
    });
    probe.once('error', () => resolve(undefined));
    probe.end();
  });
}

/** What one start measured, in ms: from spawn to the first 200 answer and to the first `ok`; from process start to listening, and the CPU time used until then (from inside). */
interface StartTimes {
  answering: number;
  ready: number;
  listening: number;
  listeningCpu: number;
}

/**
 * Spawns `node ...args` (a server on `port`, with the listening recorder) and polls `/healthz`
 * until it says `ok`.
 */
async function timeToHealthy(args: string[], port: number, env: NodeJS.ProcessEnv): Promise<StartTimes> {
  const listeningFile = path.join(tmpdir(), `openvaala-bench-listening-${process.pid}-${port}`);
  rmSync(listeningFile, { force: true });
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', LISTENING_RECORDER, ...args], { env: { ...env, OPENVAALA_BENCH_LISTENING_FILE: listeningFile }, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let answering: number | undefined;
  try {
    for (;;) {
      const status = await healthStatus(port);
      if (status !== undefined) answering ??= performance.now() - started;
      if (status === 'ok') {
        const ready = performance.now() - started;
        const [listening, listeningCpu] = readFileSync(listeningFile, 'utf8').split(' ').map(Number) as [number, number];
        rmSync(listeningFile, { force: true });
        return { answering: answering!, ready, listening, listeningCpu };
      }
      if (child.exitCode !== null) throw new Error(`node ${args.join(' ')} exited ${child.exitCode} before answering`);
      // A short pause between attempts: a busy loop would take a core from the starting server.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** `openvaala serve` to `/healthz` next to a tiny HTTP server, alternating. */
async function serveStart(): Promise<{ serve: StartTimes[]; bare: StartTimes[] }> {
  const serve: StartTimes[] = [];
  const bare: StartTimes[] = [];
  for (let sample = 0; sample < SERVE_SAMPLES; sample++) {
    const bareport = await freePort();
    bare.push(await timeToHealthy(['-e', TINY_HTTP_SERVER, String(bareport)], bareport, process.env));
    const home = createBenchHome('serve-start');
    try {
      const port = await freePort();
      serve.push(await timeToHealthy([CLI, 'serve', '--port', String(port)], port, home.env));
    } finally {
      home.remove();
    }
  }
  return { serve, bare };
}

/** Runs `node --import PEAK_RECORDER ...args`; its wall time in ms and peak resident memory in KiB. */
async function measuredClient(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; peak: number }> {
  const peakFile = path.join(cwd, `peak-${process.hrtime.bigint()}`);
  const started = performance.now();
  const result = await runProcess(process.execPath, ['--import', PEAK_RECORDER, ...args], { cwd, env: { ...env, OPENVAALA_BENCH_PEAK_FILE: peakFile } });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${String(result.status)}: ${result.stderr}`);
  const peak = Number(readFileSync(peakFile, 'utf8'));
  rmSync(peakFile);
  return { ms, peak };
}

/** `openvaala exec` with a one-reply turn next to a bare `ws` client, alternating, against one running server. */
async function execClient(): Promise<{ exec: { ms: number; peak: number }[]; bare: { ms: number; peak: number }[] }> {
  const home = createBenchHome('exec-client');
  const { mock } = await startMockFor(home, `responses:\n  - text: "ok"\n    repeat: ${EXEC_SAMPLES + 1}\n`);
  const serve = await startServe(home);
  try {
    const wsUrl = `${serve.info.url.replace(/^http/, 'ws')}${API_PATH}`;
    // One turn first, so both clients meet a server that has loaded what a turn needs.
    await measuredClient([CLI, 'exec', '--json', 'warm up'], home.work, home.env);
    const exec: { ms: number; peak: number }[] = [];
    const bare: { ms: number; peak: number }[] = [];
    for (let sample = 0; sample < EXEC_SAMPLES; sample++) {
      bare.push(await measuredClient([BARE_WS_CLIENT, wsUrl, serve.info.token, String(PROTOCOL_VERSION)], home.work, home.env));
      exec.push(await measuredClient([CLI, 'exec', '--json', `say ok ${sample}`], home.work, home.env));
    }
    return { exec, bare };
  } finally {
    await serve.stop();
    await mock.stop();
    home.remove();
  }
}

/** Runs the benchmark and prints its tables. */
export async function runStartupBenchmark(): Promise<void> {
  console.log(`load average at start: ${loadAverage()}`);
  const bare: number[] = [];
  const help: number[] = [];
  const extraCertificates = process.env.NODE_EXTRA_CA_CERTS;
  const withoutExtraCertificates: number[] = [];
  const environmentWithout = { ...process.env, NODE_EXTRA_CA_CERTS: undefined };
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    bare.push(timeRun(['-e', '0']));
    help.push(timeRun([CLI, '--help']));
    if (extraCertificates) withoutExtraCertificates.push(timeRun(['-e', '0'], environmentWithout));
  }
  const baseline = median(bare);
  const cli = median(help);
  const rows: [string, string][] = [
    ['node -e 0 (baseline)', `${baseline.toFixed(1)} ms`],
    ['openvaala --help', `${cli.toFixed(1)} ms (${(cli / baseline).toFixed(2)}x the baseline)`],
  ];
  if (extraCertificates) {
    const without = median(withoutExtraCertificates);
    rows.push([`node -e 0 without the environment's NODE_EXTRA_CA_CERTS (${path.basename(extraCertificates)})`, `${without.toFixed(1)} ms: the setting adds ${(baseline - without).toFixed(1)} ms to every Node.js start here`]);
  }
  printTable(`command line (median of ${SAMPLES}, alternating)`, rows);

  const start = await serveStart();
  const column = (runs: StartTimes[], key: keyof StartTimes) => runs.map((run) => run[key]);
  const serveMs = median(column(start.serve, 'answering'));
  const readyMs = median(column(start.serve, 'ready'));
  const tinyMs = median(column(start.bare, 'answering'));
  const serveListening = median(column(start.serve, 'listening'));
  const tinyListening = median(column(start.bare, 'listening'));
  const serveCpu = median(column(start.serve, 'listeningCpu'));
  const tinyCpu = median(column(start.bare, 'listeningCpu'));
  printTable(`server start: spawn → /healthz answers 200 (median of ${SERVE_SAMPLES}, alternating)`, [
    ['node -e tiny http server (baseline)', `${tinyMs.toFixed(1)} ms (p99 ${percentile(column(start.bare, 'answering'), 99).toFixed(1)})`],
    ['openvaala serve, fresh data directory', `${serveMs.toFixed(1)} ms (p99 ${percentile(column(start.serve, 'answering'), 99).toFixed(1)}; ${(serveMs / tinyMs).toFixed(2)}x the baseline)`],
    ['openvaala serve: until /healthz says "ok" (ready)', `${readyMs.toFixed(1)} ms (p99 ${percentile(column(start.serve, 'ready'), 99).toFixed(1)}; ${(readyMs / tinyMs).toFixed(2)}x the baseline)`],
    ['from inside: process start → listening, tiny server (baseline)', `${tinyListening.toFixed(1)} ms, ${tinyCpu.toFixed(1)} ms of CPU`],
    ['from inside: process start → listening, openvaala serve', `${serveListening.toFixed(1)} ms (+${(serveListening - tinyListening).toFixed(1)}), ${serveCpu.toFixed(1)} ms of CPU (+${(serveCpu - tinyCpu).toFixed(1)})`],
  ]);

  const client = await execClient();
  const execMs = median(client.exec.map((run) => run.ms));
  const bareMs = median(client.bare.map((run) => run.ms));
  const execPeak = median(client.exec.map((run) => run.peak));
  const barePeak = median(client.bare.map((run) => run.peak));
  printTable(`client against a running server (median of ${EXEC_SAMPLES}, alternating)`, [
    ['bare ws client, connect + initialize (baseline): wall', `${bareMs.toFixed(1)} ms`],
    ['bare ws client: peak RSS (VmHWM)', mebibytes(barePeak)],
    ['openvaala exec --json, one-reply turn: wall', `${execMs.toFixed(1)} ms (p99 ${percentile(client.exec.map((run) => run.ms), 99).toFixed(1)}; ${(execMs / bareMs).toFixed(2)}x the baseline)`],
    ['openvaala exec: peak RSS (VmHWM)', `${mebibytes(execPeak)} (${(execPeak / barePeak).toFixed(2)}x the baseline)`],
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runStartupBenchmark();

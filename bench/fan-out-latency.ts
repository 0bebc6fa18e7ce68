/**
 * The 100-client case of the fan-out benchmark: 100 WebSocket clients subscribed to one
 * conversation of a real `openvaala serve` process while the mock provider (in this process)
 * streams 5,000 text deltas, one per millisecond. The latency of a delta for a client runs from
 * the moment the mock writes it to its HTTP response to the moment the client's `message`
 * handler gets the frame holding it; percentiles over every (delta, client) pair of a run. The
 * baseline, in the same run, is a bare `ws` server process (`raw-broadcaster.ts`) sending the
 * same `item/delta` frames at the same pace to 100 other clients, measured the same way. Both
 * are set up once, then stream {@link RUNS} times each, alternating (one turn each on the
 * server, after a short warm-up turn); the medians of the runs' percentiles are shown, since on
 * a shared machine one run's tail depends on what else ran meanwhile.
 *
 * Both ends read one clock: `process.hrtime` (CLOCK_MONOTONIC, shared by the processes of the
 * machine). The mock's write time is taken by wrapping `ServerResponse.prototype.write` in this
 * process for the duration of the run (the mock is the only HTTP server here). Each delta's text
 * is its number (`d00042 `), so a frame that merges several deltas counts for each of them.
 */
import { spawn } from 'node:child_process';
import { ServerResponse } from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { RuntimeClient } from '../src/client/runtime-client.js';
import { PROTOCOL_VERSION } from '../src/protocol/methods.js';
import { API_PATH } from '../src/protocol/transport.js';
import { createBenchHome, startMockFor, startServe } from './server-process.js';
import { median, percentile, printTable } from './statistics.js';

const CLIENTS = 100;
const DELTAS = 5_000;
/** Runs of each side, alternating. */
const RUNS = 3;
const DELTA_PATTERN = /d(\d{5}) /g;
const here = path.dirname(fileURLToPath(import.meta.url));

/** Now on the machine's monotonic clock, in ms. */
function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function deltaText(index: number): string {
  return `d${String(index).padStart(5, '0')} `;
}

/** A client that records, for each delta number it gets, when it got it; `ended` resolves once it has every delta of the current run. */
interface LatencyClient {
  socket: WebSocket;
  receivedAt: Float64Array;
  count: number;
  frames: number;
  ended: Promise<void>;
  /** Forgets the last run's deltas before the next one. */
  reset(): void;
}

function openClient(url: string, headers: Record<string, string>): Promise<LatencyClient> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    let end = (): void => undefined;
    const client: LatencyClient = {
      socket,
      receivedAt: new Float64Array(DELTAS),
      count: 0,
      frames: 0,
      ended: Promise.resolve(),
      reset: () => {
        client.receivedAt.fill(Number.NaN);
        client.count = 0;
        client.frames = 0;
        client.ended = new Promise<void>((done) => (end = done));
      },
    };
    client.reset();
    socket.on('message', (data: Buffer) => {
      const at = now();
      const message = JSON.parse(data.toString()) as { method?: string; params?: { delta?: { text?: string } } };
      if (message.method !== 'item/delta') return;
      client.frames += 1;
      for (const match of (message.params?.delta?.text ?? '').matchAll(DELTA_PATTERN)) {
        const index = Number(match[1]);
        if (Number.isNaN(client.receivedAt[index] ?? 0)) client.count += 1;
        client.receivedAt[index] = at;
      }
      if (client.count === DELTAS) end();
    });
    socket.once('open', () => resolve(client));
    socket.once('error', reject);
  });
}

/** Sends a JSON-RPC request on a raw client and waits for its answer. @throws Error with the server's error message */
function call(socket: WebSocket, id: number, method: string, params: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { id?: number; error?: { message: string } };
      if (message.id !== id) return;
      socket.off('message', onMessage);
      if (message.error) reject(new Error(`${method}: ${message.error.message}`));
      else resolve();
    };
    socket.on('message', onMessage);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  });
}

/** Latencies of one run in ms: every (delta, client) pair, and apart those of the first and of the last tenth of the deltas (a queue that grows shows as a later tenth slower than the first). */
interface LatencyResult {
  values: number[];
  firstTenth: number[];
  lastTenth: number[];
  framesPerClient: number;
}

/** The latencies of a run from each client's receive times and the send times. @throws Error when a client misses a delta */
function latencies(clients: LatencyClient[], sentAt: Float64Array): LatencyResult {
  const result: LatencyResult = { values: [], firstTenth: [], lastTenth: [], framesPerClient: clients.reduce((total, client) => total + client.frames, 0) / clients.length };
  for (const client of clients) {
    if (client.count !== DELTAS) throw new Error(`a client got ${client.count} of ${DELTAS} deltas`);
    client.receivedAt.forEach((at, index) => {
      const latency = at - (sentAt[index] ?? Number.NaN);
      if (Number.isNaN(latency)) throw new Error(`delta ${index} has no send time`);
      result.values.push(latency);
      if (index < DELTAS / 10) result.firstTenth.push(latency);
      if (index >= DELTAS - DELTAS / 10) result.lastTenth.push(latency);
    });
  }
  return result;
}

/** One side of the comparison, set up once: each `run` streams the deltas once to its 100 clients. */
interface Side {
  run(): Promise<LatencyResult>;
  close(): Promise<void>;
}

/** The deltas through a real server: 100 subscribed clients, the mock's write times taken from its responses. */
async function serverSide(): Promise<Side> {
  const home = createBenchHome('fan-out-latency');
  const deltas = Array.from({ length: DELTAS }, (_, index) => JSON.stringify(deltaText(index))).join(', ');
  // A short turn first, so that the measured ones meet a server that has loaded what a turn needs.
  const { mock } = await startMockFor(home, `responses:\n  - text: "warm up"\n  - deltas: [${deltas}]\n    delayMs: 1\n    repeat: ${RUNS}\n`);
  const server = await startServe(home);
  let sentAt = new Float64Array(DELTAS);
  const originalWrite = ServerResponse.prototype.write;
  ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === 'string') {
      const at = now();
      for (const match of chunk.matchAll(/"delta":"d(\d{5}) /g)) sentAt[Number(match[1])] = at;
    }
    return (originalWrite as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof originalWrite;
  const clients: LatencyClient[] = [];
  const driver = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: 'bench-driver', capabilities: {} });
  const { conversation } = await driver.request('conversation/create', { cwd: home.work, title: 'fan-out latency' });
  const completed = new Set<string>();
  driver.onNotification((event) => {
    if (event.method === 'turn/completed') completed.add(event.params.turn.id);
  });
  await driver.request('conversation/subscribe', { conversationId: conversation.id });
  /** Runs one turn and waits for its end. */
  const turn = async (input: string) => {
    const { turnId } = await driver.request('session/input', { conversationId: conversation.id, input });
    while (!completed.has(turnId ?? '')) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  await turn('warm up');
  const url = `${server.info.url.replace(/^http/, 'ws')}${API_PATH}`;
  for (let index = 0; index < CLIENTS; index++) {
    const client = await openClient(url, { authorization: `Bearer ${server.info.token}` });
    await call(client.socket, 1, 'initialize', { clientInfo: { name: `bench-${index}` }, protocolVersion: PROTOCOL_VERSION, capabilities: { deltas: true } });
    await call(client.socket, 2, 'conversation/subscribe', { conversationId: conversation.id });
    clients.push(client);
  }
  return {
    run: async () => {
      sentAt = new Float64Array(DELTAS).fill(Number.NaN);
      for (const client of clients) client.reset();
      await turn('stream');
      await Promise.all(clients.map((client) => client.ended));
      return latencies(clients, sentAt);
    },
    close: async () => {
      ServerResponse.prototype.write = originalWrite;
      for (const client of clients) client.socket.terminate();
      await driver.close();
      await server.stop();
      await mock.stop();
      home.remove();
    },
  };
}

/** The baseline: the same frames from a bare `ws` server process to 100 clients. */
async function baselineSide(): Promise<Side> {
  const child = spawn(process.execPath, [path.join(here, 'raw-broadcaster.js'), String(DELTAS)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const { port } = JSON.parse(String((await lines.next()).value)) as { port: number };
  const clients: LatencyClient[] = [];
  for (let index = 0; index < CLIENTS; index++) clients.push(await openClient(`ws://127.0.0.1:${port}`, {}));
  return {
    run: async () => {
      for (const client of clients) client.reset();
      child.stdin.write('go\n');
      const { sentAt } = JSON.parse(String((await lines.next()).value)) as { sentAt: number[] };
      await Promise.all(clients.map((client) => client.ended));
      return latencies(clients, Float64Array.from(sentAt));
    },
    close: async () => {
      child.stdin.end();
      for (const client of clients) client.socket.terminate();
      await exited;
    },
  };
}

/** Runs the 100-client case and prints its table. */
export async function runFanOutLatencyBenchmark(): Promise<void> {
  const server = await serverSide();
  const results: { server: LatencyResult[]; baseline: LatencyResult[] } = { server: [], baseline: [] };
  try {
    const baseline = await baselineSide();
    try {
      for (let run = 0; run < RUNS; run++) {
        results.server.push(await server.run());
        results.baseline.push(await baseline.run());
      }
    } finally {
      await baseline.close();
    }
  } finally {
    await server.close();
  }
  /** The median over the runs of one percentile of `pick`'s latencies. */
  const over = (runs: LatencyResult[], p: number, pick: (result: LatencyResult) => number[] = (result) => result.values) => median(runs.map((result) => percentile(pick(result), p)));
  const row = (runs: LatencyResult[]) =>
    `p50 ${over(runs, 50).toFixed(2)} ms, p90 ${over(runs, 90).toFixed(2)} ms, p99 ${over(runs, 99).toFixed(2)} ms (runs: ${runs.map((result) => percentile(result.values, 99).toFixed(0)).join(', ')}), max ${over(runs, 100).toFixed(0)} ms; ${Math.round(median(runs.map((result) => result.framesPerClient))).toLocaleString('en')} delta frames per client`;
  const tenths = (runs: LatencyResult[]) => `${over(runs, 50, (result) => result.firstTenth).toFixed(2)} ms / ${over(runs, 50, (result) => result.lastTenth).toFixed(2)} ms`;
  printTable(`${CLIENTS} clients, ${DELTAS.toLocaleString('en')} deltas one per ms, median of ${RUNS} alternating runs: latency from the mock writing a delta (server) or the broadcaster sending it (baseline) to each client getting it`, [
    ['OpenVaala: mock → serve (Responses client, event bus, send buffer, ws) → client', row(results.server)],
    ['baseline: bare ws broadcast process → client', row(results.baseline)],
    ['OpenVaala: p50 of the first / of the last tenth of the deltas', tenths(results.server)],
    ['baseline: p50 of the first / of the last tenth of the deltas', tenths(results.baseline)],
    ['OpenVaala p50 / baseline p50', `${(over(results.server, 50) / over(results.baseline, 50)).toFixed(2)}x`],
    ['OpenVaala p99 / baseline p99', `${(over(results.server, 99) / over(results.baseline, 99)).toFixed(2)}x`],
  ]);
}

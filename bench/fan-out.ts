/**
 * `npm run bench:fan-out`: how fast the server fans a stream of `item/delta` out to 1 and 8
 * WebSocket clients subscribed to one conversation, from the conversation's event bus through
 * each connection's send buffer to clients that parse every frame — next to the baseline of a
 * bare `ws` server broadcasting the same frames to the same number of clients, in the same run.
 * The deltas are published straight into the conversation (no model), so the figure is the
 * fan-out's, not a provider's. Then the 100-client latency case (`fan-out-latency.ts`): a real
 * server process, the mock provider streaming, p50/p99 from the mock's write to each client.
 * `node dist/bench/fan-out.js latency` runs only that case.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { createLogger } from '../src/logger.js';
import { MockProviderServer } from '../src/models/mock/index.js';
import type { AnyNotification } from '../src/protocol/index.js';
import { startRuntimeServer } from '../src/server/runtime-server.js';
import { runFanOutLatencyBenchmark } from './fan-out-latency.js';
import { median, printTable } from './statistics.js';

/** Deltas per run. */
const DELTAS = 100_000;
/** Characters per delta (a few tokens, as models stream them). */
const DELTA_CHARS = 16;
/** Deltas published per event-loop turn: a model stream delivers several per network read. */
const DELTAS_PER_TICK = 50;
/** Runs per configuration; the median is shown. */
const RUNS = 3;

/** A client that parses every frame and counts the characters of delta text it got. */
interface CountingClient {
  socket: WebSocket;
  chars: number;
  /** item/delta frames received (fewer than deltas when the server merged some for a busy socket). */
  frames: number;
}

function openClient(url: string, headers: Record<string, string> = {}): Promise<CountingClient> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const client: CountingClient = { socket, chars: 0, frames: 0 };
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { method?: string; params?: { delta?: { text?: string } } };
      if (message.method !== 'item/delta') return;
      client.chars += message.params?.delta?.text?.length ?? 0;
      client.frames += 1;
    });
    socket.once('open', () => resolve(client));
    socket.once('error', reject);
  });
}

/** Sends one JSON-RPC request on a raw client and waits for its answer. */
function request(client: CountingClient, id: number, method: string, params: unknown): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as { id?: number };
      if (message.id !== id) return;
      client.socket.off('message', onMessage);
      resolve();
    };
    client.socket.on('message', onMessage);
    client.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  });
}

/** One run: how long until every client had all the text, and the delta frames they got in all. */
interface RunResult {
  ms: number;
  frames: number;
}

/** Publishes the deltas a batch per tick and resolves when every client has all their text. */
async function stream(publish: (index: number) => void, clients: CountingClient[]): Promise<RunResult> {
  const target = DELTAS * DELTA_CHARS;
  const base = clients.map((client) => client.chars);
  const baseFrames = clients.reduce((total, client) => total + client.frames, 0);
  const started = performance.now();
  for (let index = 0; index < DELTAS; index += DELTAS_PER_TICK) {
    for (let offset = index; offset < Math.min(DELTAS, index + DELTAS_PER_TICK); offset++) publish(offset);
    await new Promise((resolve) => setImmediate(resolve));
  }
  while (clients.some((client, index) => client.chars - (base[index] ?? 0) < target)) await new Promise((resolve) => setTimeout(resolve, 1));
  return { ms: performance.now() - started, frames: clients.reduce((total, client) => total + client.frames, 0) - baseFrames };
}

function deltaText(index: number): string {
  return `${String(index).padStart(DELTA_CHARS - 1, '.')} `;
}

/** Delta fan-out through a real runtime server. */
async function runServer(clientCount: number): Promise<RunResult[]> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-bench-fan-out-'));
  const paths = { configDir: path.join(root, 'config'), dataDir: path.join(root, 'data'), stateDir: path.join(root, 'state') };
  mkdirSync(paths.configDir, { recursive: true });
  mkdirSync(path.join(root, 'work'));
  const mock = new MockProviderServer({ responses: [] });
  const { baseURL } = await mock.start({ port: 0 });
  writeFileSync(path.join(paths.configDir, 'providers.yaml'), `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`);
  const server = await startRuntimeServer({ paths, port: 0, logger: createLogger('silent') });
  try {
    const url = `${server.url.replace('http', 'ws')}/api/v1/openvaala`;
    const headers = { authorization: `Bearer ${server.token}` };
    const driver = await openClient(url, headers);
    await request(driver, 1, 'initialize', { clientInfo: { name: 'bench-driver' } });
    let conversationId = '';
    await new Promise<void>((resolve) => {
      driver.socket.on('message', (data) => {
        const message = JSON.parse(data.toString()) as { id?: number; result?: { conversation?: { id: string } } };
        if (message.id === 2 && message.result?.conversation) {
          conversationId = message.result.conversation.id;
          resolve();
        }
      });
      driver.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'conversation/create', params: { cwd: path.join(root, 'work') } }));
    });
    const clients = await Promise.all(Array.from({ length: clientCount }, () => openClient(url, headers)));
    for (const [index, client] of clients.entries()) {
      await request(client, 1, 'initialize', { clientInfo: { name: `bench-${index}` } });
      await request(client, 2, 'conversation/subscribe', { conversationId });
    }
    const conversation = await server.runtime.getConversation(conversationId);
    const sessionId = conversation.rootSession.id;
    const times: RunResult[] = [];
    for (let run = 0; run < RUNS; run++) {
      const itemId = `item_bench${run}`;
      conversation.itemStarted(sessionId, 'turn_bench', itemId, 'assistant_message', {});
      times.push(await stream((index) => conversation.itemDelta(sessionId, 'turn_bench', itemId, { text: deltaText(index) }), clients));
    }
    for (const client of [driver, ...clients]) client.socket.close();
    return times;
  } finally {
    await server.stop();
    await mock.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/** The baseline: a bare `ws` server sending each client the same frames, serialized once per delta. */
async function runBaseline(clientCount: number): Promise<RunResult[]> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const { port } = wss.address() as { port: number };
  const clients = await Promise.all(Array.from({ length: clientCount }, () => openClient(`ws://127.0.0.1:${port}`)));
  while (wss.clients.size < clientCount) await new Promise((resolve) => setTimeout(resolve, 1));
  const times: RunResult[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const itemId = `item_bench${run}`;
      times.push(
        await stream((index) => {
          const event: AnyNotification = { method: 'item/delta', params: { conversationId: 'conv_bench', sessionId: 'sess_bench', turnId: 'turn_bench', itemId, kind: 'assistant_message', seq: 1, delta: { text: deltaText(index) } } };
          const text = JSON.stringify({ jsonrpc: '2.0', method: event.method, params: event.params });
          for (const socket of wss.clients) socket.send(text);
        }, clients),
      );
    }
  } finally {
    for (const client of clients) client.socket.close();
    await new Promise((resolve) => wss.close(resolve));
  }
  return times;
}

/** Runs the benchmark and prints its figures; with `only` = `latency`, only the 100-client latency case. */
export async function runFanOutBenchmark(only?: string): Promise<void> {
  if (only === 'latency') return runFanOutLatencyBenchmark();
  console.log(`${DELTAS.toLocaleString('en')} item/delta of ${DELTA_CHARS} characters, ${DELTAS_PER_TICK} per event-loop turn, clients in the same process parsing every frame; median of ${RUNS} runs`);
  for (const clientCount of [1, 8]) {
    const serverRuns = await runServer(clientCount);
    const baselineRuns = await runBaseline(clientCount);
    const server = median(serverRuns.map((run) => run.ms));
    const baseline = median(baselineRuns.map((run) => run.ms));
    const rate = (ms: number) => Math.round((DELTAS / ms) * 1000).toLocaleString('en');
    const frames = (runs: RunResult[]) => `${median(runs.map((run) => run.frames / clientCount)).toLocaleString('en')} frames per client`;
    printTable(`${clientCount} client${clientCount === 1 ? '' : 's'}`, [
      ['OpenVaala (event bus, send buffer, ws)', `${rate(server)} deltas/s to every client (${Math.round(server)} ms; ${frames(serverRuns)})`],
      ['baseline (bare ws broadcast)', `${rate(baseline)} deltas/s to every client (${Math.round(baseline)} ms; ${frames(baselineRuns)})`],
      ['OpenVaala time / baseline time', `${(server / baseline).toFixed(2)}x`],
    ]);
  }
  await runFanOutLatencyBenchmark();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runFanOutBenchmark(process.argv[2]);
}

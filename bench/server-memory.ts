/**
 * `npm run bench:memory`: the resident memory of a real `openvaala serve` (VmRSS and VmHWM of
 * `/proc/PID/status`, proc(5)) over long use, each figure next to the same server's idle RSS
 * (after start, before any turn):
 *
 * - after 100 conversations of 20 steps each (one `exec_command "echo N"` per step), driven one
 *   after the other by one WebSocket client: RSS after the 1st and after the 100th, and their
 *   ratio (a ratio near 1 means what a finished conversation leaves behind is small);
 * - one turn streaming 200,000 text deltas with no client attached (the client leaves before the
 *   stream begins): peak RSS during the turn and RSS after it, on a second, fresh server.
 *
 * "After" figures are read twice: once the server has been idle for {@link EARLY_MS} (the
 * reading of the rounds before), and once its own idle policy has had time to run
 * ({@link SETTLED_MS}): a conversation just used stays open for `EVICTION_GRACE_MS` (5 s) and
 * counts toward the idle bound meanwhile; the ones beyond the bound close at the next eviction
 * check after their grace; the server gives memory back at the first idle check after a quiet
 * spell (`src/server/idle-memory.ts`). Read at 5 s, after a run of conversations made faster
 * than one per 0.5 s, the figure falls in the middle of those closings. The ratios compare
 * readings taken at the same moment.
 */
import { pathToFileURL } from 'node:url';
import { RuntimeClient } from '../src/client/runtime-client.js';
import type { MockProviderServer } from '../src/models/mock/index.js';
import type { AnyNotification } from '../src/protocol/index.js';
import { EVICTION_CHECK_MS, EVICTION_GRACE_MS } from '../src/runtime/open-conversations.js';
import { IDLE_MEMORY_CHECK_MS, IDLE_QUIET_MS } from '../src/server/idle-memory.js';
import { createBenchHome, loadAverage, mebibytes, memoryKilobytes, resetPeakMemory, startMockFor, startServe, type BenchHome, type ServeProcess } from './server-process.js';
import { printTable } from './statistics.js';

const CONVERSATIONS = 100;
const STEPS = 20;
const DELTAS = 200_000;
const DELTA_LENGTH = 8;
/** The first "after" reading, ms of idleness (the only one of the rounds before). */
const EARLY_MS = 5_000;
/**
 * The second "after" reading, ms of idleness: the last conversation's grace, the eviction check
 * that closes what is then beyond the bound, the quiet spell before the server collects, and two
 * of its idle checks (one to notice the quiet, one of slack).
 */
const SETTLED_MS = EVICTION_GRACE_MS + EVICTION_CHECK_MS + IDLE_QUIET_MS + 2 * IDLE_MEMORY_CHECK_MS;

/** An idle server's RSS, KiB, after {@link EARLY_MS} and after {@link SETTLED_MS} of idleness. */
interface IdleReadings {
  early: number;
  settled: number;
}

async function readWhileIdle(pid: number): Promise<IdleReadings> {
  await new Promise((resolve) => setTimeout(resolve, EARLY_MS));
  const early = memoryKilobytes(pid).rss;
  await new Promise((resolve) => setTimeout(resolve, SETTLED_MS - EARLY_MS));
  return { early, settled: memoryKilobytes(pid).rss };
}

/** Script of `count` turns of {@link STEPS} steps each: per turn, {@link STEPS} answers of one tool call, then a final text. */
function conversationsScript(count: number): string {
  const turn = ['  - text: "step"', '    toolCalls:', '      - { name: exec_command, arguments: { command: "echo N" } }', `    repeat: ${STEPS}`, '  - text: "done"'];
  return ['responses:', ...Array.from({ length: count }, () => turn).flat()].join('\n');
}

/** Starts a turn in a new conversation and resolves with the finished turn's status. */
async function runConversation(client: RuntimeClient, home: BenchHome, index: number): Promise<string> {
  const created = await client.request('conversation/create', { cwd: home.work, title: `conversation ${index}` });
  const conversationId = created.conversation.id;
  let turnId: string | undefined;
  const ended = new Map<string, string>();
  let finish: ((status: string) => void) | undefined;
  const stop = client.onNotification((event: AnyNotification) => {
    if (event.method !== 'turn/completed' || event.params.conversationId !== conversationId) return;
    ended.set(event.params.turn.id, event.params.turn.status);
    if (event.params.turn.id === turnId) finish?.(event.params.turn.status);
  });
  try {
    await client.request('conversation/subscribe', { conversationId });
    const input = await client.request('session/input', { conversationId, input: `run ${STEPS} steps` });
    turnId = input.turnId;
    const status = ended.get(turnId ?? '') ?? (await new Promise<string>((resolve) => (finish = resolve)));
    await client.request('conversation/unsubscribe', { conversationId });
    return status;
  } finally {
    stop();
  }
}

/** RSS after the 1st and after the last of {@link CONVERSATIONS} conversations, with the idle RSS. */
async function conversationsMemory(): Promise<{ idle: number; first: IdleReadings; last: IdleReadings; seconds: number }> {
  const home = createBenchHome('memory-conversations');
  const { mock } = await startMockFor(home, conversationsScript(CONVERSATIONS));
  const server = await startServe(home);
  const client = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: 'bench-memory' });
  try {
    const idle = memoryKilobytes(server.pid).rss;
    const started = performance.now();
    let first: IdleReadings = { early: 0, settled: 0 };
    for (let index = 1; index <= CONVERSATIONS; index++) {
      const status = await runConversation(client, home, index);
      if (status !== 'completed') throw new Error(`conversation ${index} ended ${status}`);
      if (index === 1) first = await readWhileIdle(server.pid);
    }
    const last = await readWhileIdle(server.pid);
    if (mock.requests.length !== CONVERSATIONS * (STEPS + 1)) throw new Error(`expected ${CONVERSATIONS * (STEPS + 1)} model requests, got ${mock.requests.length}`);
    return { idle, first, last, seconds: (performance.now() - started) / 1000 };
  } finally {
    await client.close();
    await server.stop();
    await mock.stop();
    home.remove();
  }
}

/** Waits until the conversation's turn is no longer running, asking a fresh connection once a second. */
async function waitForTurnEnd(server: ServeProcess, mock: MockProviderServer, conversationId: string): Promise<string> {
  while (mock.requests[0]?.answeredAt === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
  while (true) {
    const client = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: 'bench-memory-check', capabilities: {} });
    const { turns } = await client.request('conversation/get', { conversationId });
    await client.close();
    const status = turns.at(-1)?.status;
    if (status !== undefined && status !== 'running') return status;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Peak RSS during a turn of {@link DELTAS} deltas nobody watches, and RSS after it, with the idle RSS. */
async function unwatchedStreamMemory(): Promise<{ idle: number; peak: number; after: IdleReadings; seconds: number }> {
  const home = createBenchHome('memory-deltas');
  const { mock } = await startMockFor(home, `responses:\n  - generatedText: { deltas: ${DELTAS}, deltaLength: ${DELTA_LENGTH} }\n`);
  const server = await startServe(home);
  try {
    const idle = memoryKilobytes(server.pid).rss;
    resetPeakMemory(server.pid);
    const started = performance.now();
    const client = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: 'bench-memory', capabilities: {} });
    const created = await client.request('conversation/create', { cwd: home.work, title: 'long answer' });
    await client.request('session/input', { conversationId: created.conversation.id, input: 'stream a long answer' });
    // The client leaves before the model's answer begins: the turn runs with nobody attached.
    await client.close();
    const status = await waitForTurnEnd(server, mock, created.conversation.id);
    if (status !== 'completed') throw new Error(`the streaming turn ended ${status}`);
    const seconds = (performance.now() - started) / 1000;
    const { peak } = memoryKilobytes(server.pid);
    return { idle, peak, after: await readWhileIdle(server.pid), seconds };
  } finally {
    await server.stop();
    await mock.stop();
    home.remove();
  }
}

/** Runs the benchmark and prints its tables. */
export async function runServerMemoryBenchmark(): Promise<void> {
  console.log(`load average at start: ${loadAverage()}`);
  const conversations = await conversationsMemory();
  const { idle, first, last } = conversations;
  const readings = (value: IdleReadings, base: number) => `${mebibytes(value.settled)} (${(value.settled / base).toFixed(2)}x idle); at ${EARLY_MS / 1000} s ${mebibytes(value.early)}`;
  printTable(`server RSS over ${CONVERSATIONS} conversations of ${STEPS} steps each (${conversations.seconds.toFixed(0)} s); "after" read idle for ${SETTLED_MS / 1000} s, and at ${EARLY_MS / 1000} s`, [
    ['idle (after start, before any turn; baseline)', mebibytes(idle)],
    ['after the 1st conversation', readings(first, idle)],
    [`after the ${CONVERSATIONS}th conversation`, readings(last, idle)],
    [`after the ${CONVERSATIONS}th / after the 1st`, `${(last.settled / first.settled).toFixed(2)}x (at ${EARLY_MS / 1000} s: ${(last.early / first.early).toFixed(2)}x)`],
  ]);
  const stream = await unwatchedStreamMemory();
  printTable(`server RSS over one turn streaming ${DELTAS.toLocaleString('en')} deltas of ${DELTA_LENGTH} characters, no client attached (${stream.seconds.toFixed(1)} s)`, [
    ['idle (fresh server; baseline)', mebibytes(stream.idle)],
    ['peak during the turn (VmHWM)', `${mebibytes(stream.peak)} (${(stream.peak / stream.idle).toFixed(2)}x idle)`],
    ['after the turn', readings(stream.after, stream.idle)],
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runServerMemoryBenchmark().catch((error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  });
}

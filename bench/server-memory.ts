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
 * "After" figures are read once the server has been idle for {@link SETTLE_MS}: a server gives
 * memory back when no turn runs (`src/server/idle-memory.ts`), not in the middle of the work.
 */
import { pathToFileURL } from 'node:url';
import { RuntimeClient } from '../src/client/runtime-client.js';
import type { MockProviderServer } from '../src/models/mock/index.js';
import type { AnyNotification } from '../src/protocol/index.js';
import { createBenchHome, loadAverage, mebibytes, memoryKilobytes, resetPeakMemory, startMockFor, startServe, type BenchHome, type ServeProcess } from './server-process.js';
import { printTable } from './statistics.js';

const CONVERSATIONS = 100;
const STEPS = 20;
const DELTAS = 200_000;
const DELTA_LENGTH = 8;
/** How long the server is left idle before an "after" reading, ms (over two of its idle checks). */
const SETTLE_MS = 5_000;

function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
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
async function conversationsMemory(): Promise<{ idle: number; first: number; last: number; seconds: number }> {
  const home = createBenchHome('memory-conversations');
  const { mock } = await startMockFor(home, conversationsScript(CONVERSATIONS));
  const server = await startServe(home);
  const client = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: 'bench-memory' });
  try {
    const idle = memoryKilobytes(server.pid).rss;
    const started = performance.now();
    let first = 0;
    for (let index = 1; index <= CONVERSATIONS; index++) {
      const status = await runConversation(client, home, index);
      if (status !== 'completed') throw new Error(`conversation ${index} ended ${status}`);
      if (index === 1) {
        await settle();
        first = memoryKilobytes(server.pid).rss;
      }
    }
    await settle();
    if (mock.requests.length !== CONVERSATIONS * (STEPS + 1)) throw new Error(`expected ${CONVERSATIONS * (STEPS + 1)} model requests, got ${mock.requests.length}`);
    return { idle, first, last: memoryKilobytes(server.pid).rss, seconds: (performance.now() - started) / 1000 };
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
async function unwatchedStreamMemory(): Promise<{ idle: number; peak: number; after: number; seconds: number }> {
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
    await settle();
    return { idle, peak, after: memoryKilobytes(server.pid).rss, seconds };
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
  printTable(`server RSS over ${CONVERSATIONS} conversations of ${STEPS} steps each (${conversations.seconds.toFixed(0)} s)`, [
    ['idle (after start, before any turn; baseline)', mebibytes(conversations.idle)],
    ['after the 1st conversation, idle for 5 s', `${mebibytes(conversations.first)} (${(conversations.first / conversations.idle).toFixed(2)}x idle)`],
    [`after the ${CONVERSATIONS}th conversation`, `${mebibytes(conversations.last)} (${(conversations.last / conversations.idle).toFixed(2)}x idle)`],
    [`after the ${CONVERSATIONS}th / after the 1st`, `${(conversations.last / conversations.first).toFixed(2)}x`],
  ]);
  const stream = await unwatchedStreamMemory();
  printTable(`server RSS over one turn streaming ${DELTAS.toLocaleString('en')} deltas of ${DELTA_LENGTH} characters, no client attached (${stream.seconds.toFixed(1)} s)`, [
    ['idle (fresh server; baseline)', mebibytes(stream.idle)],
    ['peak during the turn (VmHWM)', `${mebibytes(stream.peak)} (${(stream.peak / stream.idle).toFixed(2)}x idle)`],
    ['after the turn, idle for 5 s', `${mebibytes(stream.after)} (${(stream.after / stream.idle).toFixed(2)}x idle)`],
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runServerMemoryBenchmark().catch((error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  });
}

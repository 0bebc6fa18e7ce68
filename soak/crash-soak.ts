/**
 * The crash soak: a real `openvaala serve` on one data directory is killed with SIGKILL at a
 * random moment of a turn, round after round, and restarted. Each turn runs commands that
 * keep writing files (one plain, one that double-forks out of its shell). After every
 * restart the soak checks, before opening any conversation:
 *
 * - lost: items the server acknowledged (an `item/completed` event is sent only once the item
 *   is synced to disk) that are missing from `items/list`, and acknowledged conversations
 *   (their first input was accepted) missing from the listing;
 * - stale: conversations the listing shows with a `running` last turn;
 * - left running: processes started by a previous server's commands that still exist.
 *
 * All three must stay 0. Traffic stays on 127.0.0.1 (a mock model provider in this process).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RuntimeClient } from '../src/client/runtime-client.js';
import { findServer } from '../src/cli/server-discovery.js';
import type { OpenVaalaPaths } from '../src/config/paths.js';
import { MockProviderServer, parseMockScript } from '../src/models/mock/index.js';
import { CLI_EXECUTABLE } from '../src/package-info.js';
import type { ConversationSummary } from '../src/protocol/index.js';

/** Options of {@link runCrashSoak}. */
export interface CrashSoakOptions {
  /** Kill-and-restart rounds. */
  rounds: number;
  /** Longest time a turn runs before the kill, ms (the kill comes at a random moment up to it). Default 1500. */
  maxKillDelayMs?: number;
  /** Told after each round (progress). */
  onRound?: (round: number, figures: CrashSoakFigures) => void;
}

/** What a soak measured. */
export interface CrashSoakFigures {
  rounds: number;
  /** Items the server acknowledged over all rounds. */
  itemsAcknowledged: number;
  /** Conversations whose first input the server accepted. */
  conversationsAcknowledged: number;
  /** Acknowledged items or conversations missing after a restart. */
  lost: number;
  /** Listing entries showing a running last turn right after a restart (summed over restarts). */
  staleRunning: number;
  /** Processes of a killed server's commands still alive after the next start. */
  leftRunning: number;
  /** Wall time, ms. */
  wallTimeMs: number;
  /** Descriptions of the first problems seen (at most 20). */
  problems: string[];
}

const WRITER = 'echo $$ >> ../pids.txt; while true; do echo tick >> ../ticks.txt; sleep 0.05; done';
const DOUBLE_FORK = "( sh -c 'echo $$ >> ../pids.txt; while true; do echo tick >> ../ticks.txt; sleep 0.05; done' & ); echo $$ >> ../pids.txt; while true; do sleep 0.2; done";

/** Every model request gets the same answer: a quick command, then two writers that never end. */
function mockScript(rounds: number): string {
  return `responses:
  - text: "Running the checks."
    toolCalls:
      - { name: exec_command, arguments: { command: "echo quick" } }
      - { name: exec_command, arguments: { command: ${JSON.stringify(WRITER)}, yield_after_ms: 600000 } }
      - { name: exec_command, arguments: { command: ${JSON.stringify(DOUBLE_FORK)}, yield_after_ms: 600000 } }
    repeat: ${rounds * 4 + 10}
`;
}

/**
 * True when the process is alive and is one of the soak's commands: its working directory is
 * inside the soak's installation. A pid reused by an unrelated process (pids wrap quickly on
 * a busy machine) is neither counted nor signalled.
 */
function commandAlive(pid: number, root: string): boolean {
  try {
    if (/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) return false;
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return cwd === root || cwd.startsWith(`${root}/`);
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `openvaala serve` and waits until it has written its server file. */
async function startServe(paths: OpenVaalaPaths, env: NodeJS.ProcessEnv): Promise<{ pid: number; url: string; token: string; kill(): Promise<void> }> {
  const child = spawn(process.execPath, [CLI_EXECUTABLE, 'serve', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const info = await findServer(paths);
    if (info && info.pid === child.pid) {
      return {
        pid: child.pid,
        url: info.url,
        token: info.token,
        async kill() {
          child.kill('SIGKILL');
          await exited;
        },
      };
    }
    if (child.exitCode !== null) break;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`openvaala serve did not start: ${errors}`);
}

async function listAll(client: RuntimeClient): Promise<ConversationSummary[]> {
  const all: ConversationSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request('conversation/list', { limit: 500, ...(cursor ? { cursor } : {}) });
    all.push(...page.conversations);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

async function itemIds(client: RuntimeClient, conversationId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: number | undefined;
  do {
    const page = await client.request('items/list', { conversationId, limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
    for (const entry of page.items) ids.add(entry.item.id);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

/**
 * Runs the soak in a fresh temporary installation (removed at the end).
 * @returns the figures; the caller decides (all of lost, staleRunning, leftRunning must be 0)
 */
export async function runCrashSoak(options: CrashSoakOptions): Promise<CrashSoakFigures> {
  const started = performance.now();
  const maxKillDelayMs = options.maxKillDelayMs ?? 1500;
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'openvaala-soak-')));
  const paths: OpenVaalaPaths = { configDir: path.join(root, 'config', 'openvaala'), dataDir: path.join(root, 'data', 'openvaala'), stateDir: path.join(root, 'state', 'openvaala') };
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state'), OPENVAALA_LOG_LEVEL: 'error' };
  const workDir = path.join(root, 'work', 'project');
  mkdirSync(workDir, { recursive: true });
  mkdirSync(paths.configDir, { recursive: true });
  const pidsFile = path.join(root, 'work', 'pids.txt');
  const mock = new MockProviderServer(parseMockScript(mockScript(options.rounds), 'soak.yaml'));
  const { baseURL } = await mock.start({ port: 0 });
  writeFileSync(path.join(paths.configDir, 'providers.yaml'), `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`);

  const figures: CrashSoakFigures = { rounds: 0, itemsAcknowledged: 0, conversationsAcknowledged: 0, lost: 0, staleRunning: 0, leftRunning: 0, wallTimeMs: 0, problems: [] };
  const problem = (text: string): void => {
    if (figures.problems.length < 20) figures.problems.push(text);
  };
  /** Acknowledged item ids per acknowledged conversation. */
  const acknowledged = new Map<string, Set<string>>();
  const checkedPids = new Set<number>();

  /** The checks made right after a start, before any conversation is opened. */
  const verify = async (client: RuntimeClient, conversations: Iterable<string>): Promise<void> => {
    const listing = await listAll(client);
    const stale = listing.filter((summary) => summary.lastTurnStatus === 'running');
    figures.staleRunning += stale.length;
    for (const summary of stale) problem(`round ${figures.rounds}: ${summary.id} listed as running`);
    const listed = new Set(listing.map((summary) => summary.id));
    for (const conversationId of conversations) {
      const expected = acknowledged.get(conversationId) ?? new Set<string>();
      if (!listed.has(conversationId)) {
        figures.lost += 1 + expected.size;
        problem(`round ${figures.rounds}: acknowledged conversation ${conversationId} missing from the listing`);
        continue;
      }
      const stored = await itemIds(client, conversationId);
      for (const id of expected) {
        if (!stored.has(id)) {
          figures.lost += 1;
          problem(`round ${figures.rounds}: acknowledged item ${id} of ${conversationId} lost`);
        }
      }
    }
    // Every process a killed server's commands started must be gone once the new server is up.
    const pids = existsSync(pidsFile) ? readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number) : [];
    const deadline = Date.now() + 2000;
    for (const pid of pids) {
      if (checkedPids.has(pid)) continue;
      while (commandAlive(pid, root) && Date.now() < deadline) await sleep(20);
      if (commandAlive(pid, root)) {
        figures.leftRunning += 1;
        problem(`round ${figures.rounds}: command process ${pid} still running`);
        process.kill(pid, 'SIGKILL');
      }
      checkedPids.add(pid);
    }
  };

  let server: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    for (let round = 1; round <= options.rounds; round += 1) {
      server = await startServe(paths, env);
      const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'crash-soak' });
      // The previous round's conversation, then (at the end) all of them.
      const previous = [...acknowledged.keys()].slice(-1);
      await verify(client, previous);

      const { conversation } = await client.request('conversation/create', { cwd: workDir, title: `round ${round}` });
      const items = new Set<string>();
      client.onNotification((event) => {
        if (event.method === 'item/completed' && event.params.conversationId === conversation.id) items.add(event.params.item.id);
      });
      await client.request('conversation/subscribe', { conversationId: conversation.id });
      const killAt = Date.now() + Math.random() * maxKillDelayMs;
      await client.request('session/input', { conversationId: conversation.id, input: `round ${round}: run the checks` });
      // Accepted input: the conversation is durable from here on.
      acknowledged.set(conversation.id, items);
      figures.conversationsAcknowledged += 1;
      await sleep(Math.max(0, killAt - Date.now()));
      // Acknowledgements seen up to the kill; events after it cannot arrive.
      const snapshot = new Set(items);
      acknowledged.set(conversation.id, snapshot);
      await server.kill();
      server = undefined;
      await client.close().catch(() => undefined);
      figures.itemsAcknowledged += snapshot.size;
      figures.rounds = round;
      options.onRound?.(round, figures);
    }
    // The last kill, then a full check of every conversation of the run.
    server = await startServe(paths, env);
    const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'crash-soak' });
    await verify(client, acknowledged.keys());
    await client.close();
  } finally {
    await server?.kill();
    // Whatever a failure left behind is not left running.
    const pids = existsSync(pidsFile) ? readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number) : [];
    for (const pid of pids) if (commandAlive(pid, root)) process.kill(pid, 'SIGKILL');
    await mock.stop();
    rmSync(root, { recursive: true, force: true });
  }
  figures.wallTimeMs = performance.now() - started;
  return figures;
}

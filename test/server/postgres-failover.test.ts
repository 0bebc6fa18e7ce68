/**
 * Two real `openvaala serve` processes on one PostgreSQL schema: A is active, B stands by
 * (the schema's active-server lock). A is killed with SIGKILL in the middle of a turn; B takes
 * over at once, records the interrupted turn before it accepts clients, a client that was on A
 * resubscribes on B with `afterSeq` and receives every item after the last one it had (no gap),
 * and a new turn runs on B.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { findServer } from '../../src/cli/server-discovery.js';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { createTestSchema, dropTestSchema, startTestPostgres, type ThrowawayPostgres } from '../helpers/postgres-server.js';
import { killQuietly, waitForFileContent } from '../reliability/crash-helpers.js';

const VARIABLE = 'OPENVAALA_FAILOVER_DATABASE_URL';

const SERVER_A = `
responses:
  - text: "Starting the long command."
    toolCalls: [{ name: exec_command, arguments: { command: "echo $$ > long.pid; exec sleep 30", yield_after_ms: 60000 } }]
`;
const SERVER_B = `
responses:
  - text: "continued on the other server"
`;

let postgres: ThrowawayPostgres;
let schema: string;
const environments: TestEnvironment[] = [];
const servers: ServeProcess[] = [];
const standbys: ServeProcess[] = [];
const clients: RuntimeClient[] = [];
const leftovers: number[] = [];

beforeAll(async () => {
  postgres = await startTestPostgres();
}, 120_000);

afterAll(async () => {
  await postgres?.stop();
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const server of [...servers.splice(0), ...standbys.splice(0)]) await server.stop();
  for (const pid of leftovers.splice(0)) killQuietly(pid);
  for (const environment of environments.splice(0)) await environment.dispose();
  await dropTestSchema(postgres, schema);
});

async function environmentOn(script: string): Promise<TestEnvironment> {
  const environment = await createTestEnvironment(script);
  environments.push(environment);
  environment.env[VARIABLE] = postgres.connectionString;
  writeFileSync(path.join(environment.paths.configDir, 'storage.yaml'), `backend: postgres\npostgres:\n  connectionString: env:${VARIABLE}\n  schema: ${schema}\n`);
  return environment;
}

async function connect(server: ServeProcess): Promise<{ client: RuntimeClient; events: AnyNotification[] }> {
  const client = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: 'failover' });
  clients.push(client);
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  return { client, events };
}

function itemSeqs(events: AnyNotification[], sessionId: string): { seq: number; kind: string }[] {
  return events.flatMap((event) => (event.method === 'item/completed' && event.params.sessionId === sessionId ? [{ seq: event.params.seq, kind: event.params.item.kind }] : []));
}

it('a standby server takes a killed server\'s conversations over: interrupted turn recorded, resubscription without a gap, a new turn runs', async () => {
  schema = await createTestSchema(postgres);
  const environmentA = await environmentOn(SERVER_A);
  const environmentB = await environmentOn(SERVER_B);
  const serverA = await startServe(environmentA);
  servers.push(serverA);
  const onA = await connect(serverA);
  const { conversation, session } = await onA.client.request('conversation/create', { cwd: environmentA.workDir });
  await onA.client.request('conversation/subscribe', { conversationId: conversation.id });
  await onA.client.request('session/input', { conversationId: conversation.id, input: 'run it' });
  leftovers.push(Number(await waitForFileContent(path.join(environmentA.workDir, 'long.pid'))));
  await expect.poll(() => itemSeqs(onA.events, session.id).length).toBeGreaterThan(0);
  const seenOnA = itemSeqs(onA.events, session.id);
  const lastSeenSeq = Math.max(...seenOnA.map((item) => item.seq));

  // B starts while A is active: it stands by without serving.
  const standby = startStandby(environmentB);
  await expect.poll(() => standby.output(), { timeout: 15_000 }).toContain('standing by');
  expect(await findServer(environmentB.paths)).toBeUndefined();

  serverA.child.kill('SIGKILL');
  await serverA.stop();
  const serverB = await standby.ready;

  const onB = await connect(serverB);
  const listed = await onB.client.request('conversation/list', {});
  expect(listed.conversations.map((summary) => [summary.id, summary.lastTurnStatus])).toEqual([[conversation.id, 'interrupted']]);
  const subscribed = await onB.client.request('conversation/subscribe', { conversationId: conversation.id, afterSeq: { [session.id]: lastSeenSeq } });
  expect(subscribed.turns.map((turn) => [turn.status, turn.stopReason])).toEqual([['interrupted', 'crash_recovery']]);
  const head = subscribed.heads[session.id] as number;
  expect(head).toBeGreaterThan(lastSeenSeq);
  await expect.poll(() => itemSeqs(onB.events, session.id).length).toBe(head - lastSeenSeq);
  const replayed = itemSeqs(onB.events, session.id);
  // Every seq after the last one seen on A, in order: no gap, no repeat.
  expect(replayed.map((item) => item.seq)).toEqual(Array.from({ length: head - lastSeenSeq }, (_, index) => lastSeenSeq + 1 + index));
  expect(replayed.at(-1)?.kind).toBe('interruption');

  await onB.client.request('session/input', { conversationId: conversation.id, input: 'go on' });
  await expect.poll(() => onB.events.filter((event) => event.method === 'turn/completed').length, { timeout: 20_000 }).toBe(1);
  const afterTurn = itemSeqs(onB.events, session.id);
  expect(afterTurn.map((item) => item.seq)).toEqual(Array.from({ length: afterTurn.length }, (_, index) => lastSeenSeq + 1 + index));
  const assistant = onB.events.flatMap((event) => (event.method === 'item/completed' && event.params.item.kind === 'assistant_message' ? [event.params.item] : []));
  expect(assistant.at(-1)).toMatchObject({ text: 'continued on the other server' });
}, 90_000);

/** A standby `openvaala serve`: spawned now, `ready` once it serves (it writes its server file). */
function startStandby(environment: TestEnvironment): StartingServe {
  const child = spawn(process.execPath, [CLI_EXECUTABLE, 'serve', '--port', '0'], { env: environment.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const serve: ServeProcess = {
    child,
    info: undefined as unknown as ServeProcess['info'],
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  standbys.push(serve);
  const ready = (async () => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const info = await findServer(environment.paths);
      if (info && info.pid === child.pid) return { ...serve, info };
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the standby server did not start serving: ${output}`);
  })();
  return { ready, output: () => output };
}

interface StartingServe {
  ready: Promise<ServeProcess>;
  output: () => string;
}

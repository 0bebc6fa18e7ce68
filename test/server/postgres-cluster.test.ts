/**
 * Several real `openvaala serve` processes serving one PostgreSQL schema at once
 * (`storage.yaml` `cluster`). A client on server B drives a conversation owned by A (its
 * requests forwarded to A, A's streamed events relayed back); A is killed with SIGKILL in the
 * middle of a turn; B takes the conversation over, records the interrupted turn, runs a new
 * one, and a client that was on A resubscribes on B with `afterSeq` without a gap. Error paths:
 * a wrong cluster secret is refused, and an owner that holds a conversation but cannot be
 * reached gives a clear error until its lock is free, then the conversation is taken over.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { createTestSchema, dropTestSchema, startTestPostgres, type ThrowawayPostgres } from '../helpers/postgres-server.js';

const DATABASE_VARIABLE = 'OPENVAALA_CLUSTER_DATABASE_URL';
const SECRET_VARIABLE = 'OPENVAALA_CLUSTER_SECRET';
const SECRET = 'cluster-secret-for-tests';

const SERVER_A = `
responses:
  - text: "Looking first."
    toolCalls: [{ name: exec_command, arguments: { command: "echo first step" } }]
  - deltas: ["still ", "working ", "on it"]
    holds: [{ afterDeltas: 1, gate: never-opened }]
`;
const SERVER_B = `
responses:
  - text: "continued on the other server"
`;

let postgres: ThrowawayPostgres;
let schema: string;
const environments: TestEnvironment[] = [];
const servers: ServeProcess[] = [];
const clients: RuntimeClient[] = [];
const databaseClients: pg.Client[] = [];

beforeAll(async () => {
  postgres = await startTestPostgres();
}, 120_000);

afterAll(async () => {
  await postgres?.stop();
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const server of servers.splice(0)) await server.stop();
  for (const client of databaseClients.splice(0)) await client.end().catch(() => undefined);
  for (const environment of environments.splice(0)) await environment.dispose();
  await dropTestSchema(postgres, schema);
});

/** A port free now on 127.0.0.1 (the advertised URL must be known before the server starts). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

interface ClusterMember {
  environment: TestEnvironment;
  port: number;
}

async function member(script: string, options: { secret?: string; takeoverTimeoutMs?: number } = {}): Promise<ClusterMember> {
  const environment = await createTestEnvironment(script);
  environments.push(environment);
  const port = await freePort();
  environment.env[DATABASE_VARIABLE] = postgres.connectionString;
  environment.env[SECRET_VARIABLE] = options.secret ?? SECRET;
  writeFileSync(
    path.join(environment.paths.configDir, 'storage.yaml'),
    `backend: postgres
postgres:
  connectionString: env:${DATABASE_VARIABLE}
  schema: ${schema}
cluster:
  advertiseUrl: http://127.0.0.1:${port}
  secret: env:${SECRET_VARIABLE}
  takeoverTimeoutMs: ${options.takeoverTimeoutMs ?? 15_000}
`,
  );
  return { environment, port };
}

async function start(cluster: ClusterMember): Promise<ServeProcess> {
  const server = await startServe(cluster.environment, ['--port', String(cluster.port)]);
  servers.push(server);
  return server;
}

async function connect(server: ServeProcess, name: string): Promise<{ client: RuntimeClient; events: AnyNotification[] }> {
  const client = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: name });
  clients.push(client);
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  return { client, events };
}

function itemSeqs(events: AnyNotification[], sessionId: string): { seq: number; kind: string }[] {
  return events.flatMap((event) => (event.method === 'item/completed' && event.params.sessionId === sessionId ? [{ seq: event.params.seq, kind: event.params.item.kind }] : []));
}

/** Whether the events hold a finished tool call followed by a delta: the held answer of SERVER_A has begun. */
function heldAnswerStreaming(events: AnyNotification[]): boolean {
  const toolCall = events.findIndex((event) => event.method === 'item/completed' && event.params.item.kind === 'tool_call');
  return toolCall >= 0 && events.slice(toolCall).some((event) => event.method === 'item/delta');
}

function consecutive(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, index) => from + index);
}

async function database(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: postgres.connectionString });
  await client.connect();
  databaseClients.push(client);
  return client;
}

it('a client on B drives a conversation owned by A; A is killed; B takes it over without a gap for either client', async () => {
  schema = await createTestSchema(postgres);
  const serverA = await start(await member(SERVER_A));
  const serverB = await start(await member(SERVER_B));

  const onA = await connect(serverA, 'on-a');
  const { conversation, session } = await onA.client.request('conversation/create', { cwd: environments[0]!.workDir });
  await onA.client.request('conversation/subscribe', { conversationId: conversation.id });

  // B serves the conversation by forwarding to A, which owns it (it created it).
  const onB = await connect(serverB, 'on-b');
  const subscribed = await onB.client.request('conversation/subscribe', { conversationId: conversation.id, afterSeq: { [session.id]: 0 } });
  expect(subscribed.conversation.id).toBe(conversation.id);
  await onB.client.request('session/input', { conversationId: conversation.id, input: 'work on it' });
  const owners = await (await database()).query(`SELECT url FROM ${schema}.conversation_owners WHERE conversation_id = $1`, [conversation.id]);
  expect(owners.rows).toEqual([{ url: serverA.info.url }]);

  // A's streamed events reach B's client: the finished tool call, then the held answer's first delta.
  await expect.poll(() => heldAnswerStreaming(onB.events), { timeout: 20_000 }).toBe(true);
  expect(itemSeqs(onB.events, session.id).map((item) => item.kind)).toEqual(['user_message', 'assistant_message', 'tool_call']);
  await expect.poll(() => itemSeqs(onA.events, session.id).length).toBe(3);
  const lastSeenOnA = Math.max(...itemSeqs(onA.events, session.id).map((item) => item.seq));

  serverA.child.kill('SIGKILL');
  await serverA.stop();

  // B's client keeps its subscription: the takeover's interruption arrives next, in order.
  await expect.poll(() => itemSeqs(onB.events, session.id).at(-1)?.kind, { timeout: 20_000 }).toBe('interruption');
  expect(serverB.output()).toContain('took a conversation over');
  const listed = await onB.client.request('conversation/list', {});
  expect(listed.conversations.map((summary) => [summary.id, summary.lastTurnStatus])).toEqual([[conversation.id, 'interrupted']]);
  const turns = (await onB.client.request('conversation/get', { conversationId: conversation.id })).turns;
  expect(turns.map((turn) => [turn.status, turn.stopReason])).toEqual([['interrupted', 'crash_recovery']]);

  // A new turn runs, now on B.
  const completedBefore = onB.events.filter((event) => event.method === 'turn/completed').length;
  await onB.client.request('session/input', { conversationId: conversation.id, input: 'go on' });
  await expect.poll(() => onB.events.filter((event) => event.method === 'turn/completed').length, { timeout: 20_000 }).toBe(completedBefore + 1);
  const seenOnB = itemSeqs(onB.events, session.id);
  expect(seenOnB.map((item) => item.seq)).toEqual(consecutive(1, seenOnB.length));
  expect(seenOnB.map((item) => item.kind)).toEqual(['user_message', 'assistant_message', 'tool_call', 'interruption', 'user_message', 'assistant_message']);

  // The client that was on A comes back on B: everything after what it had, once, in order.
  const back = await connect(serverB, 'back-from-a');
  const resubscribed = await back.client.request('conversation/subscribe', { conversationId: conversation.id, afterSeq: { [session.id]: lastSeenOnA } });
  const head = resubscribed.heads[session.id] as number;
  expect(head).toBe(seenOnB.length);
  await expect.poll(() => itemSeqs(back.events, session.id).length).toBe(head - lastSeenOnA);
  expect(itemSeqs(back.events, session.id).map((item) => item.seq)).toEqual(consecutive(lastSeenOnA + 1, head - lastSeenOnA));
  const assistant = back.events.flatMap((event) => (event.method === 'item/completed' && event.params.item.kind === 'assistant_message' ? [event.params.item] : []));
  expect(assistant.at(-1)).toMatchObject({ text: 'continued on the other server' });
}, 120_000);

it('refuses a wrong cluster secret, and an unreachable owner gives a clear error until its lock is free', async () => {
  schema = await createTestSchema(postgres);
  const serverA = await start(await member(SERVER_B));
  const port = Number(serverA.info.url.split(':').at(-1));

  // The internal endpoint refuses a peer without the shared secret.
  const refused = await new Promise<number>((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/openvaala-cluster`, { headers: { authorization: 'Bearer not-the-secret' } });
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.once('open', () => reject(new Error('the cluster endpoint accepted a wrong secret')));
    socket.once('error', reject);
  });
  expect(refused).toBe(401);

  // A server configured with another secret cannot reach the owner: the client is told why.
  const onA = await connect(serverA, 'on-a');
  const { conversation } = await onA.client.request('conversation/create', { cwd: environments[0]!.workDir });
  await onA.client.request('conversation/subscribe', { conversationId: conversation.id });
  await onA.client.request('session/input', { conversationId: conversation.id, input: 'hello' });
  await expect.poll(() => onA.events.filter((event) => event.method === 'turn/completed').length, { timeout: 20_000 }).toBe(1);
  const misconfigured = await start(await member(SERVER_B, { secret: 'another-secret', takeoverTimeoutMs: 500 }));
  const onMisconfigured = await connect(misconfigured, 'misconfigured');
  await expect(onMisconfigured.client.request('conversation/get', { conversationId: conversation.id })).rejects.toThrow(/owned by another server of the cluster, which cannot be reached: .*refused the cluster secret \(401\)/);

  // Asking for a conversation that does not exist leaves no claim behind.
  await expect(onMisconfigured.client.request('conversation/get', { conversationId: 'conv_doesnotexist' })).rejects.toThrow(/conversation "conv_doesnotexist" does not exist/);
  const leftOwners = await (await database()).query(`SELECT count(*)::int AS count FROM ${schema}.conversation_owners WHERE conversation_id = 'conv_doesnotexist'`);
  expect(leftOwners.rows[0].count).toBe(0);

  // A stops cleanly (its conversations are released); a server that cannot be reached holds the conversation.
  await serverA.stop();
  const holder = await database();
  await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`openvaala:${schema}:${conversation.id}`]);
  await holder.query(`INSERT INTO ${schema}.conversation_owners (conversation_id, server_id, url, since) VALUES ($1, 'server_gone', 'http://127.0.0.1:1', 0)`, [conversation.id]);
  const error = await onMisconfigured.client.request('conversation/get', { conversationId: conversation.id }).then(
    () => undefined,
    (failure: unknown) => failure as { code: number; message: string; data?: unknown },
  );
  expect(error?.code).toBe(-32009);
  expect(error?.data).toEqual({ reason: 'owner_unreachable' });
  expect(error?.message).toMatch(/conversation\/get: conversation .* is owned by another server of the cluster, which cannot be reached: the server at http:\/\/127\.0\.0\.1:1 cannot be reached: .*ECONNREFUSED/);

  // Once the holder's session ends, the next request takes the conversation over.
  await holder.end();
  const taken = await onMisconfigured.client.request('conversation/get', { conversationId: conversation.id });
  expect(taken.turns.map((turn) => turn.status)).toEqual(['completed']);
  const owners = await (await database()).query(`SELECT url FROM ${schema}.conversation_owners WHERE conversation_id = $1`, [conversation.id]);
  expect(owners.rows).toEqual([{ url: misconfigured.info.url }]);
}, 120_000);

it('an owner stopping cleanly interrupts its turn; the server relaying it takes the subscription over without repeating an item; list changes cross servers', async () => {
  schema = await createTestSchema(postgres);
  const serverA = await start(await member(SERVER_A));
  const serverB = await start(await member(SERVER_B));
  const onA = await connect(serverA, 'on-a');
  const onB = await connect(serverB, 'on-b');
  // B's list feed hears of what A changes in the index (through NOTIFY).
  await onB.client.request('conversations/subscribe', {});
  const { conversation, session } = await onA.client.request('conversation/create', { cwd: environments[0]!.workDir });
  await onB.client.request('conversation/subscribe', { conversationId: conversation.id });
  await onB.client.request('session/input', { conversationId: conversation.id, input: 'work on it' });
  await expect.poll(() => itemSeqs(onB.events, session.id).length, { timeout: 20_000 }).toBe(3);
  const listed = () => onB.events.flatMap((event) => (event.method === 'conversation/created' || event.method === 'conversation/updated' ? [event] : []));
  await expect.poll(() => listed().some((event) => event.method === 'conversation/created' && event.params.conversation.id === conversation.id), { timeout: 20_000 }).toBe(true);
  await expect.poll(() => listed().some((event) => event.params.summary?.running === true), { timeout: 20_000 }).toBe(true);
  // A stops only once the held answer has streamed its first delta: that part is what the
  // interrupted turn must keep.
  await expect.poll(() => heldAnswerStreaming(onB.events), { timeout: 20_000 }).toBe(true);

  await serverA.stop();
  // The interruption (reason shutdown) came over the link before A released the conversation.
  await expect.poll(() => itemSeqs(onB.events, session.id).at(-1)?.kind, { timeout: 20_000 }).toBe('interruption');
  await expect.poll(() => serverB.output(), { timeout: 20_000 }).toContain('took a conversation over');
  const completedBefore = onB.events.filter((event) => event.method === 'turn/completed').length;
  await onB.client.request('session/input', { conversationId: conversation.id, input: 'go on' });
  await expect.poll(() => onB.events.filter((event) => event.method === 'turn/completed').length, { timeout: 20_000 }).toBe(completedBefore + 1);
  const seen = itemSeqs(onB.events, session.id);
  expect(seen.map((item) => item.seq)).toEqual(consecutive(1, seen.length));
  // The held answer's streamed part is kept as an assistant message when the turn is interrupted at shutdown.
  expect(seen.map((item) => item.kind)).toEqual(['user_message', 'assistant_message', 'tool_call', 'assistant_message', 'interruption', 'user_message', 'assistant_message']);
  const turns = (await onB.client.request('conversation/get', { conversationId: conversation.id })).turns;
  expect(turns.map((turn) => [turn.status, turn.stopReason])).toEqual([['interrupted', 'shutdown'], ['completed', 'end_turn']]);
  // B's own change after the takeover reaches its list feed too: the conversation is no longer running.
  await expect.poll(() => listed().at(-1)?.params.summary?.running, { timeout: 20_000 }).toBe(false);
}, 120_000);

/**
 * No stale `running` state after a crash: a real `openvaala serve` is killed with SIGKILL in
 * the middle of a turn; the next start (or `openvaala reindex`) records the turn interrupted
 * (crash_recovery) before any client opens the conversation, so the listing never shows it
 * running. A missing or damaged `metadata.db` is rebuilt on start, with a log line.
 */
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createTestEnvironment, runCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { itemsOnDisk, killQuietly, turnsOnDisk, waitForFileContent } from './crash-helpers.js';

const LONG_TURN = `
responses:
  - text: "Starting the long command."
    toolCalls: [{ name: exec_command, arguments: { command: "echo $$ > long.pid; exec sleep 30", yield_after_ms: 60000 } }]
  - text: "after the restart"
`;

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
const clients: RuntimeClient[] = [];
const leftovers: number[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await serve?.stop();
  for (const pid of leftovers.splice(0)) killQuietly(pid);
  await environment?.dispose();
  serve = undefined;
  environment = undefined;
});

async function connect(server: ServeProcess): Promise<RuntimeClient> {
  const client = await RuntimeClient.connect({ url: server.info.url, token: server.info.token, clientName: 'stale-running' });
  clients.push(client);
  return client;
}

/** Starts a turn running a long command and kills the server with SIGKILL while it runs. */
async function crashDuringTurn(env: TestEnvironment): Promise<{ conversationId: string; sessionId: string }> {
  serve = await startServe(env);
  const client = await connect(serve);
  const { conversation, session } = await client.request('conversation/create', { cwd: env.workDir });
  await client.request('session/input', { conversationId: conversation.id, input: 'run it' });
  leftovers.push(Number(await waitForFileContent(path.join(env.workDir, 'long.pid'))));
  expect((await client.request('conversation/list', {})).conversations[0]?.lastTurnStatus).toBe('running');
  serve.child.kill('SIGKILL');
  await serve.stop();
  serve = undefined;
  return { conversationId: conversation.id, sessionId: session.id };
}

describe('turns of a server that died', () => {
  it('are recorded interrupted on the next start, before any client opens the conversation', async () => {
    environment = await createTestEnvironment(LONG_TURN);
    const { conversationId, sessionId } = await crashDuringTurn(environment);
    expect([...turnsOnDisk(environment.paths.dataDir, conversationId).values()].map((turn) => turn.status)).toEqual(['running']);

    serve = await startServe(environment);
    // Recorded by the start itself: the logs say so before any request names the conversation.
    const turns = [...turnsOnDisk(environment.paths.dataDir, conversationId).values()];
    expect(turns).toMatchObject([{ status: 'interrupted', stopReason: 'crash_recovery', error: 'the server stopped during this turn' }]);
    expect(itemsOnDisk(environment.paths.dataDir, conversationId, sessionId).at(-1)).toMatchObject({ kind: 'interruption', reason: 'crash_recovery' });
    expect(serve.output()).toContain('turns left running by a server that stopped were recorded as interrupted');

    const client = await connect(serve);
    const listing = await client.request('conversation/list', {});
    expect(listing.conversations.map((summary) => summary.lastTurnStatus)).toEqual(['interrupted']);
    // Opening it adds no second marker.
    await client.request('conversation/get', { conversationId });
    const markers = itemsOnDisk(environment.paths.dataDir, conversationId, sessionId).filter((item) => item.kind === 'interruption');
    expect(markers).toHaveLength(1);
  });

  it('are recorded interrupted by `openvaala reindex`', async () => {
    environment = await createTestEnvironment(LONG_TURN);
    const { conversationId, sessionId } = await crashDuringTurn(environment);
    const result = await runCli(['reindex'], { env: environment.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('recorded 1 turn left running by a stopped server as interrupted');
    expect([...turnsOnDisk(environment.paths.dataDir, conversationId).values()].map((turn) => [turn.status, turn.stopReason])).toEqual([['interrupted', 'crash_recovery']]);
    expect(itemsOnDisk(environment.paths.dataDir, conversationId, sessionId).at(-1)).toMatchObject({ kind: 'interruption', reason: 'crash_recovery' });

    serve = await startServe(environment);
    const client = await connect(serve);
    expect((await client.request('conversation/list', {})).conversations.map((summary) => summary.lastTurnStatus)).toEqual(['interrupted']);
    expect(serve.output()).not.toContain('recorded as interrupted');
  });
});

describe('metadata.db', () => {
  const ONE_TURN = `
responses:
  - text: "hello"
`;

  /** A data directory with one conversation whose turn completed, and no server running. */
  async function oneConversation(): Promise<{ env: TestEnvironment; conversationId: string }> {
    const env = await createTestEnvironment(ONE_TURN);
    environment = env;
    serve = await startServe(env);
    const client = await connect(serve);
    const { conversation } = await client.request('conversation/create', { cwd: env.workDir, title: 'kept through a rebuild' });
    const done = new Promise<void>((resolve) => client.onNotification((event) => event.method === 'turn/completed' && resolve()));
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'hi' });
    await done;
    await serve.stop();
    serve = undefined;
    return { env, conversationId: conversation.id };
  }

  it('is rebuilt from the logs on start when it is missing, with a log line', async () => {
    const { env, conversationId } = await oneConversation();
    for (const suffix of ['', '-wal', '-shm']) rmSync(path.join(env.paths.dataDir, `metadata.db${suffix}`), { force: true });
    serve = await startServe(env);
    expect(serve.output()).toContain('metadata.db was missing: rebuilt from the conversation logs');
    const client = await connect(serve);
    const listing = await client.request('conversation/list', {});
    expect(listing.conversations).toMatchObject([{ id: conversationId, title: 'kept through a rebuild', lastTurnStatus: 'completed' }]);
    expect((await client.request('conversation/list', { query: 'hello' })).conversations.map((summary) => summary.id)).toEqual([conversationId]);
  });

  it('is moved aside and rebuilt on start when it is damaged, with a log line', async () => {
    const { env, conversationId } = await oneConversation();
    const file = path.join(env.paths.dataDir, 'metadata.db');
    for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    writeFileSync(file, 'this is not a SQLite database '.repeat(200));
    serve = await startServe(env);
    expect(serve.output()).toContain('metadata.db was damaged: moved to metadata.db.damaged and rebuilt from the conversation logs');
    expect(readFileSync(path.join(env.paths.dataDir, 'metadata.db.damaged'), 'utf8')).toContain('this is not a SQLite database');
    const client = await connect(serve);
    expect((await client.request('conversation/list', {})).conversations).toMatchObject([{ id: conversationId, lastTurnStatus: 'completed' }]);
  });

  it('is marked open while a server uses it, and trusted after a clean stop or a killed server', async () => {
    const { env, conversationId } = await oneConversation();
    const marker = path.join(env.paths.dataDir, 'metadata.db.open');
    expect(existsSync(marker)).toBe(false);
    serve = await startServe(env);
    expect(existsSync(marker)).toBe(true);
    // A killed process loses no commit of a WAL database: the index is used as it is.
    const killed = new Promise((resolve) => serve?.child.once('exit', resolve));
    serve.child.kill('SIGKILL');
    await killed;
    serve = await startServe(env);
    expect(serve.output()).not.toContain('rebuilt');
    const client = await connect(serve);
    expect((await client.request('conversation/list', { query: 'hello' })).conversations.map((summary) => summary.id)).toEqual([conversationId]);
  });

  it('is rebuilt when it was open as the operating system stopped (marker older than the boot), with a log line', async () => {
    const { env, conversationId } = await oneConversation();
    const marker = path.join(env.paths.dataDir, 'metadata.db.open');
    writeFileSync(marker, '1\n');
    const beforeBoot = (Date.now() - os.uptime() * 1000 - 3_600_000) / 1000;
    utimesSync(marker, beforeBoot, beforeBoot);
    serve = await startServe(env);
    expect(serve.output()).toContain('metadata.db was open when the operating system stopped, so its last writes may be missing: rebuilt from the conversation logs');
    const client = await connect(serve);
    expect((await client.request('conversation/list', {})).conversations).toMatchObject([{ id: conversationId, lastTurnStatus: 'completed' }]);
  });

  it('is not rebuilt (and nothing is logged) for a new data directory', async () => {
    environment = await createTestEnvironment(ONE_TURN);
    serve = await startServe(environment);
    expect(existsSync(path.join(environment.paths.dataDir, 'metadata.db'))).toBe(true);
    expect(serve.output()).not.toContain('rebuilt');
  });
});

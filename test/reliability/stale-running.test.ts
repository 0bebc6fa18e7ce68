/**
 * No stale `running` state after a crash: a real `openvaala serve` is killed with SIGKILL in
 * the middle of a turn; the next start (or `openvaala reindex`) records the turn interrupted
 * (crash_recovery) before any client opens the conversation, so the listing never shows it
 * running. A missing or damaged `metadata.db` is rebuilt on start, with a log line; a damaged
 * `platform.db` or `schedules.db`, which cannot be rebuilt, stops the start with what to do and
 * is left as it is.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
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

/** A data directory with one conversation (titled `title`) whose turn completed, and no server running. */
async function oneConversation(title = 'kept through a rebuild'): Promise<{ env: TestEnvironment; conversationId: string }> {
  const env = await createTestEnvironment('responses:\n  - text: "hello"\n');
  environment = env;
  serve = await startServe(env);
  const client = await connect(serve);
  const { conversation } = await client.request('conversation/create', { cwd: env.workDir, title });
  const done = new Promise<void>((resolve) => client.onNotification((event) => event.method === 'turn/completed' && resolve()));
  await client.request('conversation/subscribe', { conversationId: conversation.id });
  await client.request('session/input', { conversationId: conversation.id, input: 'hi' });
  await done;
  await serve.stop();
  serve = undefined;
  return { env, conversationId: conversation.id };
}

describe('metadata.db', () => {
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
    environment = await createTestEnvironment('responses:\n  - text: "hello"\n');
    serve = await startServe(environment);
    expect(existsSync(path.join(environment.paths.dataDir, 'metadata.db'))).toBe(true);
    expect(serve.output()).not.toContain('rebuilt');
  });
});

describe('platform.db and schedules.db', () => {
  // Neither is an index of the logs: their records exist nowhere else, so neither is moved aside by the server.
  const DATABASES = [
    { name: 'platform.db', holds: 'it holds the projects with their members, conversation bindings and encrypted secrets', without: 'move it aside to start without them (the conversations themselves are kept, outside any project)' },
    { name: 'schedules.db', holds: 'it holds the scheduled tasks and the record of their runs', without: 'move it aside to start without the scheduled tasks' },
  ];
  const DAMAGE = [
    { kind: 'holds garbage bytes', problem: 'is damaged (SQLite: file is not a database)', make: (file: string) => writeFileSync(file, 'this is not a SQLite database '.repeat(200)) },
    {
      kind: 'is a directory',
      problem: 'is a directory, not a database file',
      make: (file: string) => {
        mkdirSync(file);
        writeFileSync(path.join(file, 'kept.txt'), 'inside\n');
      },
    },
  ];

  /** The bytes of a file, or of every file under a directory by path. */
  function contents(file: string): Map<string, string> {
    if (!statSync(file).isDirectory()) return new Map([[file, readFileSync(file, 'base64')]]);
    const found = new Map<string, string>();
    for (const entry of readdirSync(file, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) found.set(path.join(entry.parentPath, entry.name), readFileSync(path.join(entry.parentPath, entry.name), 'base64'));
    }
    return found;
  }

  for (const database of DATABASES) {
    for (const damage of DAMAGE) {
      it(`stop the start when ${database.name} ${damage.kind} (platform mode off), saying what to do, and are left as they are`, async () => {
        const { env, conversationId } = await oneConversation('outlives the database');
        const file = path.join(env.paths.dataDir, database.name);
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
        damage.make(file);
        const before = contents(file);

        const refused = await runCli(['serve', '--port', '0'], { env: env.env, timeoutMs: 30_000 });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain(`${file} ${damage.problem}. ${database.name} cannot be rebuilt: ${database.holds}`);
        expect(refused.stderr).toContain('The server does not start without it, and does not move or replace it.');
        expect(refused.stderr).toContain(`Restore ${database.name} from a backup of the data directory (with the server stopped), or ${database.without}`);
        expect(refused.stderr).toContain(`\n  mv ${file} ${file}.damaged\n`);
        // The damaged file was neither moved, removed nor rewritten.
        expect(contents(file)).toEqual(before);
        expect(readdirSync(env.paths.dataDir).filter((name) => name.includes('.damaged'))).toEqual([]);

        // The way on it gives works, and keeps the damaged file and the conversations.
        const moves = [...refused.stderr.matchAll(/^ {2}mv (\S+) (\S+)$/gm)];
        expect(moves.length).toBeGreaterThan(0);
        for (const [, from, to] of moves) renameSync(from as string, to as string);
        serve = await startServe(env);
        const again = await connect(serve);
        expect((await again.request('conversation/list', {})).conversations.map((summary) => summary.id)).toEqual([conversationId]);
        expect(existsSync(`${file}.damaged`)).toBe(true);
        expect(statSync(file).isFile()).toBe(true);
      });
    }
  }
});

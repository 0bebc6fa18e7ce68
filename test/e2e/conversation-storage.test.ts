/**
 * Storage behaviour of the real `openvaala serve` process (SPEC §4): a conversation that never
 * received input leaves nothing on disk and is gone after a restart; one that did is on disk,
 * listed and searchable, also after a restart and after `openvaala reindex`.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createTestEnvironment, runCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

const SCRIPT = `
responses:
  - text: "The flamingo migration is done."
`;

let environment: TestEnvironment;
let serve: ServeProcess | undefined;
let client: RuntimeClient | undefined;

async function connect(): Promise<RuntimeClient> {
  await client?.close();
  serve ??= await startServe(environment);
  client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'storage-test' });
  return client;
}

async function restart(): Promise<RuntimeClient> {
  await client?.close();
  client = undefined;
  expect(await serve?.stop()).toBe(0);
  serve = undefined;
  return connect();
}

/** Rows for a conversation in metadata.db, read with a separate read-only connection. */
function indexRows(conversationId: string): { records: number; search: number } {
  const database = new Database(path.join(environment.paths.dataDir, 'metadata.db'), { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string): number => (database.prepare(sql).get(conversationId) as { count: number }).count;
    return {
      records: count('SELECT count(*) AS count FROM records_conversations WHERE key = ?'),
      search: count('SELECT count(*) AS count FROM conversation_search WHERE conversation_id = ?'),
    };
  } finally {
    database.close();
  }
}

async function ids(connection: RuntimeClient, query?: string): Promise<string[]> {
  return (await connection.request('conversation/list', query === undefined ? {} : { query })).conversations.map((entry) => entry.id);
}

beforeEach(async () => {
  environment = await createTestEnvironment(SCRIPT);
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  await serve?.stop();
  serve = undefined;
  await environment.dispose();
});

describe('conversation storage in openvaala serve', () => {
  it('keeps a conversation without input off the disk, even across a restart; one with input is durable, listed and searchable', async () => {
    let connection = await connect();
    const empty = (await connection.request('conversation/create', { cwd: environment.workDir, title: 'Unused pelican plan' })).conversation;
    const used = (await connection.request('conversation/create', { cwd: environment.workDir, title: 'Used conversation' })).conversation;
    const events: AnyNotification[] = [];
    connection.onNotification((event) => events.push(event));
    await connection.request('conversation/subscribe', { conversationId: used.id });
    await connection.request('session/input', { conversationId: used.id, input: 'Migrate the flamingo table' });
    const deadline = Date.now() + 20_000;
    while (!events.some((event) => event.method === 'turn/completed') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events.some((event) => event.method === 'turn/completed')).toBe(true);

    const conversations = path.join(environment.paths.dataDir, 'conversations');
    expect(existsSync(path.join(conversations, empty.id))).toBe(false);
    expect(existsSync(path.join(conversations, used.id, 'metadata.jsonl'))).toBe(true);
    expect(indexRows(empty.id)).toEqual({ records: 0, search: 0 });
    expect(indexRows(used.id)).toEqual({ records: 1, search: 1 });

    // The live server still shows the staged conversation, by listing, get, items and search.
    expect((await ids(connection)).sort()).toEqual([empty.id, used.id].sort());
    expect((await connection.request('conversation/get', { conversationId: empty.id })).conversation.title).toBe('Unused pelican plan');
    expect((await connection.request('items/list', { conversationId: empty.id })).items).toEqual([]);
    expect(await ids(connection, 'pelican')).toEqual([empty.id]);
    expect(await ids(connection, 'flamingo')).toEqual([used.id]);
    expect(await ids(connection, 'migrat*')).toEqual([used.id]);

    connection = await restart();
    const missing = await connection.request('conversation/get', { conversationId: empty.id }).catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(RuntimeClientError);
    expect((missing as RuntimeClientError).code).toBe(-32004);
    expect((missing as RuntimeClientError).message).toContain(empty.id);
    expect(await ids(connection)).toEqual([used.id]);
    expect((await connection.request('conversation/get', { conversationId: used.id })).turns.map((turn) => turn.status)).toEqual(['completed']);
    expect(await ids(connection, 'flamingo')).toEqual([used.id]);
    expect(await ids(connection, 'pelican')).toEqual([]);
    expect(existsSync(path.join(conversations, empty.id))).toBe(false);
    expect(indexRows(empty.id)).toEqual({ records: 0, search: 0 });
  });

  it('answers a query with a syntax error with invalidParams naming the field, and an empty query too', async () => {
    allowInvalidSentMessages();
    const connection = await connect();
    const syntax = await connection.request('conversation/list', { query: 'readme OR' }).catch((caught: unknown) => caught);
    expect((syntax as RuntimeClientError).code).toBe(-32602);
    expect((syntax as RuntimeClientError).message).toMatch(/^conversation\/list: params\.query: the query is not valid at its end: AND, OR and NOT need a word on each side/);
    expect((syntax as RuntimeClientError).message).toContain('a word with punctuation (hello-world, file.ts) is searched as a phrase');
    // A word with punctuation is no syntax error: it is searched as a phrase.
    expect(await connection.request('conversation/list', { query: 'readme.md' })).toMatchObject({ conversations: [] });
    const empty = await connection.request('conversation/list', { query: '' }).catch((caught: unknown) => caught);
    expect((empty as RuntimeClientError).code).toBe(-32602);
    expect((empty as RuntimeClientError).message).toBe('conversation/list: params.query: the query is empty');
    const blank = await connection.request('conversation/list', { query: '   ' }).catch((caught: unknown) => caught);
    expect((blank as RuntimeClientError).message).toMatch(/^conversation\/list: params\.query: the query is empty/);
  });

  it('rebuilds the search with openvaala reindex', async () => {
    let connection = await connect();
    const used = (await connection.request('conversation/create', { cwd: environment.workDir, title: 'Reindexed one' })).conversation;
    const events: AnyNotification[] = [];
    connection.onNotification((event) => events.push(event));
    await connection.request('conversation/subscribe', { conversationId: used.id });
    await connection.request('session/input', { conversationId: used.id, input: 'Please handle the walrus case' });
    // The turn's end is the last state a turn records (after the session's return to idle).
    const settled = (): boolean => events.some((event) => event.method === 'turn/completed');
    const deadline = Date.now() + 20_000;
    while (!settled() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled()).toBe(true);
    const before = await connection.request('conversation/list', {});
    await client?.close();
    client = undefined;
    await serve?.stop();
    serve = undefined;
    for (const suffix of ['', '-wal', '-shm']) rmSync(path.join(environment.paths.dataDir, `metadata.db${suffix}`), { force: true });
    const rebuilt = await runCli(['reindex'], { env: environment.env });
    expect(rebuilt.stderr).toBe('');
    expect(rebuilt.stdout).toMatch(/^indexed 1 conversation \(2 items, 2 searchable messages\)/);
    connection = await connect();
    expect(await connection.request('conversation/list', {})).toEqual(before);
    expect(await ids(connection, 'walrus')).toEqual([used.id]);
    expect(await ids(connection, 'flamingo')).toEqual([used.id]);
    expect(await ids(connection, 'reindexed')).toEqual([used.id]);
  });
});

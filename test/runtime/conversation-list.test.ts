/**
 * The conversation list over a real WebSocket against a real server with the mock provider:
 * the live list feed a second client sees, the listing's filters and sorts with their
 * cursors, and a rebuilt index (`openvaala reindex`) listing the same after deletions and
 * archiving.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runReindex } from '../../src/cli/reindex.js';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import { ErrorCodes, type AnyNotification, type ConversationSummary, type MethodParams } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

const SCRIPT = `
responses:
  - text: "first answer"
  - text: "second answer"
  - text: "third answer"
  - text: "fourth answer"
`;

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
const clients: RuntimeClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server?.stop();
  server = undefined;
  await environment?.dispose();
  environment = undefined;
});

async function start(): Promise<void> {
  environment ??= await createTestEnvironment(SCRIPT);
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') });
}

async function connect(name: string): Promise<{ client: RuntimeClient; events: AnyNotification[] }> {
  const client = await RuntimeClient.connect({ url: (server as RunningServer).url, token: (server as RunningServer).token, clientName: name });
  clients.push(client);
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  return { client, events };
}

/** Runs one turn in a conversation and waits until its summary says it is idle again. */
async function runTurn(client: RuntimeClient, conversationId: string, input: string): Promise<void> {
  await client.request('session/input', { conversationId, input });
  await expect.poll(async () => (await client.request('conversation/get', { conversationId })).turns.some((turn) => turn.status === 'completed' && turn.completedAt !== null) && !(await client.request('conversation/get', { conversationId })).sessions.some((session) => session.activeTurnId !== null), { timeout: 10_000 }).toBe(true);
}

/** Every page of a listing, following `nextCursor`. */
async function allPages(client: RuntimeClient, params: MethodParams<'conversation/list'>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request('conversation/list', { ...params, ...(cursor ? { cursor } : {}) });
    ids.push(...page.conversations.map((summary) => summary.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

function feed(events: AnyNotification[], conversationId: string): { method: string; summary?: ConversationSummary }[] {
  return events.flatMap((event): { method: string; summary?: ConversationSummary }[] => {
    if (event.method === 'conversation/created' || event.method === 'conversation/updated') return event.params.conversation.id === conversationId ? [{ method: event.method, ...(event.params.summary ? { summary: event.params.summary } : {}) }] : [];
    if (event.method === 'conversation/deleted') return event.params.conversationId === conversationId ? [{ method: event.method, ...(event.params.summary ? { summary: event.params.summary } : {}) }] : [];
    return [];
  });
}

describe('conversations/subscribe', () => {
  it('shows a second client every creation, rename, archiving, run and deletion', async () => {
    await start();
    const watcher = await connect('watcher');
    const actor = await connect('actor');
    expect(await watcher.client.request('conversations/subscribe', {})).toEqual({});
    const { conversation } = await actor.client.request('conversation/create', { cwd: (environment as TestEnvironment).workDir, title: 'feed test' });
    const id = conversation.id;
    await expect.poll(() => feed(watcher.events, id).map((entry) => entry.method)).toEqual(['conversation/created']);
    expect(feed(watcher.events, id)[0]?.summary).toMatchObject({ id, title: 'feed test', running: false, preview: '', archived: false, executor: 'local' });

    await actor.client.request('conversation/update', { conversationId: id, title: 'renamed' });
    await expect.poll(() => feed(watcher.events, id).at(-1)?.summary?.title).toBe('renamed');
    await actor.client.request('conversation/archive', { conversationId: id });
    await expect.poll(() => feed(watcher.events, id).at(-1)?.summary?.archived).toBe(true);
    await actor.client.request('conversation/unarchive', { conversationId: id });
    await expect.poll(() => feed(watcher.events, id).at(-1)?.summary?.archived).toBe(false);

    await runTurn(actor.client, id, 'what is up');
    await expect.poll(() => feed(watcher.events, id).at(-1)?.summary).toMatchObject({ running: false, preview: 'first answer', lastTurnStatus: 'completed' });
    const summaries = feed(watcher.events, id).flatMap((entry) => (entry.summary ? [entry.summary] : []));
    expect(summaries.some((summary) => summary.running)).toBe(true);
    // A preview shown mid-turn is written at most every 250 ms (test/dao/preview-write-coalescing.test.ts):
    // this turn is faster, so the watcher may see only the answer's.

    await actor.client.request('conversation/delete', { conversationId: id });
    await expect.poll(() => feed(watcher.events, id).at(-1)?.method).toBe('conversation/deleted');
    expect(feed(watcher.events, id).at(-1)?.summary).toMatchObject({ id, title: 'renamed' });
    // The actor never subscribed to the feed: it heard nothing of it.
    expect(actor.events.filter((event) => event.method === 'conversation/created')).toEqual([]);
  });

  it('stops on conversations/unsubscribe', async () => {
    await start();
    const watcher = await connect('watcher');
    await watcher.client.request('conversations/subscribe', {});
    await watcher.client.request('conversations/subscribe', {});
    const first = await watcher.client.request('conversation/create', { cwd: (environment as TestEnvironment).workDir });
    await expect.poll(() => feed(watcher.events, first.conversation.id).length).toBe(1);
    expect(await watcher.client.request('conversations/unsubscribe', {})).toEqual({});
    const second = await watcher.client.request('conversation/create', { cwd: (environment as TestEnvironment).workDir });
    await watcher.client.request('conversation/update', { conversationId: first.conversation.id, title: 'quiet' });
    await watcher.client.request('conversation/get', { conversationId: second.conversation.id });
    expect(feed(watcher.events, second.conversation.id)).toEqual([]);
    expect(feed(watcher.events, first.conversation.id)).toHaveLength(1);
  });
});

describe('conversation/list filters and sorts', () => {
  it('filters by cwd, executor and archived, and pages through both sorts with cursors', async () => {
    allowInvalidSentMessages();
    await start();
    const { client } = await connect('lister');
    const work = (environment as TestEnvironment).workDir;
    const directories = ['alpha', 'beta'].map((name) => path.join(work, name));
    for (const directory of directories) mkdirSync(directory);
    const ids: string[] = [];
    for (const cwd of [directories[0], directories[1], directories[0]] as string[]) {
      ids.push((await client.request('conversation/create', { cwd })).conversation.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const [first, second, third] = ids as [string, string, string];
    // The first one is updated last: the two sorts differ.
    await runTurn(client, first, 'bring me to the top');
    expect(await allPages(client, { limit: 1 })).toEqual([first, third, second]);
    expect(await allPages(client, { limit: 1, sort: 'updated' })).toEqual([first, third, second]);
    expect(await allPages(client, { limit: 1, sort: 'created' })).toEqual([third, second, first]);
    expect(await allPages(client, { limit: 2, sort: 'created', cwd: directories[0] })).toEqual([third, first]);
    expect(await allPages(client, { cwd: directories[1] })).toEqual([second]);
    expect(await allPages(client, { executor: 'local' })).toEqual([first, third, second]);
    expect(await allPages(client, { executor: 'elsewhere' })).toEqual([]);
    await client.request('conversation/archive', { conversationId: third });
    expect(await allPages(client, { limit: 1 })).toEqual([first, second]);
    expect(await allPages(client, { archived: true })).toEqual([third]);
    expect(await allPages(client, { archived: false, sort: 'created' })).toEqual([second, first]);

    const page = await client.request('conversation/list', { limit: 1, sort: 'created' });
    const wrongSort = await client.request('conversation/list', { cursor: page.nextCursor as string }).then(
      () => undefined,
      (error: unknown) => error as RuntimeClientError,
    );
    expect(wrongSort?.code).toBe(ErrorCodes.invalidParams);
    expect(wrongSort?.message).toContain('params.cursor');
    const searchByCreation = await client.request('conversation/list', { query: 'top', sort: 'created' }).then(
      () => undefined,
      (error: unknown) => error as RuntimeClientError,
    );
    expect(searchByCreation?.code).toBe(ErrorCodes.invalidParams);
    expect(searchByCreation?.message).toContain('params.sort');
    const badSort = await client.request('conversation/list', { sort: 'title' as 'created' }).then(
      () => undefined,
      (error: unknown) => error as RuntimeClientError,
    );
    expect(badSort?.code).toBe(ErrorCodes.invalidParams);
  });

  it('lists the same after openvaala reindex, once conversations were deleted and archived', async () => {
    await start();
    const { client } = await connect('lister');
    const work = (environment as TestEnvironment).workDir;
    const ids: string[] = [];
    for (let count = 0; count < 4; count += 1) {
      const { conversation } = await client.request('conversation/create', { cwd: work, title: `number ${count}` });
      ids.push(conversation.id);
      await runTurn(client, conversation.id, `question ${count}`);
    }
    await client.request('conversation/delete', { conversationId: ids[1] as string });
    await client.request('conversation/archive', { conversationId: ids[2] as string });
    const listings = async (): Promise<unknown> => ({
      active: await client.request('conversation/list', {}),
      archived: await client.request('conversation/list', { archived: true }),
      created: await client.request('conversation/list', { sort: 'created' }),
    });
    const before = await listings();
    expect((before as { active: { conversations: ConversationSummary[] } }).active.conversations.map((summary) => summary.id)).toEqual([ids[3], ids[0]]);
    for (const client of clients.splice(0)) await client.close();
    await (server as RunningServer).stop();
    const outcome = await runReindex((environment as TestEnvironment).paths.dataDir);
    expect(outcome.conversations).toBe(3);
    await start();
    const reconnected = await connect('lister again');
    const after = {
      active: await reconnected.client.request('conversation/list', {}),
      archived: await reconnected.client.request('conversation/list', { archived: true }),
      created: await reconnected.client.request('conversation/list', { sort: 'created' }),
    };
    expect(after).toEqual(before);
    expect((await reconnected.client.request('conversation/get', { conversationId: ids[1] as string }).catch((error: RuntimeClientError) => error)) as RuntimeClientError).toMatchObject({ code: ErrorCodes.notFound });
  });
});

/**
 * The thread and catalog methods of `openvaala app-server` against a real runtime server:
 * `thread/read` (with turns), `thread/list`, `thread/resume`, `thread/fork`, `thread/name/set`,
 * `thread/archive` / `unarchive`, `thread/rollback`, `model/list`, `config/read`. Every message
 * is checked against the schema bundles, except `thread/rollback`, which codex-cli 0.171.0 no
 * longer has (its schema names `thread/revert`, also served).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fromCodexId } from '../../../src/protocol/codex-ids.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { CodexTestClient } from './codex-client.js';
import { CodexSchema } from './codex-schema.js';

const schema = new CodexSchema();
let server: InProcessServer | undefined;
let client: CodexTestClient | undefined;

afterEach(async () => {
  await client?.stop();
  client = undefined;
  await server?.stop();
  server = undefined;
});

type Thread = { id: string; name: string | null; cwd: string; model: string | null; turns: { id: string; status: string; items: { type: string; text?: string }[] }[] };

async function turn(codex: CodexTestClient, threadId: string, text: string): Promise<string> {
  const { turn: started } = await codex.request<{ turn: { id: string } }>('turn/start', { threadId, input: [{ type: 'text', text, text_elements: [] }] });
  await codex.waitFor((msg) => msg.method === 'turn/completed' && (msg.params as { turn: { id: string } }).turn.id === started.id, `turn/completed of ${text}`);
  return started.id;
}

describe('openvaala app-server thread and catalog methods', () => {
  it('reads, lists, resumes, forks, names, archives and rolls back threads; lists models and reads the configuration', async () => {
    server = await startInProcessServer('responses:\n  - text: "first answer"\n  - text: "second answer"\n  - text: "third answer"\n');
    const workDir = server.environment.workDir;
    const codex = (client = await CodexTestClient.start('websocket', server.environment.env, workDir));
    await codex.initialize();

    const models = await codex.request<{ data: { id: string; isDefault: boolean }[] }>('model/list', {});
    expect(models.data.map((model) => [model.id, model.isDefault])).toContainEqual(['mock/mock-model', true]);
    expect(await codex.request('config/read', {})).toEqual({ config: { model: 'mock/mock-model', model_provider: 'mock' }, origins: {} });

    const { thread } = await codex.request<{ thread: Thread }>('thread/start', { cwd: workDir });
    const firstTurn = await turn(codex, thread.id, 'first question');
    const secondTurn = await turn(codex, thread.id, 'second question');

    const read = await codex.request<{ thread: Thread }>('thread/read', { threadId: thread.id, includeTurns: true });
    expect(read.thread).toMatchObject({ id: thread.id, cwd: workDir, model: 'mock/mock-model' });
    expect(read.thread.turns.map((entry) => [entry.id, entry.status, entry.items.map((item) => item.type)])).toEqual([
      [firstTurn, 'completed', ['userMessage', 'agentMessage']],
      [secondTurn, 'completed', ['userMessage', 'agentMessage']],
    ]);
    expect((await codex.request<{ thread: Thread }>('thread/read', { threadId: thread.id })).thread.turns).toEqual([]);

    await codex.request('thread/name/set', { threadId: thread.id, name: 'Named thread' });
    await codex.waitFor((msg) => msg.method === 'thread/name/updated', 'thread/name/updated');
    // Renamed by a runtime client, the followed thread is renamed for the Codex client too.
    await server.client.request('conversation/update', { conversationId: fromCodexId(thread.id, 'conv'), title: 'Renamed elsewhere' });
    await codex.waitFor((msg) => msg.method === 'thread/name/updated' && (msg.params as { threadName: string }).threadName === 'Renamed elsewhere', 'the second thread/name/updated');
    expect(codex.log.filter((entry) => entry.msg.method === 'thread/name/updated').map((entry) => (entry.msg.params as { threadName: string }).threadName)).toEqual(['Named thread', 'Renamed elsewhere']);
    await codex.request('thread/name/set', { threadId: thread.id, name: 'Named thread' });
    const listed = await codex.request<{ data: Thread[] }>('thread/list', {});
    expect(listed.data.map((entry) => [entry.id, entry.name])).toEqual([[thread.id, 'Named thread']]);

    const resumed = await codex.request<{ thread: Thread }>('thread/resume', { threadId: thread.id });
    expect(resumed.thread.turns.map((entry) => entry.id)).toEqual([firstTurn, secondTurn]);

    const forked = await codex.request<{ thread: Thread }>('thread/fork', { threadId: thread.id, lastTurnId: firstTurn });
    expect(forked.thread.id).not.toBe(thread.id);
    expect(forked.thread.turns.flatMap((entry) => entry.items.map((item) => item.text ?? item.type))).toEqual(['userMessage', 'first answer']);
    await codex.waitFor((msg) => msg.method === 'thread/started' && (msg.params as { thread: Thread }).thread.id === forked.thread.id, 'thread/started of the fork');

    await codex.request('thread/archive', { threadId: forked.thread.id });
    expect((await codex.request<{ data: Thread[] }>('thread/list', {})).data.map((entry) => entry.id)).toEqual([thread.id]);
    expect((await codex.request<{ data: Thread[] }>('thread/list', { archived: true })).data.map((entry) => entry.id)).toEqual([forked.thread.id]);
    const unarchived = await codex.request<{ thread: Thread }>('thread/unarchive', { threadId: forked.thread.id });
    expect(unarchived.thread.id).toBe(forked.thread.id);

    // Everything so far is Codex 0.171.0 protocol.
    expect(schema.check(codex.log)).toEqual([]);

    const rolledBack = await codex.request<{ thread: Thread }>('thread/rollback', { threadId: thread.id, numTurns: 1 });
    expect(rolledBack.thread.turns.map((entry) => entry.id)).toEqual([firstTurn]);
    await codex.waitFor((msg) => msg.method === 'thread/reverted', 'thread/reverted');
    const items = await server.client.request('items/list', { conversationId: fromCodexId(thread.id, 'conv') });
    expect(items.items.map(({ item }) => item.turnId)).toEqual([fromCodexId(firstTurn, 'turn'), fromCodexId(firstTurn, 'turn')]);
    await expect(codex.request('thread/revert', { threadId: thread.id, beforeTurnId: firstTurn })).rejects.toThrow(/cannot drop the thread's first turn/);
    await expect(codex.request('thread/rollback', { threadId: thread.id, numTurns: 5 })).rejects.toThrow(/the thread has 1 turns, cannot drop 5/);
  });

  it('forks the whole thread when thread/fork names no lastTurnId, and refuses to fork a thread with no turns naming it', async () => {
    server = await startInProcessServer('responses:\n  - text: "first answer"\n  - text: "second answer"\n');
    const workDir = server.environment.workDir;
    const codex = (client = await CodexTestClient.start('websocket', server.environment.env, workDir));
    await codex.initialize();
    const { thread } = await codex.request<{ thread: Thread }>('thread/start', { cwd: workDir });
    await turn(codex, thread.id, 'first question');
    await turn(codex, thread.id, 'second question');
    for (const params of [{ threadId: thread.id }, { threadId: thread.id, lastTurnId: null }]) {
      const forked = await codex.request<{ thread: Thread }>('thread/fork', params);
      expect(forked.thread.id).not.toBe(thread.id);
      expect(forked.thread.turns.flatMap((entry) => entry.items.map((item) => item.text ?? item.type))).toEqual(['userMessage', 'first answer', 'userMessage', 'second answer']);
    }
    const { thread: empty } = await codex.request<{ thread: Thread }>('thread/start', { cwd: workDir });
    await expect(codex.request('thread/fork', { threadId: empty.id })).rejects.toThrow(/thread\/fork: params\.threadId: thread .* has no turns yet, nothing to fork/);
    expect(schema.check(codex.log)).toEqual([]);
  });

  it('answers the start-up requests of the Codex TUI about features OpenVaala has not with "none", in valid shapes', async () => {
    server = await startInProcessServer('responses: []\n');
    const codex = (client = await CodexTestClient.start('stdio', server.environment.env, server.environment.workDir));
    await codex.initialize();
    expect(await codex.request('account/read', {})).toEqual({ account: null, requiresOpenaiAuth: false });
    for (const method of ['skills/list', 'hooks/list', 'plugin/list', 'plugin/installed', 'app/list', 'mcpServerStatus/list', 'experimentalFeature/list', 'configRequirements/read', 'modelProvider/capabilities/read']) {
      // `configRequirements/read` takes no params at all (its schema has none).
      await codex.request(method, method === 'configRequirements/read' ? undefined : {});
    }
    const { thread } = await codex.request<{ thread: Thread }>('thread/start', {});
    // A thread started without cwd works where the adapter runs; it is loaded on this connection.
    expect(thread.cwd).toBe(server.environment.workDir);
    expect(await codex.request('thread/loaded/list', {})).toEqual({ data: [thread.id], nextCursor: null });
    expect(schema.check(codex.log)).toEqual([]);
  });

  it('starts a thread with a model named without its provider, and refuses an unknown one naming it', async () => {
    server = await startInProcessServer('responses: []\n');
    const codex = (client = await CodexTestClient.start('stdio', server.environment.env, server.environment.workDir));
    await codex.initialize();
    const started = await codex.request<{ model: string; modelProvider: string }>('thread/start', { model: 'mock-model' });
    expect(started).toMatchObject({ model: 'mock/mock-model', modelProvider: 'mock' });
    await expect(codex.request('thread/start', { model: 'gpt-none' })).rejects.toThrow(/thread\/start: params\.model: no configured model named "gpt-none"/);
    expect(schema.check(codex.log)).toEqual([]);
  });
});

/**
 * Scheduled tasks across a real `openvaala serve` killed with SIGKILL between the claim of an
 * occurrence and the delivery of its prompt: the claim is on disk, the prompt is not; the next
 * server takes the stale claim over and the prompt runs exactly once. Also: deleting a
 * conversation through the protocol leaves none of its tasks in `schedules.db`.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../../src/client/runtime-client.js';
import { HOLD_AFTER_CLAIM_VARIABLE, SCHEDULES_DATABASE_FILE } from '../../../src/server/schedules.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../../helpers/environment.js';
import { itemsOnDisk } from '../../reliability/crash-helpers.js';

const SCRIPT = `
responses:
  - text: "scheduled answer"
  - text: "a second answer"
`;

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
let client: RuntimeClient | undefined;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  await serve?.stop();
  await environment?.dispose();
  client = undefined;
  serve = undefined;
  environment = undefined;
});

/** Values of a namespace of `schedules.db`, read directly from the file (read-only). */
function recordsOnDisk(dataDir: string, namespace: string): Record<string, unknown>[] {
  const database = new Database(path.join(dataDir, SCHEDULES_DATABASE_FILE), { readonly: true, fileMustExist: true });
  try {
    return (database.prepare(`SELECT value FROM records_${namespace}`).all() as { value: string }[]).map((row) => JSON.parse(row.value) as Record<string, unknown>);
  } finally {
    database.close();
  }
}

async function connect(serveProcess: ServeProcess): Promise<RuntimeClient> {
  return RuntimeClient.connect({ url: serveProcess.info.url, token: serveProcess.info.token, clientName: 'schedules-test' });
}

describe('scheduled tasks across a server killed with SIGKILL', () => {
  it('an occurrence claimed but not delivered when the server died runs exactly once after restart', async () => {
    environment = await createTestEnvironment(SCRIPT);
    const { paths, workDir } = environment;
    environment.env[HOLD_AFTER_CLAIM_VARIABLE] = '1';
    serve = await startServe(environment);
    client = await connect(serve);
    const { conversation } = await client.request('conversation/create', { cwd: workDir });
    // A conversation is written to disk with its first input; before that a crash would lose it.
    await client.request('session/input', { conversationId: conversation.id, input: 'hello' });
    await expect.poll(() => environment?.mock.requests.length).toBe(1);
    // Due at once even when the request arrives after its instant (a loaded machine).
    const { task } = await client.request('schedules/create', { conversationId: conversation.id, name: 'nightly', prompt: 'run the nightly check', schedule: { kind: 'once', at: Date.now() + 300 } });
    expect(task).toMatchObject({ enabled: true, createdByAgent: false, nextRunAt: expect.any(Number) });

    // The claim is on disk; the held server never delivers the prompt.
    await expect.poll(() => recordsOnDisk(paths.dataDir, 'schedule_runs').map((run) => run.status), { timeout: 15_000 }).toEqual(['claimed']);
    const rootSessionId = conversation.rootSessionId;
    const scheduledPrompts = () => itemsOnDisk(paths.dataDir, conversation.id, rootSessionId).filter((item) => item.kind === 'user_message' && JSON.stringify(item).includes('run the nightly check'));
    expect(scheduledPrompts()).toHaveLength(0);

    serve.child.kill('SIGKILL');
    await serve.stop();
    await client.close();
    client = undefined;

    delete environment.env[HOLD_AFTER_CLAIM_VARIABLE];
    serve = await startServe(environment);
    client = await connect(serve);
    const connected = client;
    await expect.poll(async () => (await connected.request('schedules/history', { taskId: task.id })).runs.map((run) => `${run.status} ${run.error ?? ''}`.trim()), { timeout: 15_000 }).toEqual(['completed']);
    const { runs } = await client.request('schedules/history', { taskId: task.id });
    expect(runs[0]).toMatchObject({ trigger: 'schedule', attempts: 1, turnId: expect.any(String) });
    expect(scheduledPrompts()).toHaveLength(1);
    expect(environment.mock.requests.length).toBe(2);
  });

  it('a task set on a conversation that has had no input yet keeps its conversation across a restart', async () => {
    environment = await createTestEnvironment(SCRIPT);
    const { workDir } = environment;
    serve = await startServe(environment);
    client = await connect(serve);
    // A new conversation lives in memory until its first input; the task is its first use.
    const { conversation } = await client.request('conversation/create', { cwd: workDir, title: 'nightly checks' });
    const { task } = await client.request('schedules/create', { conversationId: conversation.id, name: 'nightly', prompt: 'run the nightly check', schedule: { kind: 'cron', expression: '0 3 * * *', timeZone: 'UTC' } });

    await serve.stop();
    await client.close();
    serve = await startServe(environment);
    client = await connect(serve);
    expect((await client.request('conversation/get', { conversationId: conversation.id })).conversation).toMatchObject({ id: conversation.id, title: 'nightly checks' });
    expect((await client.request('schedules/list', { conversationId: conversation.id })).tasks.map((listed) => listed.id)).toEqual([task.id]);
    await client.request('schedules/runNow', { taskId: task.id });
    await expect.poll(async () => (await connected(client).request('schedules/history', { taskId: task.id })).runs[0]?.status, { timeout: 15_000 }).toBe('completed');
  });

  it('deleting a conversation deletes its tasks and their runs from schedules.db', async () => {
    environment = await createTestEnvironment(SCRIPT);
    const { paths, workDir } = environment;
    serve = await startServe(environment);
    client = await connect(serve);
    const { conversation } = await client.request('conversation/create', { cwd: workDir });
    const { conversation: other } = await client.request('conversation/create', { cwd: workDir });
    const { task } = await client.request('schedules/create', { conversationId: conversation.id, name: 'hourly', prompt: 'p', schedule: { kind: 'cron', expression: '0 * * * *', timeZone: 'Europe/Helsinki' } });
    await client.request('schedules/create', { conversationId: conversation.id, name: 'later', prompt: 'p', schedule: { kind: 'once', at: Date.now() + 3_600_000 } });
    await client.request('schedules/create', { conversationId: other.id, name: 'kept', prompt: 'p', schedule: { kind: 'interval', everyMs: 3_600_000 } });
    await client.request('schedules/runNow', { taskId: task.id });
    await expect.poll(async () => (await connected(client).request('schedules/history', { taskId: task.id })).runs[0]?.status, { timeout: 15_000 }).toBe('completed');
    expect(recordsOnDisk(paths.dataDir, 'schedule_runs')).toHaveLength(1);

    await client.request('conversation/delete', { conversationId: conversation.id });
    expect(recordsOnDisk(paths.dataDir, 'schedule_tasks').map((stored) => stored.conversationId)).toEqual([other.id]);
    expect(recordsOnDisk(paths.dataDir, 'schedule_runs')).toEqual([]);
    await expect(client.request('schedules/history', { taskId: task.id })).rejects.toThrow(/schedules\/history: params\.taskId: scheduled task "task_\w+" does not exist/);
  });
});

function connected(value: RuntimeClient | undefined): RuntimeClient {
  if (!value) throw new Error('not connected');
  return value;
}

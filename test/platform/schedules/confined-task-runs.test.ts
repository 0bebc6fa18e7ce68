/**
 * A member's scheduled task is held, at each run, to the checks the member's own turn goes
 * through at use (docs/platform.md, "Scheduled tasks", "Whose access a run needs"; "Where
 * members work", "Checked at use"), over a real platform-mode server. Once an administrator
 * takes away what the task's runs use — the conversation moved outside the project's
 * workspace, an external agent given to the conversation of a sandboxed project — the member's
 * `session/input` is refused, and so is the task's next run: recorded `skipped`, the task
 * disabled with a reason naming the task, its user and the same refusal, and nothing is
 * delivered. A task acting for an administrator keeps running there.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClientError } from '../../../src/client/runtime-client.js';
import { ErrorCodes } from '../../../src/protocol/index.js';
import { createTestEnvironment, type TestEnvironment } from '../../helpers/environment.js';
import { startPlatformServer, type PlatformHarness, type RecordingClient } from '../two-users.js';

const SCRIPT = `
responses:
  - text: "first scheduled answer"
  - text: "second scheduled answer"
  - text: "third scheduled answer"
`;

let environment: TestEnvironment | undefined;
let harness: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  await environment?.dispose();
  harness = undefined;
  environment = undefined;
});

/** A platform-mode server with a sandboxed executor `boxed` and an external agent `outside`. */
async function start() {
  environment = await createTestEnvironment(SCRIPT);
  writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  boxed:\n    kind: local\n    sandbox: bwrap\n');
  writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  default:\n    default: true\n  outside:\n    kind: acp\n    command: ["false"]\n');
  harness = await startPlatformServer(SCRIPT, { environment, platform: true });
  const running = harness;
  const platform = running.server.platform;
  const root = await platform.users.create({ email: 'root@example.com', role: 'admin' });
  const bobAccount = await platform.users.create({ email: 'bob@example.com', role: 'member' });
  const owner = await running.connect();
  const bob = await running.connect(bobAccount.id);
  /** A project on `executor` with bob as a member, and a conversation bob made in it with a task of his. */
  const bobsTask = async (name: string, executor: string) => {
    const directory = running.directory(name);
    const { project } = await owner.client.request('projects/create', { name, workspace: { executor, directory } });
    await owner.client.request('projects/members/add', { projectId: project.id, userId: bobAccount.id });
    const { conversation } = await bob.client.request('conversation/create', { projectId: project.id });
    const { task } = await bob.client.request('schedules/create', { conversationId: conversation.id, name: 'report', prompt: 'report', schedule: { kind: 'interval', everyMs: 3_600_000 } });
    return { project, conversation, task };
  };
  return { running, root, bobId: bobAccount.id, owner, bob, bobsTask };
}

/** The runs of a task, newest first, as [status, error]. */
async function runs(client: RecordingClient, taskId: string): Promise<[string, string | undefined][]> {
  return (await client.client.request('schedules/history', { taskId })).runs.map((run) => [run.status, run.error]);
}

/** Runs a task now and waits until it has `count` finished runs. */
async function runNow(client: RecordingClient, taskId: string, count: number): Promise<void> {
  await client.client.request('schedules/runNow', { taskId });
  await expect.poll(async () => (await runs(client, taskId)).filter(([status]) => !['claimed', 'dispatched', 'retrying'].includes(status)).length, { timeout: 20_000 }).toBe(count);
}

/** Why a member's `session/input` is refused, without the method's prefix. @throws when it is not refused as forbidden */
async function inputRefusal(client: RecordingClient, conversationId: string): Promise<string> {
  try {
    await client.client.request('session/input', { conversationId, input: 'hello' });
  } catch (error) {
    if (!(error instanceof RuntimeClientError) || error.code !== ErrorCodes.forbidden) throw error;
    expect(error.message.startsWith('session/input: forbidden: ')).toBe(true);
    return error.message.slice('session/input: forbidden: '.length);
  }
  throw new Error('session/input was accepted but should have been refused');
}

describe("a member's scheduled task after an administrator took away what its runs use", () => {
  it('is refused and disabled once its conversation was moved outside the workspace; an administrator’s task there keeps running', async () => {
    const { running, root, bobId, owner, bob, bobsTask } = await start();
    const { project, conversation, task } = await bobsTask('alpha', 'local');
    await runNow(bob, task.id, 1);
    expect(await runs(owner, task.id)).toEqual([['completed', undefined]]);

    const elsewhere = running.directory('alpha-elsewhere');
    await owner.client.request('conversation/update', { conversationId: conversation.id, workLocation: [{ executor: 'local', cwd: elsewhere }] });
    const why = await inputRefusal(bob, conversation.id);
    expect(why).toContain(`conversation ${conversation.id} works in "${elsewhere}" on executor "local", where members of project ${project.id} may not work`);

    await runNow(owner, task.id, 2);
    const reason = `task ${task.id} ("report") acts for user ${bobId}, whose own turn in conversation ${conversation.id} would now be refused: ${why}`;
    expect(await runs(owner, task.id)).toEqual([
      ['skipped', `not run, and the task was disabled: ${reason}`],
      ['completed', undefined],
    ]);
    expect((await owner.client.request('schedules/list', { conversationId: conversation.id })).tasks).toMatchObject([{ id: task.id, enabled: false, disabledReason: reason }]);

    // Administrators are not held to the members' rules: their task runs in the same place.
    const { task: administrators } = await owner.client.request('schedules/create', { conversationId: conversation.id, name: 'audit', prompt: 'audit', schedule: { kind: 'interval', everyMs: 3_600_000 }, userId: root.id });
    await runNow(owner, administrators.id, 1);
    expect(await runs(owner, administrators.id)).toEqual([['completed', undefined]]);
    expect(running.environment.mock.requests).toHaveLength(2);
  });

  it('is refused and disabled once an administrator gave its session an external agent in a sandboxed project', async () => {
    const { running, bobId, owner, bob, bobsTask } = await start();
    const { conversation, task } = await bobsTask('boxed-project', 'boxed');
    await runNow(bob, task.id, 1);
    expect(await runs(owner, task.id)).toEqual([['completed', undefined]]);

    await owner.client.request('session/setAgent', { conversationId: conversation.id, agent: 'outside' });
    const why = await inputRefusal(bob, conversation.id);
    expect(why).toMatch(/^session sess_[0-9a-z]+: agent "outside" \(kind acp\) is a program the server runs on its own machine/);

    await runNow(owner, task.id, 2);
    const reason = `task ${task.id} ("report") acts for user ${bobId}, whose own turn in conversation ${conversation.id} would now be refused: ${why}`;
    expect((await runs(owner, task.id))[0]).toEqual(['skipped', `not run, and the task was disabled: ${reason}`]);
    expect((await owner.client.request('schedules/list', { conversationId: conversation.id })).tasks).toMatchObject([{ id: task.id, enabled: false, disabledReason: reason }]);
    expect(running.environment.mock.requests).toHaveLength(1);
  });

  it('is refused and disabled once the executor its project works on is no longer configured', async () => {
    const { running, bobId, owner, bob, bobsTask } = await start();
    const { project, conversation, task } = await bobsTask('gone-executor', 'boxed');
    await runNow(bob, task.id, 1);
    expect(await runs(owner, task.id)).toEqual([['completed', undefined]]);

    writeFileSync(path.join(running.environment.paths.configDir, 'executors.yaml'), 'executors: {}\n');
    expect((await owner.client.request('config/reload', {})).ok).toBe(true);
    const why = await inputRefusal(bob, conversation.id);
    expect(why).toContain(`executor "boxed" of project ${project.id} is not configured`);

    await runNow(owner, task.id, 2);
    const reason = `task ${task.id} ("report") acts for user ${bobId}, whose own turn in conversation ${conversation.id} would now be refused: ${why}`;
    expect((await runs(owner, task.id))[0]).toEqual(['skipped', `not run, and the task was disabled: ${reason}`]);
    expect(running.environment.mock.requests).toHaveLength(1);
  });
});

/**
 * A removed user's scheduled task over a real platform-mode server (docs/platform.md,
 * "Scheduled tasks", "Whose access a run needs"): a member's interval task runs and counts for
 * them; once the member is removed from the project, its next run is refused and the task
 * disabled naming why; removing the user disables every task of theirs at once. Nothing more
 * runs or counts for the removed user.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startPlatformServer, type PlatformHarness } from '../two-users.js';

const SCRIPT = `
responses:
  - text: "scheduled run answer"
  - text: "never sent"
`;

let harness: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('the scheduled tasks of a member who is removed', () => {
  it('stop running and counting for them: refused at run time after the project removal, disabled at the user removal', async () => {
    harness = await startPlatformServer(SCRIPT, { platform: true });
    const platform = harness.server.platform;
    const bobAccount = await platform.users.create({ email: 'bob@example.com', role: 'member' });
    const owner = await harness.connect();
    const { project } = await owner.client.request('projects/create', { name: 'Alpha', workspace: { executor: 'local', directory: harness.directory('alpha') } });
    await owner.client.request('projects/members/add', { projectId: project.id, userId: bobAccount.id });
    const bob = await harness.connect(bobAccount.id);
    const { conversation } = await bob.client.request('conversation/create', { projectId: project.id });
    const { task } = await bob.client.request('schedules/create', { conversationId: conversation.id, name: 'minutely', prompt: 'report', schedule: { kind: 'interval', everyMs: 60_000 } });
    expect(task.userId).toBe(bobAccount.id);
    await bob.client.request('schedules/runNow', { taskId: task.id });
    await expect.poll(async () => (await owner.client.request('schedules/history', { taskId: task.id })).runs.map((run) => run.status)).toEqual(['completed']);
    await expect.poll(async () => (await owner.client.request('costs/user', { userId: bobAccount.id })).totals.turns).toBe(1);

    await owner.client.request('projects/members/remove', { projectId: project.id, userId: bobAccount.id });
    // The next run (here started by hand) checks bob's access first: refused, nothing delivered.
    await owner.client.request('schedules/runNow', { taskId: task.id });
    const reason = `user ${bobAccount.id} is no longer a member of project ${project.id}, which conversation ${conversation.id} belongs to`;
    await expect.poll(async () => (await owner.client.request('schedules/history', { taskId: task.id })).runs.map((run) => run.status)).toEqual(['skipped', 'completed']);
    expect((await owner.client.request('schedules/history', { taskId: task.id })).runs[0]?.error).toBe(`not run, and the task was disabled: ${reason}`);
    expect((await owner.client.request('schedules/list', { conversationId: conversation.id })).tasks).toMatchObject([{ id: task.id, enabled: false, disabledReason: reason, userId: bobAccount.id }]);
    expect((await owner.client.request('schedules/list', { conversationId: conversation.id })).tasks[0]?.nextRunAt).toBeUndefined();

    // Enabled again by the owner, the task is disabled at once when bob's account goes.
    expect((await owner.client.request('schedules/resume', { taskId: task.id })).task).toMatchObject({ enabled: true });
    const second = (await owner.client.request('schedules/create', { conversationId: conversation.id, name: 'daily', prompt: 'daily report', schedule: { kind: 'cron', expression: '0 9 * * *', timeZone: 'UTC' }, userId: bobAccount.id })).task;
    await owner.client.request('users/remove', { userId: bobAccount.id });
    const tasks = (await owner.client.request('schedules/list', { conversationId: conversation.id })).tasks;
    expect(tasks.map((each) => [each.id, each.enabled, each.disabledReason])).toEqual([
      [task.id, false, `user ${bobAccount.id} was removed`],
      [second.id, false, `user ${bobAccount.id} was removed`],
    ]);
    expect((await owner.client.request('costs/user', { userId: bobAccount.id })).totals.turns).toBe(1);
    expect(harness.environment.mock.requests).toHaveLength(1);
  });
});

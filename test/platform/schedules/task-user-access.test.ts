/**
 * A scheduled task acts for its user, so it runs only while that user can reach its
 * conversation (docs/platform.md, "Scheduled tasks", "Whose access a run needs"). Checked at run
 * time with a fake clock and a real platform database: a user removed, removed from the
 * project, whose project was deleted, or demoted out of reach has the task disabled at its next
 * run, with a `skipped` run and the task's `disabledReason` naming why; the prompt is not
 * delivered. Removing a user also disables their tasks at once. A user who reaches the
 * conversation is also asked the checks at use of a turn of theirs (given by the server; a fake
 * here), and a refusal there disables the task the same way, naming the task and the user.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLATFORM_SETTINGS } from '../../../src/config/platform-settings.js';
import { Platform } from '../../../src/platform/platform.js';
import type { ScheduleDispatcher, TurnOutcome } from '../../../src/platform/schedules/dispatcher.js';
import { ScheduleService } from '../../../src/platform/schedules/schedule-service.js';
import { ScheduleStore } from '../../../src/platform/schedules/schedule-store.js';
import { Scheduler } from '../../../src/platform/schedules/scheduler.js';
import { taskUserRefusal, type TaskTurnCheck } from '../../../src/platform/schedules/task-user-access.js';
import type { Caller } from '../../../src/platform/caller.js';
import { SqliteRecordStorage } from '../../../src/storage/sqlite/sqlite-record-storage.js';
import { FakeClock } from '../../helpers/fake-clock.js';

/** Records deliveries; each turn completes at once unless `failTurns` is set. */
class RecordingDispatcher implements ScheduleDispatcher {
  deliveries: string[] = [];
  failTurns = false;
  async deliver(_conversationId: string, prompt: string): Promise<{ turnId: string }> {
    this.deliveries.push(prompt);
    return { turnId: `turn_${this.deliveries.length}` };
  }
  async waitForTurn(): Promise<TurnOutcome> {
    return this.failTurns ? { status: 'failed', error: 'model unavailable' } : { status: 'completed' };
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MINUTE = 60_000;
const conversationId = 'conv_01access';

async function setup(options: { signInEnabled?: boolean; turnCheck?: TaskTurnCheck } = {}) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'openvaala-task-access-'));
  const platform = await Platform.open(dataDir, DEFAULT_PLATFORM_SETTINGS, options.signInEnabled ?? true);
  const records = new SqliteRecordStorage(':memory:');
  cleanups.push(async () => {
    await records.close();
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const clock = new FakeClock(0);
  const dispatcher = new RecordingDispatcher();
  const scheduler = new Scheduler({ store: new ScheduleStore(records), dispatcher, clock, instanceId: 'test', runRefusal: taskUserRefusal(platform, options.turnCheck) });
  await scheduler.start();
  const service = new ScheduleService(scheduler, clock);
  const root = await platform.users.create({ email: 'root@example.com', role: 'admin' });
  const bob = await platform.users.create({ email: 'bob@example.com', role: 'member' });
  const project = await platform.projects.create({ name: 'Alpha', workspace: { executor: 'local', directory: dataDir } });
  await platform.projects.addMember(project.id, bob.id, 'member');
  await platform.projects.bindConversation(conversationId, project.id);
  const advanceTo = (at: number) => clock.advanceTo(at, () => scheduler.settled());
  const everyMinute = (userId: string | undefined, extra: Partial<Parameters<ScheduleService['create']>[0]> = {}) =>
    service.create({ conversationId, ...(userId !== undefined ? { userId } : {}), name: 'minutely', prompt: 'tick', schedule: { kind: 'interval', everyMs: MINUTE, startAt: MINUTE }, ...extra });
  return { platform, clock, dispatcher, scheduler, service, root, bob, project, advanceTo, everyMinute };
}

describe('a scheduled task whose user lost access to its conversation', () => {
  it('is disabled at its next run once its user is removed from the project, naming why', async () => {
    const { platform, dispatcher, service, bob, project, advanceTo, everyMinute } = await setup();
    const task = await everyMinute(bob.id);
    await advanceTo(MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick']);
    await platform.projects.removeMember(project.id, bob.id);
    await advanceTo(5 * MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick']);
    const reason = `user ${bob.id} is no longer a member of project ${project.id}, which conversation ${conversationId} belongs to`;
    expect(service.get(task.id)).toMatchObject({ enabled: false, disabledReason: reason });
    const runs = await service.history(task.id);
    expect(runs.map((run) => [run.occurrenceAt, run.status])).toEqual([
      [2 * MINUTE, 'skipped'],
      [MINUTE, 'completed'],
    ]);
    expect(runs[0]).toMatchObject({ attempts: 0, error: `not run, and the task was disabled: ${reason}`, finishedAt: 2 * MINUTE });
    // A manual run of the disabled task is refused the same way, and delivers nothing.
    expect((await service.runNow(task.id)).status).toBe('claimed');
    await advanceTo(5 * MINUTE + 1);
    expect(dispatcher.deliveries).toEqual(['tick']);
    expect((await service.history(task.id, 1))[0]).toMatchObject({ trigger: 'manual', status: 'skipped' });
  });

  it('is disabled when its user is removed, at removal and (if missed there) at its next run', async () => {
    const { platform, dispatcher, service, scheduler, bob, advanceTo, everyMinute } = await setup();
    const task = await everyMinute(bob.id);
    const other = await everyMinute(bob.id, { name: 'second' });
    const disabled = await service.disableTasksOfUser(bob.id, `user ${bob.id} was removed`);
    expect(disabled.map((each) => each.id).sort()).toEqual([task.id, other.id].sort());
    expect(service.get(task.id)).toMatchObject({ enabled: false, disabledReason: `user ${bob.id} was removed` });
    // A task enabled again by someone, or one the removal did not reach: the run-time check stops it.
    await service.resume(task.id);
    expect(service.get(task.id).disabledReason).toBeUndefined();
    await platform.removeUser(bob.id);
    await advanceTo(3 * MINUTE);
    expect(dispatcher.deliveries).toEqual([]);
    expect(service.get(task.id)).toMatchObject({ enabled: false, disabledReason: `user ${bob.id} no longer exists (removed)` });
    expect((await service.history(task.id)).map((run) => run.status)).toEqual(['skipped']);
    expect(scheduler.task(other.id)?.enabled).toBe(false);
  });

  it('is disabled once its project is deleted (the conversation is then outside every project)', async () => {
    const { platform, dispatcher, service, bob, project, advanceTo, everyMinute } = await setup();
    const task = await everyMinute(bob.id);
    await platform.projects.remove(project.id);
    await advanceTo(2 * MINUTE);
    expect(dispatcher.deliveries).toEqual([]);
    expect(service.get(task.id)).toMatchObject({ enabled: false, disabledReason: `user ${bob.id} can no longer reach conversation ${conversationId}: it is in no project, and only administrators reach those` });
  });

  it('is disabled once its user is demoted out of reach, and keeps running for an administrator', async () => {
    const { platform, dispatcher, service, root, project, advanceTo, everyMinute } = await setup();
    // root reaches the project as an administrator, not as a member of it.
    const task = await everyMinute(root.id);
    await advanceTo(MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick']);
    await platform.users.create({ email: 'second-admin@example.com', role: 'admin' });
    await platform.users.setRole(root.id, 'member');
    await advanceTo(2 * MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick']);
    expect(service.get(task.id)).toMatchObject({ enabled: false, disabledReason: `user ${root.id} is no longer a member of project ${project.id}, which conversation ${conversationId} belongs to` });
  });

  it('stops retrying a failed run once its user lost access', async () => {
    const { platform, dispatcher, service, bob, project, advanceTo, everyMinute } = await setup();
    dispatcher.failTurns = true;
    const task = await everyMinute(bob.id, { retry: { initialDelayMs: 10_000, maxDelayMs: 10_000, deadlineMs: 3_600_000 }, schedule: { kind: 'once', at: MINUTE } });
    await advanceTo(MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick']);
    await platform.projects.removeMember(project.id, bob.id);
    await advanceTo(MINUTE + 60_000);
    expect(dispatcher.deliveries).toEqual(['tick']);
    expect((await service.history(task.id))[0]).toMatchObject({ status: 'skipped', attempts: 1, error: expect.stringContaining(`not run, and the task was disabled: user ${bob.id} is no longer a member`) });
    expect(service.get(task.id).enabled).toBe(false);
  });

  it('keeps running tasks that act for nobody, for the local owner, or for a member who still belongs', async () => {
    const { dispatcher, service, bob, advanceTo, everyMinute } = await setup();
    const tasks = [await everyMinute(undefined), await everyMinute('local-owner'), await everyMinute(bob.id)];
    await advanceTo(2 * MINUTE);
    expect(dispatcher.deliveries).toHaveLength(6);
    for (const task of tasks) expect(service.get(task.id)).toMatchObject({ enabled: true });
  });

  it('retries a run whose check could not be made, without disabling the task', async () => {
    const records = new SqliteRecordStorage(':memory:');
    cleanups.push(() => records.close());
    const clock = new FakeClock(0);
    const dispatcher = new RecordingDispatcher();
    let broken = true;
    const runRefusal = async () => {
      if (broken) throw new Error('database is locked');
      return undefined;
    };
    const scheduler = new Scheduler({ store: new ScheduleStore(records), dispatcher, clock, instanceId: 'test', runRefusal });
    await scheduler.start();
    const service = new ScheduleService(scheduler, clock);
    const task = await service.create({ conversationId, userId: 'someone', name: 'once', prompt: 'tick', schedule: { kind: 'once', at: MINUTE }, retry: { initialDelayMs: 10_000, maxDelayMs: 10_000, deadlineMs: 3_600_000 } });
    await clock.advanceTo(MINUTE, () => scheduler.settled());
    expect((await service.history(task.id))[0]).toMatchObject({ status: 'retrying', error: "the access of the task's user could not be checked: database is locked" });
    expect(service.get(task.id).enabled).toBe(true);
    broken = false;
    await clock.advanceTo(2 * MINUTE, () => scheduler.settled());
    expect(dispatcher.deliveries).toEqual(['tick']);
    expect((await service.history(task.id))[0]?.status).toBe('completed');
  });

  it('with platform mode off, checks a user without an account as a member of the projects', async () => {
    const { platform, dispatcher, service, project, advanceTo, everyMinute } = await setup({ signInEnabled: false });
    await platform.projects.addMember(project.id, 'carol', 'member');
    const task = await everyMinute('carol');
    await advanceTo(MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick']);
    await platform.projects.removeMember(project.id, 'carol');
    await advanceTo(2 * MINUTE);
    expect(service.get(task.id)).toMatchObject({ enabled: false, disabledReason: `user carol is no longer a member of project ${project.id}, which conversation ${conversationId} belongs to` });
  });
});

describe("a scheduled task whose user's own turn would be refused at use", () => {
  it("is disabled at its next run, naming the task, the user and the refusal; the check gets the user's caller", async () => {
    const asked: Caller[] = [];
    const member: { refusal?: string } = {};
    const turnCheck: TaskTurnCheck = async (caller, conversation) => {
      asked.push(caller);
      expect(conversation).toBe(conversationId);
      return caller.kind === 'user' && caller.role === 'member' ? member.refusal : undefined;
    };
    const { dispatcher, service, root, bob, advanceTo, everyMinute } = await setup({ turnCheck });
    const task = await everyMinute(bob.id);
    const administrators = await everyMinute(root.id, { name: 'audit' });
    await advanceTo(MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick', 'tick']);
    expect(asked).toHaveLength(2);
    expect(asked).toEqual(
      expect.arrayContaining([
        { kind: 'user', userId: bob.id, role: 'member', webSessionId: '' },
        { kind: 'user', userId: root.id, role: 'admin', webSessionId: '' },
      ]),
    );
    member.refusal = 'conversation conv_01access works in "/elsewhere" on executor "local", where members of project proj_x may not work: …';
    await advanceTo(2 * MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick', 'tick', 'tick']);
    const reason = `task ${task.id} ("minutely") acts for user ${bob.id}, whose own turn in conversation ${conversationId} would now be refused: ${member.refusal}`;
    expect(service.get(task.id)).toMatchObject({ enabled: false, disabledReason: reason });
    expect((await service.history(task.id))[0]).toMatchObject({ status: 'skipped', attempts: 0, error: `not run, and the task was disabled: ${reason}` });
    expect(service.get(administrators.id)).toMatchObject({ enabled: true });
  });

  it('is not asked for tasks acting for nobody or the local owner, nor once the user lost the conversation', async () => {
    const asked: Caller[] = [];
    const turnCheck: TaskTurnCheck = async (caller) => {
      asked.push(caller);
      return 'refused at use';
    };
    const { platform, dispatcher, service, bob, project, advanceTo, everyMinute } = await setup({ turnCheck });
    await everyMinute(undefined);
    await everyMinute('local-owner');
    await platform.projects.removeMember(project.id, bob.id);
    const task = await everyMinute(bob.id);
    await advanceTo(MINUTE);
    expect(asked).toEqual([]);
    expect(dispatcher.deliveries).toEqual(['tick', 'tick']);
    expect(service.get(task.id).disabledReason).toBe(`user ${bob.id} is no longer a member of project ${project.id}, which conversation ${conversationId} belongs to`);
  });

  it('retries a run whose turn check could not be made, without disabling the task', async () => {
    let broken = true;
    const turnCheck: TaskTurnCheck = async () => {
      if (broken) throw new Error('conversation conv_01access could not be loaded');
      return undefined;
    };
    const { dispatcher, service, bob, advanceTo, everyMinute } = await setup({ turnCheck });
    const task = await everyMinute(bob.id, { schedule: { kind: 'once', at: MINUTE }, retry: { initialDelayMs: 10_000, maxDelayMs: 10_000, deadlineMs: 3_600_000 } });
    await advanceTo(MINUTE);
    expect((await service.history(task.id))[0]).toMatchObject({ status: 'retrying', error: "the access of the task's user could not be checked: conversation conv_01access could not be loaded" });
    broken = false;
    await advanceTo(2 * MINUTE);
    expect(dispatcher.deliveries).toEqual(['tick']);
    expect(service.get(task.id).enabled).toBe(true);
  });
});

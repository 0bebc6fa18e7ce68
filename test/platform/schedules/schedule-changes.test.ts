/**
 * When a task fires after its schedule was changed, or after it was paused and resumed
 * (docs/protocol.md, "Scheduled tasks": "a new schedule counts from now"; docs/platform.md,
 * "Run now, pause, resume"). An interval without `startAt` counts from the change or the
 * resume, also after a restart; one with `startAt` keeps the steps of its `startAt`; a cron or
 * one-time schedule fires at its next instant after the change; an update that leaves the
 * schedule as it was keeps the task's timing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteRecordStorage } from '../../../src/storage/sqlite/sqlite-record-storage.js';
import { Scheduler } from '../../../src/platform/schedules/scheduler.js';
import { ScheduleStore } from '../../../src/platform/schedules/schedule-store.js';
import { publicTask, ScheduleService } from '../../../src/platform/schedules/schedule-service.js';
import type { ScheduleDispatcher, TurnOutcome } from '../../../src/platform/schedules/dispatcher.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';

/** Records when each prompt was delivered; every turn completes at once. */
class RecordingDispatcher implements ScheduleDispatcher {
  readonly deliveredAt: number[] = [];
  constructor(private readonly clock: FakeClock) {}
  async deliver(): Promise<{ turnId: string }> {
    this.deliveredAt.push(this.clock.now());
    return { turnId: `turn_${this.deliveredAt.length}` };
  }
  waitForTurn(): Promise<TurnOutcome> {
    return Promise.resolve({ status: 'completed' });
  }
}

const opened: SqliteRecordStorage[] = [];
const schedulers: Scheduler[] = [];
let harness: InProcessServer | undefined;
afterEach(async () => {
  for (const scheduler of schedulers.splice(0)) scheduler.stop();
  for (const storage of opened.splice(0)) await storage.close();
  await harness?.stop();
  harness = undefined;
});

/** A scheduler over `records` (a new in-memory storage unless given: a restart passes the old one). */
async function setup(start: number, records = new SqliteRecordStorage(':memory:'), clock = new FakeClock(start)) {
  if (!opened.includes(records)) opened.push(records);
  const dispatcher = new RecordingDispatcher(clock);
  const scheduler = new Scheduler({ store: new ScheduleStore(records), dispatcher, clock, instanceId: 'test' });
  schedulers.push(scheduler);
  await scheduler.start();
  const service = new ScheduleService(scheduler, clock);
  const advanceTo = (at: number) => clock.advanceTo(at, () => scheduler.settled());
  return { clock, records, dispatcher, scheduler, service, advanceTo };
}

const conversationId = 'conv_01test';
const MINUTE = 60_000;

describe('a changed schedule counts from the change', () => {
  it('an interval set 33 s after creation first fires one interval after the change, then every interval', async () => {
    const { dispatcher, service, advanceTo } = await setup(0);
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'cron', expression: '0 9 * * *', timeZone: 'UTC' } });
    await advanceTo(33_000);
    const changed = await service.update(task.id, { schedule: { kind: 'interval', everyMs: MINUTE } });
    expect(publicTask(changed).nextRunAt).toBe(33_000 + MINUTE);
    await advanceTo(33_000 + 3 * MINUTE);
    expect(dispatcher.deliveredAt).toEqual([33_000 + MINUTE, 33_000 + 2 * MINUTE, 33_000 + 3 * MINUTE]);
  });

  it('a new interval on an interval task counts from the change, not from creation or the last run', async () => {
    const { dispatcher, service, advanceTo } = await setup(0);
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE } });
    await advanceTo(90_000);
    const changed = await service.update(task.id, { schedule: { kind: 'interval', everyMs: 2 * MINUTE } });
    expect(changed.nextOccurrenceAt).toBe(90_000 + 2 * MINUTE);
    await advanceTo(90_000 + 4 * MINUTE);
    expect(dispatcher.deliveredAt).toEqual([MINUTE, 90_000 + 2 * MINUTE, 90_000 + 4 * MINUTE]);
  });

  it('an interval with startAt keeps the steps of its startAt', async () => {
    const { service, advanceTo } = await setup(0);
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE } });
    await advanceTo(33_000);
    const changed = await service.update(task.id, { schedule: { kind: 'interval', everyMs: MINUTE, startAt: 10_000 } });
    expect(changed.nextOccurrenceAt).toBe(70_000);
  });

  it('a cron or one-time schedule fires at its next instant after the change', async () => {
    const { service, advanceTo } = await setup(Date.parse('2026-05-04T08:00:00Z'));
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE } });
    await advanceTo(Date.parse('2026-05-04T08:00:33Z'));
    const cron = await service.update(task.id, { schedule: { kind: 'cron', expression: '30 9 * * *', timeZone: 'UTC' } });
    expect(cron.nextOccurrenceAt).toBe(Date.parse('2026-05-04T09:30:00Z'));
    const once = await service.update(task.id, { schedule: { kind: 'once', at: Date.parse('2026-05-05T12:00:00Z') } });
    expect(once.nextOccurrenceAt).toBe(Date.parse('2026-05-05T12:00:00Z'));
  });

  it('an update of other fields, or one giving the same schedule again, keeps the timing', async () => {
    const { dispatcher, service, advanceTo } = await setup(0);
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE } });
    await advanceTo(33_000);
    expect((await service.update(task.id, { prompt: 'another prompt', name: 'renamed' })).nextOccurrenceAt).toBe(MINUTE);
    expect((await service.update(task.id, { schedule: { kind: 'interval', everyMs: MINUTE } })).nextOccurrenceAt).toBe(MINUTE);
    await advanceTo(3 * MINUTE);
    expect(dispatcher.deliveredAt).toEqual([MINUTE, 2 * MINUTE, 3 * MINUTE]);
  });

  it('a changed interval keeps counting from the change after a restart', async () => {
    const first = await setup(0);
    const task = await first.service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE } });
    await first.advanceTo(33_000);
    await first.service.update(task.id, { schedule: { kind: 'interval', everyMs: MINUTE } });
    await first.service.update(task.id, { schedule: { kind: 'interval', everyMs: 2 * MINUTE } });
    await first.advanceTo(33_000 + 2 * MINUTE);
    first.scheduler.stop();
    // Down past the next occurrence: one catch-up, then the steps of the change go on.
    const second = await setup(0, first.records, new FakeClock(33_000 + 4 * MINUTE + 5_000));
    expect(second.service.get(task.id).nextOccurrenceAt).toBe(33_000 + 6 * MINUTE);
    expect(second.dispatcher.deliveredAt).toEqual([33_000 + 4 * MINUTE + 5_000]);
  });
});

describe('pause and resume', () => {
  it('a resumed interval task counts from the resume', async () => {
    const { dispatcher, service, advanceTo } = await setup(0);
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE } });
    await advanceTo(10_000);
    await service.pause(task.id);
    await advanceTo(33_000);
    expect((await service.resume(task.id)).nextOccurrenceAt).toBe(33_000 + MINUTE);
    await advanceTo(33_000 + 2 * MINUTE);
    expect(dispatcher.deliveredAt).toEqual([33_000 + MINUTE, 33_000 + 2 * MINUTE]);
  });

  it('a resumed interval with startAt keeps its steps; a resumed cron fires at its next instant', async () => {
    const { service, advanceTo } = await setup(Date.parse('2026-05-04T08:00:00Z'));
    const stepped = await service.create({ conversationId, name: 's', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE, startAt: Date.parse('2026-05-04T08:00:10Z') } });
    const cron = await service.create({ conversationId, name: 'c', prompt: 'p', schedule: { kind: 'cron', expression: '30 9 * * *', timeZone: 'UTC' } });
    await service.pause(stepped.id);
    await service.pause(cron.id);
    await advanceTo(Date.parse('2026-05-04T09:40:33Z'));
    expect((await service.resume(stepped.id)).nextOccurrenceAt).toBe(Date.parse('2026-05-04T09:41:10Z'));
    expect((await service.resume(cron.id)).nextOccurrenceAt).toBe(Date.parse('2026-05-05T09:30:00Z'));
  });

  it('resuming a task that is not paused keeps its timing', async () => {
    const { service, advanceTo } = await setup(0);
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE } });
    await advanceTo(33_000);
    expect((await service.resume(task.id)).nextOccurrenceAt).toBe(MINUTE);
  });
});

describe('over the protocol', () => {
  it('schedules/update and schedules/resume give nextRunAt one interval after the change', async () => {
    harness = await startInProcessServer('responses: []\n');
    const conversationId = await harness.conversation();
    const { task } = await harness.client.request('schedules/create', { conversationId, name: 'i', prompt: 'p', schedule: { kind: 'cron', expression: '0 9 * * *', timeZone: 'UTC' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const updated = (await harness.client.request('schedules/update', { taskId: task.id, schedule: { kind: 'interval', everyMs: MINUTE } })).task;
    expect(updated.updatedAt).toBeGreaterThan(task.createdAt);
    expect(updated.nextRunAt).toBe(updated.updatedAt + MINUTE);
    expect(Object.keys(updated)).not.toContain('scheduleAnchorAt');
    await harness.client.request('schedules/pause', { taskId: task.id });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const resumed = (await harness.client.request('schedules/resume', { taskId: task.id })).task;
    expect(resumed.nextRunAt).toBe(resumed.updatedAt + MINUTE);
  });
});

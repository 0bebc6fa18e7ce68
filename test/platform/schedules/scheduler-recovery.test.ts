/**
 * Reconciliation at start, with a fake clock: a second scheduler on the same storage plays the
 * restarted server. Missed occurrences run once or are recorded missed, by the task's policy,
 * never twice; claims of the dead instance are taken over or abandoned; a run whose turn was
 * cut is interrupted, not run again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ScheduleDispatcher, TurnOutcome } from '../../../src/platform/schedules/dispatcher.js';
import { ScheduleService } from '../../../src/platform/schedules/schedule-service.js';
import { ScheduleStore } from '../../../src/platform/schedules/schedule-store.js';
import { Scheduler } from '../../../src/platform/schedules/scheduler.js';
import type { MissedPolicy, StoredRun } from '../../../src/platform/schedules/task-types.js';
import { SqliteRecordStorage } from '../../../src/storage/sqlite/sqlite-record-storage.js';
import { FakeClock } from '../../helpers/fake-clock.js';

/** Remembers inputs by key like the runtime does: a repeated key starts nothing. */
class IdempotentDispatcher implements ScheduleDispatcher {
  readonly turns = new Map<string, string>();
  constructor(private readonly endTurns: boolean) {}
  async deliver(_conversationId: string, _prompt: string, inputKey: string): Promise<{ turnId: string }> {
    const known = this.turns.get(inputKey);
    if (known) return { turnId: known };
    const turnId = `turn_${this.turns.size + 1}`;
    this.turns.set(inputKey, turnId);
    return { turnId };
  }
  waitForTurn(): Promise<TurnOutcome> {
    return this.endTurns ? Promise.resolve({ status: 'completed' }) : new Promise(() => undefined);
  }
}

const opened: SqliteRecordStorage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

const MINUTE = 60_000;
const conversationId = 'conv_01recovery';

async function instance(records: SqliteRecordStorage, clock: FakeClock, dispatcher: ScheduleDispatcher, name: string, afterClaim?: (run: StoredRun) => Promise<void>) {
  const scheduler = new Scheduler({ store: new ScheduleStore(records), dispatcher, clock, instanceId: name, ...(afterClaim ? { afterClaim } : {}) });
  await scheduler.start();
  return { scheduler, service: new ScheduleService(scheduler, clock) };
}

async function downtime(missed: MissedPolicy) {
  const records = new SqliteRecordStorage(':memory:');
  opened.push(records);
  const clock = new FakeClock(0);
  const first = await instance(records, clock, new IdempotentDispatcher(true), 'first');
  const task = await first.service.create({ conversationId, name: 'minutely', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE, startAt: MINUTE }, missed });
  first.scheduler.stop();
  // Down from 0 to 10.5 minutes: ten occurrences missed.
  await clock.advanceTo(10.5 * MINUTE, () => Promise.resolve());
  const dispatcher = new IdempotentDispatcher(true);
  const second = await instance(records, clock, dispatcher, 'second');
  await second.scheduler.settled();
  return { task, second, dispatcher, clock };
}

describe('occurrences missed while the server was down', () => {
  it('runOnce: one catch-up run for all of them, then the schedule goes on from now', async () => {
    const { task, second, dispatcher } = await downtime('runOnce');
    const runs = await second.service.history(task.id);
    expect(runs.map((run) => [run.occurrenceAt, run.trigger, run.status])).toEqual([[10 * MINUTE, 'catchUp', 'completed']]);
    expect(dispatcher.turns.size).toBe(1);
    expect(second.service.get(task.id).nextOccurrenceAt).toBe(11 * MINUTE);
  });

  it('markMissed: one missed record naming how many, nothing run', async () => {
    const { task, second, dispatcher } = await downtime('markMissed');
    const runs = await second.service.history(task.id);
    expect(runs).toEqual([expect.objectContaining({ occurrenceAt: 10 * MINUTE, status: 'missed', error: '10 occurrence(s) missed while the server was stopped' })]);
    expect(dispatcher.turns.size).toBe(0);
  });
});

describe('runs left by a process that died', () => {
  it('a claim taken over re-sends the recorded attempt: a prompt the dead process had delivered is not run twice', async () => {
    const records = new SqliteRecordStorage(':memory:');
    opened.push(records);
    const clock = new FakeClock(0);
    const dispatcher = new IdempotentDispatcher(true);
    // The first process records attempt 1, delivers it, and dies before recording the delivery.
    let delivered!: () => void;
    const deliveredOnce = new Promise<void>((resolve) => (delivered = resolve));
    const first = await instance(records, clock, dispatcher, 'first', async (run) => {
      await dispatcher.deliver(run.conversationId, 'p', `schedule:${run.id}#${run.attempts}`);
      delivered();
      await new Promise(() => undefined);
    });
    const task = await first.service.create({ conversationId, name: 'once', prompt: 'p', schedule: { kind: 'once', at: MINUTE } });
    clock.advanceTo(MINUTE, () => Promise.resolve()).catch(() => undefined);
    await deliveredOnce;
    first.scheduler.stop();
    expect((await first.service.history(task.id))[0]).toMatchObject({ status: 'claimed', attempts: 1 });

    const second = await instance(records, clock, dispatcher, 'second');
    await second.scheduler.settled();
    expect(await second.service.history(task.id)).toEqual([expect.objectContaining({ status: 'completed', attempts: 1, turnId: 'turn_1' })]);
    expect(dispatcher.turns.size).toBe(1);
  });

  it('a run whose turn was running is interrupted; a stale claim of a markMissed task is abandoned', async () => {
    const records = new SqliteRecordStorage(':memory:');
    opened.push(records);
    const clock = new FakeClock(0);
    const first = await instance(records, clock, new IdempotentDispatcher(false), 'first');
    const running = await first.service.create({ conversationId, name: 'running', prompt: 'p', schedule: { kind: 'once', at: MINUTE } });
    await clock.advanceTo(MINUTE, () => first.scheduler.settled());
    first.scheduler.stop();
    const store = new ScheduleStore(records);
    const stale = await first.service.create({ conversationId, name: 'stale', prompt: 'p', schedule: { kind: 'once', at: 5 * MINUTE }, missed: 'markMissed' });
    first.scheduler.stop();
    await store.saveRun({ id: `${stale.id}/000000000300000/schedule`, taskId: stale.id, conversationId, occurrenceAt: 5 * MINUTE, trigger: 'schedule', status: 'claimed', attempts: 1, claimedAt: 5 * MINUTE, claimedBy: 'first' });
    await clock.advanceTo(6 * MINUTE, () => Promise.resolve());

    const dispatcher = new IdempotentDispatcher(true);
    const second = await instance(records, clock, dispatcher, 'second');
    await second.scheduler.settled();
    expect((await second.service.history(running.id))[0]).toMatchObject({ status: 'interrupted', turnId: 'turn_1' });
    expect(await second.service.history(stale.id)).toEqual([expect.objectContaining({ status: 'abandoned' })]);
    expect(dispatcher.turns.size).toBe(0);
  });

  it('an occurrence queued behind a running one (overlap queue) is kept across the restart and runs once after it', async () => {
    const records = new SqliteRecordStorage(':memory:');
    opened.push(records);
    const clock = new FakeClock(0);
    const first = await instance(records, clock, new IdempotentDispatcher(false), 'first');
    const task = await first.service.create({ conversationId, name: 'minutely', prompt: 'p', schedule: { kind: 'interval', everyMs: MINUTE, startAt: MINUTE }, overlap: 'queue', missed: 'markMissed' });
    await clock.advanceTo(2.5 * MINUTE, () => first.scheduler.settled());
    first.scheduler.stop();
    expect((await first.service.history(task.id)).map((run) => [run.occurrenceAt, run.status])).toEqual([
      [2 * MINUTE, 'queued'],
      [MINUTE, 'dispatched'],
    ]);

    const dispatcher = new IdempotentDispatcher(true);
    const second = await instance(records, clock, dispatcher, 'second');
    await second.scheduler.settled();
    expect((await second.service.history(task.id)).map((run) => [run.occurrenceAt, run.status])).toEqual([
      [2 * MINUTE, 'completed'],
      [MINUTE, 'interrupted'],
    ]);
    expect(dispatcher.turns.size).toBe(1);

    // A third start finds nothing left to run.
    second.scheduler.stop();
    const third = await instance(records, clock, dispatcher, 'third');
    await third.scheduler.settled();
    expect(dispatcher.turns.size).toBe(1);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { SqliteRecordStorage } from '../../../src/storage/sqlite/sqlite-record-storage.js';
import { Scheduler } from '../../../src/platform/schedules/scheduler.js';
import { ScheduleStore } from '../../../src/platform/schedules/schedule-store.js';
import { ScheduleService } from '../../../src/platform/schedules/schedule-service.js';
import type { ScheduleDispatcher, TurnOutcome } from '../../../src/platform/schedules/dispatcher.js';
import { InvalidScheduleError } from '../../../src/platform/schedules/next-occurrence.js';
import { FakeClock } from '../../helpers/fake-clock.js';

/** Records deliveries; turns end when the test says (or at once, with `autoComplete`). */
class RecordingDispatcher implements ScheduleDispatcher {
  deliveries: { conversationId: string; prompt: string; inputKey: string; at: number }[] = [];
  failDeliveries = false;
  autoComplete: TurnOutcome | undefined = { status: 'completed' };
  private readonly endings = new Map<string, (outcome: TurnOutcome) => void>();
  constructor(private readonly clock: FakeClock) {}
  async deliver(conversationId: string, prompt: string, inputKey: string): Promise<{ turnId: string }> {
    if (this.failDeliveries) throw new Error('conversation unavailable');
    this.deliveries.push({ conversationId, prompt, inputKey, at: this.clock.now() });
    return { turnId: `turn_${this.deliveries.length}` };
  }
  waitForTurn(_conversationId: string, turnId: string): Promise<TurnOutcome> {
    if (this.autoComplete) return Promise.resolve(this.autoComplete);
    return new Promise((resolve) => this.endings.set(turnId, resolve));
  }
  endTurn(turnId: string, outcome: TurnOutcome = { status: 'completed' }): void {
    this.endings.get(turnId)?.(outcome);
  }
}

const opened: SqliteRecordStorage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

async function setup(start: number) {
  const clock = new FakeClock(start);
  const records = new SqliteRecordStorage(':memory:');
  opened.push(records);
  const dispatcher = new RecordingDispatcher(clock);
  const scheduler = new Scheduler({ store: new ScheduleStore(records), dispatcher, clock, instanceId: 'test' });
  await scheduler.start();
  const service = new ScheduleService(scheduler, clock);
  const advanceTo = (at: number) => clock.advanceTo(at, () => scheduler.settled());
  return { clock, dispatcher, scheduler, service, advanceTo };
}

const conversationId = 'conv_01test';

describe('cron tasks in a time zone with daylight-saving changes', () => {
  it('fires 09:30 Helsinki wall-clock time across the spring-forward change (UTC+2 to UTC+3)', async () => {
    const { dispatcher, service, advanceTo } = await setup(Date.parse('2026-03-27T12:00:00Z'));
    await service.create({ conversationId, name: 'daily', prompt: 'report', schedule: { kind: 'cron', expression: '30 9 * * *', timeZone: 'Europe/Helsinki' } });
    await advanceTo(Date.parse('2026-03-31T00:00:00Z'));
    expect(dispatcher.deliveries.map((delivery) => new Date(delivery.at).toISOString())).toEqual([
      '2026-03-28T07:30:00.000Z', // EET, UTC+2
      '2026-03-29T06:30:00.000Z', // the change happened at 01:00 UTC that night: EEST, UTC+3
      '2026-03-30T06:30:00.000Z',
    ]);
  });

  it('fires the local hour repeated by the fall-back change once, and keeps wall-clock time after it', async () => {
    const { dispatcher, service, advanceTo } = await setup(Date.parse('2026-10-24T12:00:00Z'));
    // 03:30 happens twice in Helsinki on 2026-10-25 (04:00 EEST becomes 03:00 EET at 01:00 UTC).
    await service.create({ conversationId, name: 'night', prompt: 'night job', schedule: { kind: 'cron', expression: '30 3 * * *', timeZone: 'Europe/Helsinki' } });
    await advanceTo(Date.parse('2026-10-27T00:00:00Z'));
    expect(dispatcher.deliveries.map((delivery) => new Date(delivery.at).toISOString())).toEqual([
      '2026-10-25T00:30:00.000Z', // 03:30 EEST, the first of the two
      '2026-10-26T01:30:00.000Z', // 03:30 EET, UTC+2
    ]);
  });

  it('fires a local time skipped by the spring-forward gap at the first instant after the gap', async () => {
    const { dispatcher, service, advanceTo } = await setup(Date.parse('2026-03-28T12:00:00Z'));
    await service.create({ conversationId, name: 'gap', prompt: 'in the gap', schedule: { kind: 'cron', expression: '30 3 29 3 *', timeZone: 'Europe/Helsinki' } });
    await advanceTo(Date.parse('2026-03-30T00:00:00Z'));
    expect(dispatcher.deliveries.map((delivery) => new Date(delivery.at).toISOString())).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  it('refuses a bad time zone and a six-field expression, naming the field', async () => {
    const { service } = await setup(0);
    await expect(service.create({ conversationId, name: 'x', prompt: 'x', schedule: { kind: 'cron', expression: '0 9 * * *', timeZone: 'Europe/Nowhere' } })).rejects.toThrow(/schedule\.timeZone: "Europe\/Nowhere" is not an IANA time zone/);
    await expect(service.create({ conversationId, name: 'x', prompt: 'x', schedule: { kind: 'cron', expression: '0 0 9 * * *', timeZone: 'UTC' } })).rejects.toThrow(InvalidScheduleError);
    await expect(service.create({ conversationId, name: 'x', prompt: 'x', schedule: { kind: 'cron', expression: '61 9 * * *', timeZone: 'UTC' } })).rejects.toThrow(/schedule\.expression/);
  });
});

describe('one-time tasks set after their instant', () => {
  it('runs at once a task whose instant passed while its request was on its way, also the same millisecond', async () => {
    const { clock, dispatcher, service, advanceTo } = await setup(1_000_000);
    const late = await service.create({ conversationId, name: 'late', prompt: 'late by a second', schedule: { kind: 'once', at: clock.now() - 1_000 } });
    const exact = await service.create({ conversationId, name: 'exact', prompt: 'this millisecond', schedule: { kind: 'once', at: clock.now() } });
    expect([late.nextOccurrenceAt, exact.nextOccurrenceAt]).toEqual([1_000_000, 1_000_000]);
    await advanceTo(1_000_001);
    expect(dispatcher.deliveries.map((delivery) => delivery.prompt).sort()).toEqual(['late by a second', 'this millisecond']);
    // Given a passed instant by an update, the same.
    const moved = await service.create({ conversationId, name: 'moved', prompt: 'moved', schedule: { kind: 'once', at: clock.now() + 3_600_000 } });
    expect((await service.update(moved.id, { schedule: { kind: 'once', at: clock.now() - 5_000 } })).nextOccurrenceAt).toBe(clock.now());
  });

  it('refuses an instant more than a minute in the past, naming schedule.at, and stores nothing', async () => {
    const { clock, service } = await setup(Date.parse('2026-12-02T10:00:00Z'));
    const at = clock.now() - 61_000;
    await expect(service.create({ conversationId, name: 'typo', prompt: 'x', schedule: { kind: 'once', at } })).rejects.toThrow('schedule.at: 2026-12-02T09:58:59.000Z is 61 s in the past; a one-time task may be set at most 60 s late (it then runs at once)');
    expect(service.list(conversationId)).toEqual([]);
    const task = await service.create({ conversationId, name: 'later', prompt: 'x', schedule: { kind: 'once', at: clock.now() + 60_000 } });
    await expect(service.update(task.id, { schedule: { kind: 'once', at } })).rejects.toThrow(InvalidScheduleError);
    expect(service.get(task.id).schedule).toEqual({ kind: 'once', at: clock.now() + 60_000 });
  });
});

describe('overlap policy', () => {
  it('skip: an occurrence that comes while the previous run goes on is recorded as skipped', async () => {
    const { dispatcher, service, advanceTo, scheduler } = await setup(0);
    dispatcher.autoComplete = undefined;
    const task = await service.create({ conversationId, name: 'every minute', prompt: 'tick', schedule: { kind: 'interval', everyMs: 60_000, startAt: 60_000 }, overlap: 'skip' });
    await advanceTo(180_000);
    expect(dispatcher.deliveries.map((delivery) => delivery.at)).toEqual([60_000]);
    dispatcher.endTurn('turn_1');
    await scheduler.settled();
    await advanceTo(240_000);
    expect(dispatcher.deliveries.map((delivery) => delivery.at)).toEqual([60_000, 240_000]);
    const history = await service.history(task.id);
    expect(history.map((run) => [run.occurrenceAt, run.status])).toEqual([
      [240_000, 'dispatched'],
      [180_000, 'skipped'],
      [120_000, 'skipped'],
      [60_000, 'completed'],
    ]);
  });

  it('queue: one occurrence waits for the running one and runs after it; further ones are skipped', async () => {
    const { dispatcher, service, advanceTo, scheduler } = await setup(0);
    dispatcher.autoComplete = undefined;
    const task = await service.create({ conversationId, name: 'every minute', prompt: 'tick', schedule: { kind: 'interval', everyMs: 60_000, startAt: 60_000 }, overlap: 'queue' });
    await advanceTo(180_000);
    expect(dispatcher.deliveries).toHaveLength(1);
    expect((await service.history(task.id)).map((run) => [run.occurrenceAt, run.status])).toEqual([
      [180_000, 'skipped'],
      [120_000, 'queued'],
      [60_000, 'dispatched'],
    ]);
    dispatcher.endTurn('turn_1');
    await scheduler.settled();
    expect(dispatcher.deliveries.map((delivery) => delivery.at)).toEqual([60_000, 180_000]);
    const history = await service.history(task.id);
    expect(history.map((run) => [run.occurrenceAt, run.status])).toEqual([
      [180_000, 'skipped'],
      [120_000, 'dispatched'],
      [60_000, 'completed'],
    ]);
  });
});

describe('retries', () => {
  it('retries a failed delivery with doubling delays and stops at the retry deadline', async () => {
    const { clock, dispatcher, service, advanceTo } = await setup(0);
    dispatcher.failDeliveries = true;
    const attemptTimes: number[] = [];
    const deliver = dispatcher.deliver.bind(dispatcher);
    dispatcher.deliver = (...args) => {
      attemptTimes.push(clock.now());
      return deliver(...args);
    };
    const task = await service.create({ conversationId, name: 'once', prompt: 'go', schedule: { kind: 'once', at: 1_000 }, retry: { initialDelayMs: 1_000, maxDelayMs: 4_000, deadlineMs: 12_000 } });
    for (let next = clock.nextTimerAt(); next !== undefined; next = clock.nextTimerAt()) await advanceTo(next);
    const [run] = await service.history(task.id);
    // Delays 1 s, 2 s, 4 s, then capped at 4 s; the attempt after 13 s would be past 1 s + 12 s.
    expect(attemptTimes).toEqual([1_000, 2_000, 4_000, 8_000, 12_000]);
    expect(run).toMatchObject({ status: 'failed', attempts: 5, finishedAt: 12_000 });
    expect(run?.error).toMatch(/delivery failed: conversation unavailable/);
  });

  it('retries a failed turn with a new delivery and completes', async () => {
    const { dispatcher, service, advanceTo } = await setup(0);
    dispatcher.autoComplete = { status: 'failed', error: 'model overloaded' };
    const task = await service.create({ conversationId, name: 'once', prompt: 'go', schedule: { kind: 'once', at: 1_000 }, retry: { initialDelayMs: 500, maxDelayMs: 500, deadlineMs: 5_000 } });
    await advanceTo(1_000);
    expect((await service.history(task.id))[0]).toMatchObject({ status: 'retrying', retryAt: 1_500, error: 'turn turn_1 failed: model overloaded' });
    dispatcher.autoComplete = { status: 'completed' };
    await advanceTo(1_500);
    expect((await service.history(task.id))[0]).toMatchObject({ status: 'completed', attempts: 2 });
    expect(dispatcher.deliveries.map((delivery) => delivery.inputKey)).toEqual([expect.stringMatching(/#1$/), expect.stringMatching(/#2$/)]);
  });
});

describe('pause, resume, run now, agent-created tasks, deletion', () => {
  it('a paused task does not fire; resume fires from now on; run now runs a disabled task', async () => {
    const { dispatcher, service, advanceTo, scheduler } = await setup(0);
    const task = await service.create({ conversationId, name: 'i', prompt: 'p', schedule: { kind: 'interval', everyMs: 60_000 } });
    await service.pause(task.id);
    await advanceTo(200_000);
    expect(dispatcher.deliveries).toHaveLength(0);
    const run = await service.runNow(task.id);
    expect(run).toMatchObject({ trigger: 'manual', occurrenceAt: 200_000 });
    await scheduler.settled();
    const resumed = await service.resume(task.id);
    // An interval counts from the resume, not from the steps of its creation (240 000).
    expect(resumed.nextOccurrenceAt).toBe(260_000);
    await advanceTo(260_000);
    expect(dispatcher.deliveries.map((delivery) => delivery.at)).toEqual([200_000, 260_000]);
  });

  it('a task the agent creates starts disabled until a person resumes it', async () => {
    const { dispatcher, service, advanceTo } = await setup(0);
    const task = await service.create({ conversationId, name: 'agent', prompt: 'p', schedule: { kind: 'once', at: 10_000 }, enabled: true }, true);
    expect(task).toMatchObject({ enabled: false, createdByAgent: true });
    await advanceTo(20_000);
    expect(dispatcher.deliveries).toHaveLength(0);
  });

  it('deleting a conversation\'s tasks leaves none and stops their occurrences', async () => {
    const { dispatcher, service, advanceTo } = await setup(0);
    await service.create({ conversationId, name: 'a', prompt: 'p', schedule: { kind: 'interval', everyMs: 60_000 } });
    await service.create({ conversationId, name: 'b', prompt: 'p', schedule: { kind: 'once', at: 30_000 } });
    const other = await service.create({ conversationId: 'conv_02other', name: 'c', prompt: 'p', schedule: { kind: 'once', at: 30_000 } });
    expect(await service.deleteConversationTasks(conversationId)).toBe(2);
    expect(service.list(conversationId)).toEqual([]);
    await advanceTo(120_000);
    expect(dispatcher.deliveries.map((delivery) => delivery.conversationId)).toEqual([other.conversationId]);
  });
});

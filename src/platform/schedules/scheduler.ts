/**
 * The scheduler (SPEC §9; docs/platform.md, "Scheduled tasks"): arms one timer for the soonest
 * due occurrence or retry, claims each occurrence by recording its run before the prompt is
 * delivered, applies the overlap policy, retries failed runs, and on start reconciles what
 * happened while the server was down.
 */
import type { Logger } from '../../logger.js';
import type { SchedulerClock, ClockTimer } from './clock.js';
import type { ScheduleDispatcher } from './dispatcher.js';
import { nextOccurrence } from './next-occurrence.js';
import { attemptRun, nextRetryAt, type AttemptResult } from './run-attempts.js';
import { runKey, type ScheduleStore } from './schedule-store.js';
import { scheduleAnchor, type StoredRun, type StoredTask } from './task-types.js';
import { MAX_TIMER_DELAY_MS } from './clock.js';

/** Most missed occurrences counted for one task at start (the rest are not counted, only skipped). */
const MAX_MISSED_COUNTED = 10_000;

/** What the scheduler is built from. */
export interface SchedulerOptions {
  store: ScheduleStore;
  dispatcher: ScheduleDispatcher;
  clock: SchedulerClock;
  /** Id of this server process instance; claims of other instances found at start are stale. */
  instanceId: string;
  logger?: Logger;
  /** Called after a run is claimed (recorded) and before its prompt is delivered. */
  afterClaim?: (run: StoredRun) => Promise<void>;
  /**
   * Asked before each delivery (first attempt, retry, or a claim taken over at start): why the
   * task may not run now (its user can no longer reach its conversation, or their own turn
   * there would be refused at use, see `task-user-access.ts`), or undefined when it may. A
   * refused run is recorded `skipped` with the reason and the task is disabled, with the
   * reason as its `disabledReason`.
   */
  runRefusal?: (task: StoredTask) => Promise<string | undefined>;
}

/** Arms timers for tasks and runs their occurrences. */
export class Scheduler {
  private readonly tasks = new Map<string, StoredTask>();
  /** Task id → the run in progress. */
  private readonly active = new Map<string, StoredRun>();
  /** Task id → the occurrence kept by the `queue` overlap policy (also stored, as a `queued` run). */
  private readonly queued = new Map<string, { occurrenceAt: number; trigger: StoredRun['trigger'] }>();
  /** Runs waiting for a retry, by run id. */
  private readonly retrying = new Map<string, StoredRun>();
  private readonly work = new Set<Promise<void>>();
  private timer: ClockTimer | undefined;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  /** Runs of `work` that only wait for their turn to end. */
  private idleRuns = 0;

  /** @param options storage, dispatcher, clock and the id of this process instance; nothing runs before `start`. */
  constructor(private readonly options: SchedulerOptions) {}

  /** The storage of tasks and runs. */
  get store(): ScheduleStore {
    return this.options.store;
  }

  /**
   * Loads tasks, reconciles runs left by a previous process (stale claims re-run or abandoned,
   * runs whose turn was cut by the stop marked `interrupted`), handles occurrences missed
   * while down (one catch-up run, or one `missed` record, by the task's policy) and arms the timer.
   */
  async start(): Promise<void> {
    const now = this.options.clock.now();
    for (const task of await this.options.store.listTasks()) this.tasks.set(task.id, task);
    const waiting: StoredRun[] = [];
    for (const run of await this.options.store.listUnfinishedRuns()) {
      if (run.status === 'queued') waiting.push(run);
      else await this.reconcileRun(run, now);
    }
    // After the runs they waited for were reconciled: a queued occurrence waits for a run still
    // going on (taken over or retrying), or starts now.
    for (const run of waiting) this.requeue(run);
    for (const task of this.tasks.values()) await this.reconcileMissed(task, now);
    this.arm();
  }

  /** Stops the timer; runs in progress are left to finish (or to be reconciled at the next start). */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /**
   * Resolves when no tick is in progress and every run started so far has finished or is
   * waiting for its turn to end (for tests driving a fake clock, and for shutdown).
   */
  async settled(): Promise<void> {
    for (;;) {
      const chain = this.chain;
      await chain;
      // A turn of the event loop lets work that just became possible (a turn that ended) register.
      await new Promise((resolve) => setImmediate(resolve));
      if (chain === this.chain && this.work.size === this.idleRuns) return;
    }
  }

  /** Registers a new or changed task (already saved) and re-arms the timer. */
  taskChanged(task: StoredTask): void {
    this.tasks.set(task.id, task);
    this.arm();
  }

  /** Forgets a deleted task: its queued occurrence and waiting retries are dropped. */
  taskDeleted(taskId: string): void {
    this.tasks.delete(taskId);
    this.queued.delete(taskId);
    for (const [id, run] of this.retrying) if (run.taskId === taskId) this.retrying.delete(id);
    this.arm();
  }

  /** A task known to the scheduler. */
  task(taskId: string): StoredTask | undefined {
    return this.tasks.get(taskId);
  }

  /** Every task of a conversation. */
  tasksOf(conversationId: string): StoredTask[] {
    return [...this.tasks.values()].filter((task) => task.conversationId === conversationId);
  }

  /** Runs a task now (`manual` trigger), subject to its overlap policy; returns the run recorded. */
  runNow(task: StoredTask): Promise<StoredRun> {
    return this.serial(() => this.fire(task, this.options.clock.now(), 'manual'));
  }

  private serial<T>(step: () => Promise<T>): Promise<T> {
    const result = this.chain.then(step);
    this.chain = result.then(
      () => undefined,
      (error: unknown) => this.options.logger?.error({ error: (error as Error).message }, 'scheduler step failed'),
    );
    return result;
  }

  /** Runs a step in order with the others, without waiting for it (`serial` logs a failure). */
  private background(step: () => Promise<unknown>): void {
    this.serial(step).catch(() => undefined);
  }

  /** Arms the one timer for the soonest due occurrence or retry. */
  private arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.stopped) return;
    let soonest = Infinity;
    for (const task of this.tasks.values()) if (task.enabled && task.nextOccurrenceAt !== undefined) soonest = Math.min(soonest, task.nextOccurrenceAt);
    for (const run of this.retrying.values()) soonest = Math.min(soonest, run.retryAt ?? Infinity);
    if (soonest === Infinity) return;
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, soonest - this.options.clock.now()));
    this.timer = this.options.clock.setTimer(() => this.background(() => this.tick()), delay);
  }

  private async tick(): Promise<void> {
    const now = this.options.clock.now();
    for (const task of [...this.tasks.values()]) {
      if (!task.enabled || task.nextOccurrenceAt === undefined || task.nextOccurrenceAt > now) continue;
      const occurrenceAt = task.nextOccurrenceAt;
      await this.fire(task, occurrenceAt, 'schedule');
      // Deleted or changed meanwhile (a new schedule counts from the change): not ours to move on.
      const current = this.tasks.get(task.id);
      if (!current || current.nextOccurrenceAt !== occurrenceAt) continue;
      // After a late timer (a loaded machine) the next occurrence is the first after now: no burst of catch-ups.
      const next = nextOccurrence(current.schedule, Math.max(occurrenceAt, now), scheduleAnchor(current));
      if (next === undefined) delete current.nextOccurrenceAt;
      else current.nextOccurrenceAt = next;
      await this.options.store.saveTask(current);
    }
    for (const run of [...this.retrying.values()]) {
      if ((run.retryAt ?? Infinity) > now) continue;
      this.retrying.delete(run.id);
      const task = this.tasks.get(run.taskId);
      if (task) this.track(this.execute(task, run, false));
    }
    this.arm();
  }

  /** Claims an occurrence (or skips or queues it when a run of the task is in progress). */
  private async fire(task: StoredTask, occurrenceAt: number, trigger: StoredRun['trigger']): Promise<StoredRun> {
    const key = runKey(task.id, occurrenceAt, trigger);
    const existing = await this.options.store.getRun(key);
    // An occurrence with a run record was claimed before: never a second time. A `queued` one
    // is claimed here once the run it waited for is over.
    if (existing && !(existing.status === 'queued' && !this.active.has(task.id))) return existing;
    const run: StoredRun = { id: key, taskId: task.id, conversationId: task.conversationId, occurrenceAt, trigger, status: 'claimed', attempts: 0, claimedAt: this.options.clock.now(), claimedBy: this.options.instanceId };
    if (this.active.has(task.id)) {
      if (task.overlap === 'queue' && !this.queued.has(task.id)) {
        // Stored, so that a restart before the running one ends still runs it (once: its key is claimed).
        const queued: StoredRun = { ...run, status: 'queued' };
        await this.options.store.saveRun(queued);
        this.queued.set(task.id, { occurrenceAt, trigger });
        return queued;
      }
      const skipped: StoredRun = { ...run, status: 'skipped', finishedAt: run.claimedAt, error: 'the previous run of the task was still in progress' };
      await this.options.store.saveRun(skipped);
      return skipped;
    }
    await this.options.store.saveRun(run);
    this.active.set(task.id, run);
    this.track(this.execute(task, run, false));
    return { ...run };
  }

  /** Runs `waiting` outside the tracked work of the current run, then tracks the rest again. */
  private async untracked<T>(waiting: Promise<T>): Promise<T> {
    this.idleRuns += 1;
    try {
      return await waiting;
    } finally {
      this.idleRuns -= 1;
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.options.logger?.error({ error: (error as Error).message }, 'scheduled run failed unexpectedly'));
    this.work.add(tracked);
    tracked.finally(() => this.work.delete(tracked)).catch(() => undefined);
  }

  /** Makes one attempt of a claimed run and records its outcome (or its next retry). */
  private async execute(task: StoredTask, run: StoredRun, resume: boolean): Promise<void> {
    this.active.set(task.id, run);
    const save = (changed: StoredRun) => this.options.store.saveRun(changed);
    let refusal: string | undefined;
    let unchecked: AttemptResult | undefined;
    try {
      refusal = await this.options.runRefusal?.(this.tasks.get(task.id) ?? task);
    } catch (error) {
      // Not run unchecked, nor disabled for what may pass (a storage error): retried like a failed delivery.
      unchecked = { status: 'failed', error: `the access of the task's user could not be checked: ${(error as Error).message}` };
    }
    if (refusal !== undefined) {
      await this.refuse(task.id, run, refusal);
      return;
    }
    const result =
      unchecked ??
      (await attemptRun(run, task.prompt, this.options.dispatcher, save, resume, {
        ...(this.options.afterClaim ? { beforeDelivery: this.options.afterClaim } : {}),
        // Waiting for a turn is not scheduler work: `settled` does not wait for it.
        waitForTurn: (waiting) => this.untracked(waiting),
      }));
    const now = this.options.clock.now();
    if (result.status === 'failed') {
      run.error = result.error;
      const retryAt = this.tasks.has(task.id) ? nextRetryAt(task.retry, run, now) : undefined;
      if (retryAt !== undefined) {
        run.status = 'retrying';
        run.retryAt = retryAt;
        await save(run);
        this.retrying.set(run.id, run);
        this.arm();
        return;
      }
    }
    run.status = result.status;
    run.finishedAt = now;
    delete run.retryAt;
    if (this.tasks.has(task.id)) await save(run);
    this.finished(task.id);
  }

  /**
   * Records a run its task may no longer make (`skipped`, naming why) and disables the task. The
   * task is changed in place, as `tick` moves its next occurrence in place, so neither change
   * is lost whichever is saved last.
   */
  private async refuse(taskId: string, run: StoredRun, reason: string): Promise<void> {
    const now = this.options.clock.now();
    run.status = 'skipped';
    run.error = `not run, and the task was disabled: ${reason}`;
    run.finishedAt = now;
    delete run.retryAt;
    const task = this.tasks.get(taskId);
    if (task) {
      await this.options.store.saveRun(run);
      task.enabled = false;
      task.disabledReason = reason;
      task.updatedAt = now;
      await this.options.store.saveTask(task);
      this.options.logger?.warn({ taskId, runId: run.id, reason }, 'scheduled task disabled: its user may no longer run it in its conversation');
    }
    this.finished(taskId);
    this.arm();
  }

  /** A run of the task is over: start the occurrence kept by the `queue` policy, if any. */
  private finished(taskId: string): void {
    this.active.delete(taskId);
    const next = this.queued.get(taskId);
    const task = this.tasks.get(taskId);
    this.queued.delete(taskId);
    if (next && task) this.background(() => this.fire(task, next.occurrenceAt, next.trigger));
  }

  /** A `queued` run left by a previous process: kept behind the task's run in progress, or started. */
  private requeue(run: StoredRun): void {
    const task = this.tasks.get(run.taskId);
    if (!task) return;
    if (this.active.has(task.id)) this.queued.set(task.id, { occurrenceAt: run.occurrenceAt, trigger: run.trigger });
    else this.background(() => this.fire(task, run.occurrenceAt, run.trigger));
  }

  /** Handles a run left unfinished by a previous process. */
  private async reconcileRun(run: StoredRun, now: number): Promise<void> {
    const task = this.tasks.get(run.taskId);
    const save = (changed: StoredRun) => this.options.store.saveRun(changed);
    if (!task) return;
    if (run.status === 'dispatched') {
      // Its turn was cut by the stop; running the prompt again would run it twice.
      await save({ ...run, status: 'interrupted', finishedAt: now, error: 'the server stopped while its turn was running' });
      return;
    }
    if (run.status === 'retrying') {
      const owned = { ...run, claimedBy: this.options.instanceId };
      if ((owned.retryAt ?? now) > owned.occurrenceAt + task.retry.deadlineMs) {
        await save({ ...owned, status: 'failed', finishedAt: now });
        return;
      }
      await save(owned);
      this.active.set(task.id, owned);
      this.retrying.set(owned.id, owned);
      return;
    }
    // A claim of a dead process: its prompt may or may not have been delivered.
    if (task.missed === 'markMissed') {
      await save({ ...run, status: 'abandoned', finishedAt: now, error: 'claimed by a server process that stopped before delivering it' });
      return;
    }
    this.options.logger?.info({ runId: run.id }, 'stale claim of a scheduled run taken over');
    const owned: StoredRun = { ...run, claimedBy: this.options.instanceId };
    await save(owned);
    this.active.set(task.id, owned);
    // Re-sent with the recorded attempt's input key: if the dead process had delivered it, the runtime answers with that turn.
    this.track(this.execute(task, owned, true));
  }

  /** Occurrences of an enabled task that passed while the server was down. */
  private async reconcileMissed(task: StoredTask, now: number): Promise<void> {
    if (!task.enabled || task.nextOccurrenceAt === undefined || task.nextOccurrenceAt > now) return;
    let latest: number | undefined;
    let count = 0;
    for (let at: number | undefined = task.nextOccurrenceAt; at !== undefined && at <= now && count < MAX_MISSED_COUNTED; at = nextOccurrence(task.schedule, at, scheduleAnchor(task))) {
      if (await this.options.store.getRun(runKey(task.id, at, 'schedule'))) continue;
      latest = at;
      count += 1;
    }
    task.nextOccurrenceAt = nextOccurrence(task.schedule, now, scheduleAnchor(task));
    await this.options.store.saveTask(task);
    if (latest === undefined) return;
    if (task.missed === 'runOnce') {
      await this.fire(task, latest, 'catchUp');
      return;
    }
    const missed: StoredRun = {
      id: runKey(task.id, latest, 'schedule'),
      taskId: task.id,
      conversationId: task.conversationId,
      occurrenceAt: latest,
      trigger: 'schedule',
      status: 'missed',
      attempts: 0,
      claimedAt: now,
      finishedAt: now,
      claimedBy: this.options.instanceId,
      error: `${count} occurrence(s) missed while the server was stopped`,
    };
    await this.options.store.saveRun(missed);
  }
}

/**
 * Operations on scheduled tasks behind the `schedules/*` methods and the `schedule_task` tool:
 * create (checked), update, delete, pause, resume, run now, history, and removal of a deleted
 * conversation's tasks. Each change is stored first, then given to the scheduler.
 */
import { isDeepStrictEqual } from 'node:util';
import { newId } from '../../ids.js';
import type { SchedulerClock } from './clock.js';
import { nextOccurrence, occurrenceWhenSet, validateSchedule } from './next-occurrence.js';
import type { Scheduler } from './scheduler.js';
import type { MissedPolicy, OverlapPolicy, RetryPolicy, StoredRun, StoredTask, TaskSchedule } from './task-types.js';

/** Retry policy of a task created without one: 30 s doubling up to 10 min, for 1 hour. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { initialDelayMs: 30_000, maxDelayMs: 600_000, deadlineMs: 3_600_000 };

/** A task to create. */
export interface NewTask {
  conversationId: string;
  userId?: string;
  name: string;
  prompt: string;
  schedule: TaskSchedule;
  /** Default `skip`. */
  overlap?: OverlapPolicy;
  /** Default `runOnce`. */
  missed?: MissedPolicy;
  retry?: RetryPolicy;
  /** Default true; forced to false for tasks the agent creates. */
  enabled?: boolean;
}

/** Changes to a task. */
export interface TaskChanges {
  name?: string;
  prompt?: string;
  schedule?: TaskSchedule;
  overlap?: OverlapPolicy;
  missed?: MissedPolicy;
  retry?: RetryPolicy;
}

/** A task id that names no task. */
export class UnknownTaskError extends Error {
  /** @param taskId the id that named no task */
  constructor(readonly taskId: string) {
    super(`scheduled task "${taskId}" does not exist`);
    this.name = 'UnknownTaskError';
  }
}

/** The wire shape of a stored task (`nextRunAt` only while enabled; no bookkeeping of the scheduler). */
export function publicTask(task: StoredTask): StoredTask {
  const { nextOccurrenceAt, scheduleAnchorAt: _anchor, ...rest } = task;
  delete rest.nextRunAt;
  return { ...rest, ...(task.enabled && nextOccurrenceAt !== undefined ? { nextRunAt: nextOccurrenceAt } : {}) };
}

/** The wire shape of a stored run. */
export function publicRun(run: StoredRun): StoredRun {
  const { claimedBy: _claimedBy, ...rest } = run;
  return rest as StoredRun;
}

/** Scheduled-task operations. */
export class ScheduleService {
  /** @param scheduler the started scheduler; @param clock the same clock the scheduler uses */
  constructor(
    private readonly scheduler: Scheduler,
    private readonly clock: SchedulerClock,
  ) {}

  /**
   * Creates a task. A task of the agent (`byAgent`) starts disabled whatever `enabled` says.
   * @throws InvalidScheduleError naming `schedule.expression`, `schedule.timeZone` or `schedule.at`
   */
  async create(input: NewTask, byAgent = false): Promise<StoredTask> {
    const now = this.clock.now();
    validateSchedule(input.schedule, now);
    const task: StoredTask = {
      id: newId('task'),
      conversationId: input.conversationId,
      ...(input.userId !== undefined ? { userId: input.userId } : {}),
      name: input.name,
      prompt: input.prompt,
      schedule: input.schedule,
      overlap: input.overlap ?? 'skip',
      missed: input.missed ?? 'runOnce',
      retry: input.retry ?? DEFAULT_RETRY_POLICY,
      enabled: byAgent ? false : (input.enabled ?? true),
      createdByAgent: byAgent,
      createdAt: now,
      updatedAt: now,
    };
    const next = occurrenceWhenSet(task.schedule, now);
    if (next !== undefined) task.nextOccurrenceAt = next;
    await this.scheduler.store.saveTask(task);
    this.scheduler.taskChanged(task);
    return task;
  }

  /** The task, or @throws UnknownTaskError */
  get(taskId: string): StoredTask {
    const task = this.scheduler.task(taskId);
    if (!task) throw new UnknownTaskError(taskId);
    return task;
  }

  /**
   * The conversation of a task, or undefined for an unknown task: the access control's task
   * lookup (`TaskConversationLookup` in platform/access), answering as {@link get} does.
   */
  async taskConversation(taskId: string): Promise<string | undefined> {
    return this.scheduler.task(taskId)?.conversationId;
  }

  /** Tasks of a conversation, oldest first. */
  list(conversationId: string): StoredTask[] {
    return this.scheduler.tasksOf(conversationId).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /**
   * Changes a task. A schedule different from the current one counts from now (an interval
   * without `startAt` first fires `everyMs` after the change); one equal to it, as a client
   * sending every field of a task gives, keeps the task's timing (docs/protocol.md,
   * `schedules/update`). @throws UnknownTaskError, InvalidScheduleError
   */
  async update(taskId: string, changes: TaskChanges): Promise<StoredTask> {
    const task = { ...this.get(taskId) };
    const now = this.clock.now();
    if (changes.schedule) validateSchedule(changes.schedule, now);
    const newSchedule = changes.schedule !== undefined && !isDeepStrictEqual(changes.schedule, task.schedule);
    Object.assign(task, Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)));
    task.updatedAt = now;
    if (newSchedule) {
      task.scheduleAnchorAt = now;
      this.setNext(task, occurrenceWhenSet(task.schedule, now));
    }
    return this.save(task);
  }

  /** Disables a task (a person's decision: a reason the server gave before is dropped). @throws UnknownTaskError */
  async pause(taskId: string): Promise<StoredTask> {
    const { disabledReason: _reason, ...task } = this.get(taskId);
    return this.save({ ...task, enabled: false, updatedAt: this.clock.now() });
  }

  /**
   * Enables a task, counting its next occurrence from now: the first after now, and an interval
   * without `startAt` first fires `everyMs` after the resume (docs/platform.md, "Run now, pause,
   * resume"). A task already enabled keeps its timing. A task the server disabled loses its
   * `disabledReason`; if its user still cannot reach the conversation, its next run disables
   * it again. @throws UnknownTaskError
   */
  async resume(taskId: string): Promise<StoredTask> {
    const now = this.clock.now();
    const { disabledReason: _reason, ...current } = this.get(taskId);
    const task: StoredTask = { ...current, enabled: true, updatedAt: now };
    if (!current.enabled) {
      task.scheduleAnchorAt = now;
      this.setNext(task, nextOccurrence(task.schedule, now, now));
    }
    return this.save(task);
  }

  /**
   * Disables every enabled task acting for `userId` (the user is being removed), giving
   * `reason` as each one's `disabledReason`. Their runs in progress go on to their end; what
   * would come after is refused by the scheduler's run check anyway.
   * @returns the tasks disabled
   */
  async disableTasksOfUser(userId: string, reason: string): Promise<StoredTask[]> {
    const now = this.clock.now();
    const disabled: StoredTask[] = [];
    for (const stored of await this.scheduler.store.listTasks()) {
      const task = this.scheduler.task(stored.id) ?? stored;
      if (task.userId !== userId || !task.enabled) continue;
      disabled.push(await this.save({ ...task, enabled: false, disabledReason: reason, updatedAt: now }));
    }
    return disabled;
  }

  /** Deletes a task and its history. @throws UnknownTaskError */
  async delete(taskId: string): Promise<void> {
    this.get(taskId);
    this.scheduler.taskDeleted(taskId);
    await this.scheduler.store.deleteTask(taskId);
  }

  /** Deletes every task of a conversation (it is being deleted); returns how many. */
  async deleteConversationTasks(conversationId: string): Promise<number> {
    const tasks = await this.scheduler.store.listTasks(conversationId);
    for (const task of tasks) {
      this.scheduler.taskDeleted(task.id);
      await this.scheduler.store.deleteTask(task.id);
    }
    return tasks.length;
  }

  /** Runs a task now. @throws UnknownTaskError */
  async runNow(taskId: string): Promise<StoredRun> {
    return this.scheduler.runNow(this.get(taskId));
  }

  /** Runs of a task, newest first. @throws UnknownTaskError */
  async history(taskId: string, limit = 50): Promise<StoredRun[]> {
    this.get(taskId);
    return this.scheduler.store.listRuns(taskId, limit);
  }

  private setNext(task: StoredTask, next: number | undefined): void {
    if (next === undefined) delete task.nextOccurrenceAt;
    else task.nextOccurrenceAt = next;
  }

  private async save(task: StoredTask): Promise<StoredTask> {
    await this.scheduler.store.saveTask(task);
    this.scheduler.taskChanged(task);
    return task;
  }
}

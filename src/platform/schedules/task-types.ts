/**
 * Stored shapes of scheduled tasks and their runs (docs/platform.md, "Scheduled tasks"). The
 * protocol schemas (src/protocol/schedules.ts) describe the same shapes on the wire.
 */
import type { ScheduledTask, ScheduleRun } from '../../protocol/schedules.js';

export type { ScheduledTask, ScheduleRun, TaskSchedule, OverlapPolicy, MissedPolicy, RetryPolicy, ScheduleRunStatus } from '../../protocol/schedules.js';

/** A task as stored: the wire shape plus the scheduler's bookkeeping. */
export interface StoredTask extends ScheduledTask {
  /** The occurrence the scheduler will claim next, ms since the epoch; absent when none is left (a `once` task that ran). */
  nextOccurrenceAt?: number;
  /**
   * When the task's schedule was last set (created or changed to a different schedule) or the
   * task last resumed, ms since the epoch: what an interval without `startAt` counts from.
   * Absent on tasks stored before it was kept: `createdAt` stands in.
   */
  scheduleAnchorAt?: number;
}

/** What an interval without `startAt` of `task` counts from, ms since the epoch (see {@link StoredTask.scheduleAnchorAt}). */
export function scheduleAnchor(task: StoredTask): number {
  return task.scheduleAnchorAt ?? task.createdAt;
}

/** A run as stored. `claimedBy` names the server process instance that holds the claim. */
export interface StoredRun extends ScheduleRun {
  /** Instance id of the server process that claimed (or last re-claimed) the run. */
  claimedBy: string;
}

/** Is a run finished (no more work will happen for it)? */
export function isFinalRunStatus(status: ScheduleRun['status']): boolean {
  return status !== 'claimed' && status !== 'dispatched' && status !== 'retrying' && status !== 'queued';
}

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

/**
 * When a task's schedule next fires. Cron expressions are read by `croner` as wall-clock time
 * in the task's IANA time zone, so daylight-saving changes move the instants: a local time
 * skipped by a spring-forward change fires at the first instant after the gap, and a local
 * time repeated by a fall-back change fires once, at its first instance.
 */
import { Cron } from 'croner';
import type { TaskSchedule } from './task-types.js';

/** A schedule that cannot be used, with the field at fault (`schedule.expression`, `schedule.timeZone`). */
export class InvalidScheduleError extends Error {
  /** @param field key path of the bad field, e.g. `schedule.timeZone` */
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'InvalidScheduleError';
  }
}

/**
 * How far in the past a one-time task's instant may be when the task is created or given that
 * schedule, ms. Such a task runs at once: a request for "in a moment" may arrive after its
 * instant. Further in the past is refused, as `at(1)` refuses a job destined in the past.
 */
export const ONCE_PAST_TOLERANCE_MS = 60_000;

/**
 * Checks a schedule being set at `now` (ms since the epoch; omitted, instants are not checked):
 * a one-time instant at most {@link ONCE_PAST_TOLERANCE_MS} in the past, a cron expression of
 * exactly five fields that croner accepts, and a time zone the runtime's ICU knows.
 * @throws InvalidScheduleError naming the field
 */
export function validateSchedule(schedule: TaskSchedule, now?: number): void {
  if (schedule.kind === 'once') {
    if (now !== undefined && schedule.at < now - ONCE_PAST_TOLERANCE_MS) {
      const late = Math.round((now - schedule.at) / 1000);
      throw new InvalidScheduleError('schedule.at', `${new Date(schedule.at).toISOString()} is ${late} s in the past; a one-time task may be set at most ${ONCE_PAST_TOLERANCE_MS / 1000} s late (it then runs at once)`);
    }
    return;
  }
  if (schedule.kind !== 'cron') return;
  try {
    new Intl.DateTimeFormat('en', { timeZone: schedule.timeZone });
  } catch {
    throw new InvalidScheduleError('schedule.timeZone', `"${schedule.timeZone}" is not an IANA time zone name (e.g. "Europe/Helsinki")`);
  }
  const fields = schedule.expression.trim().split(/\s+/);
  if (fields.length !== 5) throw new InvalidScheduleError('schedule.expression', `"${schedule.expression}" has ${fields.length} fields; expected 5 (minute hour day-of-month month day-of-week)`);
  try {
    new Cron(schedule.expression, { timezone: schedule.timeZone, paused: true });
  } catch (error) {
    throw new InvalidScheduleError('schedule.expression', `"${schedule.expression}": ${(error as Error).message}`);
  }
}

/**
 * When a schedule being set at `now` (a task created, or its schedule changed) first fires, ms
 * since the epoch: a one-time instant already passed (within {@link ONCE_PAST_TOLERANCE_MS},
 * checked by {@link validateSchedule}) is due at once, `now`; otherwise {@link nextOccurrence},
 * an interval without `startAt` counting from `now` (docs/protocol.md: "a new schedule counts
 * from now"). Without the first rule, a one-time task whose instant passed while its request was on its way was kept
 * with no next occurrence and never ran.
 */
export function occurrenceWhenSet(schedule: TaskSchedule, now: number): number | undefined {
  if (schedule.kind === 'once' && schedule.at <= now) return now;
  return nextOccurrence(schedule, now, now);
}

/**
 * The first occurrence strictly after `afterMs`, ms since the epoch; undefined when the
 * schedule has none left (a `once` instant already passed, or a cron that never matches again).
 * @param anchorAt ms since the epoch an interval without `startAt` counts from: when its
 *   schedule was set or the task resumed (`scheduleAnchor` of the stored task)
 */
export function nextOccurrence(schedule: TaskSchedule, afterMs: number, anchorAt: number): number | undefined {
  switch (schedule.kind) {
    case 'once':
      return schedule.at > afterMs ? schedule.at : undefined;
    case 'interval': {
      const start = schedule.startAt ?? anchorAt + schedule.everyMs;
      if (start > afterMs) return start;
      const steps = Math.floor((afterMs - start) / schedule.everyMs) + 1;
      return start + steps * schedule.everyMs;
    }
    case 'cron': {
      const next = new Cron(schedule.expression, { timezone: schedule.timeZone, paused: true }).nextRun(new Date(afterMs));
      return next ? next.getTime() : undefined;
    }
  }
}

/**
 * The scheduler's view of time: the current instant and one-shot timers. Injected so tests can
 * drive the scheduler with a fake clock instead of waiting.
 */

/** A pending timer, as returned by {@link SchedulerClock.setTimer}. */
export interface ClockTimer {
  /** Cancels the timer; a no-op when it already fired. */
  cancel(): void;
}

/** Current time and timers for the scheduler. */
export interface SchedulerClock {
  /** The current time, ms since the epoch. */
  now(): number;
  /** Calls `callback` once after `delayMs` ms (at least 0). */
  setTimer(callback: () => void, delayMs: number): ClockTimer;
}

/** Longest delay Node.js timers accept (2^31 - 1 ms, about 24.8 days); longer waits are re-armed. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** The system clock: `Date.now()` and Node.js timers (unref'd, so they never keep the process alive). */
export const systemClock: SchedulerClock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    const handle = setTimeout(callback, Math.min(Math.max(0, delayMs), MAX_TIMER_DELAY_MS));
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

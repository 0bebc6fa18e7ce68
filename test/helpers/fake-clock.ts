/**
 * A clock for tests: time moves only when the test says, and timers fire in order as it does.
 */
import type { ClockTimer, SchedulerClock } from '../../src/platform/schedules/clock.js';

interface PendingTimer {
  at: number;
  order: number;
  callback: () => void;
  cancelled: boolean;
}

/** A manually advanced clock implementing the scheduler's clock. */
export class FakeClock implements SchedulerClock {
  private timers: PendingTimer[] = [];
  private order = 0;

  /** @param current the starting time, ms since the epoch */
  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  setTimer(callback: () => void, delayMs: number): ClockTimer {
    const timer: PendingTimer = { at: this.current + Math.max(0, delayMs), order: this.order++, callback, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Time of the earliest pending timer, if any. */
  nextTimerAt(): number | undefined {
    const live = this.timers.filter((timer) => !timer.cancelled);
    return live.length ? Math.min(...live.map((timer) => timer.at)) : undefined;
  }

  /**
   * Moves time to `target`, firing each due timer at its own instant, and awaiting `settle`
   * after each so the work a timer starts can arm the next one.
   */
  async advanceTo(target: number, settle: () => Promise<void>): Promise<void> {
    for (;;) {
      this.timers = this.timers.filter((timer) => !timer.cancelled);
      const due = this.timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.current = Math.max(this.current, due.at);
      due.callback();
      await settle();
    }
    this.current = Math.max(this.current, target);
    await settle();
  }
}

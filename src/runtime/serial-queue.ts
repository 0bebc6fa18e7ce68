/**
 * Runs async tasks one at a time in submission order. Each conversation and each session
 * owns one (SPEC §3: single owner, no locks), so their state changes and log appends happen
 * in a defined order without locking.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /** True when no task is queued or running. */
  get isIdle(): boolean {
    return this.pending === 0;
  }

  /**
   * Schedules a task after every task submitted before it. A failing task rejects its own
   * promise only; later tasks still run.
   */
  run<T>(task: () => Promise<T> | T): Promise<T> {
    this.pending++;
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined).finally(() => this.pending--);
    return result;
  }

  /** Resolves once every task submitted so far has settled. */
  async drain(): Promise<void> {
    await this.run(() => undefined);
  }
}

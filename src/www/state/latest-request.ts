/**
 * Requests whose outcomes are shown in one place (a drawer's error line, its busy state): only
 * the outcome of the request started last is applied. Without it, an older request answering
 * after a newer one (the server took longer on it) replaces what the newer one showed: the
 * success of a click sent before a refused navigation clears the reason for the refusal.
 */
export class LatestRequest {
  private started = 0;

  /**
   * Runs `request` and hands its outcome to `onAnswer` or `onFailure`, then calls `onSettled`,
   * unless another request was started through this object in the meantime: then the outcome is
   * dropped (the later request's handlers apply instead).
   * @param request - starts the request; a throw or a rejection is its failure
   * @param handlers - what to do with the outcome when it is still the latest
   * @returns once the request has settled; never rejects
   */
  async run<T>(request: () => Promise<T>, handlers: { onAnswer(value: T): void; onFailure(failure: unknown): void; onSettled?(): void }): Promise<void> {
    const number = ++this.started;
    const isLatest = () => number === this.started;
    try {
      const value = await request();
      if (isLatest()) handlers.onAnswer(value);
    } catch (failure) {
      if (isLatest()) handlers.onFailure(failure);
    } finally {
      if (isLatest()) handlers.onSettled?.();
    }
  }

  /** Drops the outcome of every request running now (what they were for is gone: the view moved on). */
  dropPending(): void {
    this.started += 1;
  }
}

/**
 * Runs tasks one after another: read-check-write sequences of a store (e.g. "is this the last
 * administrator?" then "demote") must not interleave with another one. The platform layer
 * depends only on storage and configuration (docs/architecture.md), hence its own small queue
 * rather than the runtime's.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` after every task queued before it; resolves or rejects with its outcome. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

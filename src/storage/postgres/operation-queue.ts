/**
 * Orders a storage's writes the way the LogStorage contract asks (SPEC §4): writes to one
 * stream run in call order, writes to different streams run in parallel, and a write to a
 * whole path (`deletePath`) runs after every write already queued below it and before every
 * write queued below it later.
 */
import { isWithinLogPath } from '../log-validation.js';

interface PathBarrier {
  path: string;
  done: Promise<unknown>;
}

/** Per-stream promise chains plus path barriers. */
export class StreamOperationQueue {
  private readonly tails = new Map<string, { path: string; done: Promise<unknown> }>();
  private readonly barriers = new Set<PathBarrier>();

  /** Runs `operation` after the stream's earlier operations and any path operation covering it. */
  stream<T>(path: string, stream: string, operation: () => Promise<T>): Promise<T> {
    const key = `${path}\0${stream}`;
    const waitFor = [this.tails.get(key)?.done, ...this.barriersCovering(path)];
    const result = Promise.all(waitFor).then(operation);
    const done = result.catch(() => undefined);
    this.tails.set(key, { path, done });
    done
      .then(() => {
        if (this.tails.get(key)?.done === done) this.tails.delete(key);
      })
      .catch(() => undefined);
    return result;
  }

  /** Runs `operation` after every queued operation at or below `path`; later ones there wait for it. */
  path<T>(path: string, operation: () => Promise<T>): Promise<T> {
    const waitFor = [...this.tails.values()].filter((tail) => isWithinLogPath(tail.path, path)).map((tail) => tail.done);
    for (const barrier of this.barriers) {
      if (isWithinLogPath(barrier.path, path) || isWithinLogPath(path, barrier.path)) waitFor.push(barrier.done);
    }
    const result = Promise.all(waitFor).then(operation);
    const barrier: PathBarrier = { path, done: result.catch(() => undefined) };
    this.barriers.add(barrier);
    barrier.done.then(() => this.barriers.delete(barrier)).catch(() => undefined);
    return result;
  }

  private barriersCovering(path: string): Promise<unknown>[] {
    return [...this.barriers].filter((barrier) => isWithinLogPath(path, barrier.path)).map((barrier) => barrier.done);
  }
}

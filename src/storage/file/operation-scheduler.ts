/**
 * The order in which FileLogStorage runs its operations: appends, replacements and deletions
 * of one stream file run one after another (different files in parallel), a path deletion
 * holds back every operation under the path until it is done, and closing waits for the
 * operations in progress. Only the ordering lives here; what each operation does to the
 * files stays in `file-log-storage.ts`.
 */

const noop = (): void => undefined;

/** A path deletion in progress: operations under `path` wait for `done`. */
interface PathDeletion {
  path: string;
  done: Promise<void>;
}

/**
 * Queues, deletion barriers and the set of operations in progress of one FileLogStorage.
 * Paths are log paths (`a/b`), compared with the `isWithin` rule given to the constructor;
 * file paths are absolute stream file names, each with its own queue.
 */
export class OperationScheduler {
  /** Per stream file: the tail of its queue of appends and deletions. */
  private readonly queues = new Map<string, Promise<void>>();
  /** Path deletions in progress; operations under them wait. */
  private readonly deletions = new Set<PathDeletion>();
  private readonly active = new Set<Promise<unknown>>();
  private closed = false;

  /**
   * @param owner names the storage in the error of an operation after {@link close}
   *   (`<owner> is closed`)
   * @param isWithin true when the log path `path` is `ancestor` or lies below it
   */
  constructor(
    private readonly owner: string,
    private readonly isWithin: (path: string, ancestor: string) => boolean,
  ) {}

  /**
   * Starts `operation` and keeps it in the set {@link close} waits for. A synchronous throw
   * of `operation` (such as a validation error) becomes the returned rejection.
   * @throws (as a rejection) Error `<owner> is closed` after {@link close}
   */
  track<R>(operation: () => Promise<R>): Promise<R> {
    if (this.closed) return Promise.reject(new Error(`${this.owner} is closed`));
    let result: Promise<R>;
    try {
      result = operation();
    } catch (error) {
      return Promise.reject(error);
    }
    this.active.add(result);
    const forget = (): void => {
      this.active.delete(result);
    };
    result.then(forget, forget);
    return result;
  }

  /**
   * Runs `operation` once no deletion covering `path` is in progress. The check and the
   * start of `operation` happen in the same synchronous step, so a deletion registered
   * later always sees the operation in the queues it waits for.
   */
  afterDeletions<R>(path: string, operation: () => Promise<R>): Promise<R> {
    for (const deletion of this.deletions) {
      if (this.isWithin(path, deletion.path)) {
        return deletion.done.then(() => this.afterDeletions(path, operation), () => this.afterDeletions(path, operation));
      }
    }
    return operation();
  }

  /** Runs `operation` after everything queued before it for the same stream file, settled or not. */
  enqueue<R>(filePath: string, operation: () => Promise<R>): Promise<R> {
    const previous = this.queues.get(filePath) ?? Promise.resolve();
    const result = previous.then(operation);
    const settled = result.then(noop, noop);
    this.queues.set(filePath, settled);
    // `settled` never rejects: it swallows the operation's outcome, which `result` carries.
    settled.then(() => {
      if (this.queues.get(filePath) === settled) this.queues.delete(filePath);
    }, noop);
    return result;
  }

  /**
   * Registers the deletion of `path` at once (operations under it arriving from now on wait
   * for it), then runs `remove` after the earlier deletions overlapping the path and every
   * queued operation on a file for which `isUnder` holds, whatever their outcome.
   * @param isUnder true for the stream files that lie under `path`
   * @param remove the deletion itself; its rejection is the returned one
   */
  runDeletion(path: string, isUnder: (filePath: string) => boolean, remove: () => Promise<void>): Promise<void> {
    const earlier = [...this.deletions].filter((other) => this.isWithin(other.path, path) || this.isWithin(path, other.path));
    const deletion: PathDeletion = {
      path,
      done: (async () => {
        await Promise.allSettled(earlier.map((other) => other.done));
        await Promise.allSettled([...this.queues].filter(([filePath]) => isUnder(filePath)).map(([, queue]) => queue));
        await remove();
      })(),
    };
    this.deletions.add(deletion);
    return deletion.done.finally(() => this.deletions.delete(deletion));
  }

  /**
   * Refuses new operations from now on, then waits for those in progress to settle.
   * @returns false (without waiting) when it was closed already
   */
  async close(): Promise<boolean> {
    if (this.closed) return false;
    this.closed = true;
    await Promise.allSettled([...this.active]);
    return true;
  }
}

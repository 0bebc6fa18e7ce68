/**
 * Bookkeeping shared by the staged storages: which names are staged, the operations running
 * on each, and the hand-over (commit or discard) that must not overlap with them.
 */

interface StagedEntry {
  /** Operations routed to the staged side that have not finished. */
  inFlight: Set<Promise<unknown>>;
  /** The commit or discard in progress; operations wait for it, then route again. */
  transition?: Promise<void>;
}

const ignore = (): void => undefined;

/**
 * Tracks staged names (log paths, or namespace + key). An operation on a staged name runs on
 * the staged side; while its name is being committed or discarded it waits and then runs on
 * whichever side the name belongs to afterwards. A hand-over waits for the operations
 * already running on the staged side, so nothing written there is left behind.
 */
export class StagingRegistry {
  private readonly entries = new Map<string, StagedEntry>();

  /** @throws Error when `name` is already staged. */
  stage(name: string, describe: string): void {
    if (this.entries.has(name)) throw new Error(`${describe} is already staged`);
    this.entries.set(name, { inFlight: new Set() });
  }

  /** Whether `name` is staged (including while its commit runs). */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Every staged name. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Runs `staged` when `resolve()` finds a staged name, else `real`. Waits for a hand-over in
   * progress and resolves again afterwards. `resolve` is called each time routing is decided.
   */
  route<R>(resolve: () => string | undefined, staged: () => Promise<R>, real: () => Promise<R>): Promise<R> {
    const name = resolve();
    const entry = name === undefined ? undefined : this.entries.get(name);
    if (entry === undefined) return real();
    if (entry.transition !== undefined) {
      return entry.transition.then(ignore, ignore).then(() => this.route(resolve, staged, real));
    }
    const result = staged();
    entry.inFlight.add(result);
    const settle = (): void => {
      entry.inFlight.delete(result);
    };
    result.then(settle, settle);
    return result;
  }

  /**
   * Runs an operation over several names at once (a batch, a listing): waits until none of
   * them is being handed over, then calls `operation` with those that are staged, in the same
   * synchronous step, and counts it as running on each of them.
   */
  async partition<R>(names: Iterable<string>, operation: (staged: Set<string>) => Promise<R>): Promise<R> {
    const list = [...names];
    while (true) {
      const busy = list.map((name) => this.entries.get(name)?.transition).filter((transition) => transition !== undefined);
      if (busy.length === 0) break;
      await Promise.allSettled(busy);
    }
    const staged = new Set(list.filter((name) => this.entries.has(name)));
    const result = operation(staged);
    for (const name of staged) {
      const entry = this.entries.get(name) as StagedEntry;
      entry.inFlight.add(result);
      const settle = (): void => {
        entry.inFlight.delete(result);
      };
      result.then(settle, settle);
    }
    return result;
  }

  /**
   * Hands `name` over: waits for its running operations, runs `work`, and on success
   * unstages it (operations that waited then go to the real side). On failure the name
   * stays staged and the error is rethrown.
   *
   * @throws Error when `name` is not staged or already being handed over.
   */
  async handOver(name: string, describe: string, work: () => Promise<void>): Promise<void> {
    const entry = this.entries.get(name);
    if (entry === undefined) throw new Error(`${describe} is not staged`);
    if (entry.transition !== undefined) throw new Error(`${describe} is already being committed or discarded`);
    const transition = (async () => {
      try {
        await Promise.allSettled([...entry.inFlight]);
        await work();
        this.entries.delete(name);
      } finally {
        entry.transition = undefined;
      }
    })();
    entry.transition = transition;
    await transition;
  }
}

/**
 * Serialising file-changing tool calls per path on one executor. Two `apply_patch` calls on
 * the same file — two calls in one model reply, or calls from two conversations — would
 * otherwise both read the old text and the later write would drop the earlier edit.
 *
 * The table belongs to the executor object: the runtime creates each configured executor once
 * and shares it between conversations, so every call on that executor's files meets the same
 * locks. Keys are real paths (symlinks resolved), so two spellings of one file share a lock.
 */
import path from 'node:path';
import { underlyingExecutor, type Executor, type ExecutorFileSystem } from './executor.js';

/** Locks of one executor. */
export class PathLocks {
  private readonly tails = new Map<string, Promise<void>>();
  /** Counter of writes, and the count at each key's last write, for `changedSince`. */
  private writeCounter = 0;
  private readonly lastWrites = new Map<string, number>();
  private activeCalls = 0;

  /**
   * Runs `work` while holding the locks of every key, acquired in sorted order so that two
   * calls locking overlapping sets cannot wait for each other. Calls on the same key run one
   * after the other, in the order they asked.
   * @param keys lock keys (real paths); duplicates are fine
   * @param work what to do under the locks; its result or error is passed through
   */
  async withLocks<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const releases: (() => void)[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.acquire(key));
      return await work();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  /**
   * Marks the start of a call that may later ask `changedSince`; returns its mark.
   * Pair with `endCall`.
   */
  beginCall(): number {
    this.activeCalls += 1;
    return this.writeCounter;
  }

  /** Ends a call begun with `beginCall`; the write record is dropped once no call is active. */
  endCall(): void {
    this.activeCalls -= 1;
    if (this.activeCalls === 0) this.lastWrites.clear();
  }

  /**
   * Records that a tool call wrote the file of `key`.
   * @returns the write's mark: a later `changedSince(key, mark)` is true only for writes after it
   */
  noteWrite(key: string): number {
    this.writeCounter += 1;
    this.lastWrites.set(key, this.writeCounter);
    return this.writeCounter;
  }

  /** Whether another tool call wrote `key` after `mark` (from `beginCall`). */
  changedSince(key: string, mark: number): boolean {
    return (this.lastWrites.get(key) ?? 0) > mark;
  }

  private async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.tails.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}

const tables = new WeakMap<Executor, PathLocks>();

/**
 * The lock table of an executor, created on first use and kept as long as the executor
 * object lives; views of one executor share it (see `underlyingExecutor`).
 * @param executor the executor whose files are about to change
 */
export function pathLocksOf(executor: Executor): PathLocks {
  // Every view of one executor (a conversation's, with its project's environment) shares its locks.
  const machine = underlyingExecutor(executor);
  let table = tables.get(machine);
  if (table === undefined) {
    table = new PathLocks();
    tables.set(machine, table);
  }
  return table;
}

/**
 * The lock key of a path: its real path. For a path that does not exist yet, the real path of
 * its deepest existing ancestor followed by the rest as written; with `entry`, the final
 * component itself is not followed (a symlink being removed is its own entry).
 * @param fileSystem the executor's file system
 * @param absolutePath an absolute path on it
 * @param intent `follow` to key the file a path leads to, `entry` for the directory entry
 */
export async function lockKeyOf(fileSystem: ExecutorFileSystem, absolutePath: string, intent: 'follow' | 'entry'): Promise<string> {
  const suffix: string[] = [];
  let existing = path.posix.resolve(absolutePath);
  if (intent === 'entry' && existing !== '/') {
    suffix.unshift(path.posix.basename(existing));
    existing = path.posix.dirname(existing);
  }
  for (;;) {
    try {
      return path.posix.join(await fileSystem.realPath(existing), ...suffix);
    } catch {
      if (existing === '/') return path.posix.join('/', ...suffix);
      suffix.unshift(path.posix.basename(existing));
      existing = path.posix.dirname(existing);
    }
  }
}

/**
 * Staged LogStorage (SPEC §4): a new conversation's streams live in memory until it gets its
 * first message; then they are copied to real storage and every read and write switches over,
 * so an empty conversation never leaves anything on disk.
 */
import type { LogEntry, LogReadOptions, LogStorage } from '../log-storage.js';
import { isWithinLogPath, joinLogPath, sortNames, validateLogPath, validateStreamId } from '../log-validation.js';
import { SqliteLogStorage } from '../sqlite/sqlite-log-storage.js';
import { StagingRegistry } from './staging-registry.js';

/** Entries copied per batch when a staged path is committed. */
const COMMIT_BATCH_ENTRIES = 1000;

/** Options of {@link StagedLogStorage}. */
export interface StagedLogStorageOptions {
  /** Where staged paths live; default a new in-memory {@link SqliteLogStorage}. Closed by `close`. */
  memory?: LogStorage;
}

/** Every (path, stream) under `path` in `storage`, recursively. */
async function collectStreams(storage: LogStorage, path: string): Promise<{ path: string; stream: string }[]> {
  const found = (await storage.listStreams(path)).map((stream) => ({ path, stream }));
  for (const child of await storage.listPaths(path)) found.push(...(await collectStreams(storage, joinLogPath(path, child))));
  return found;
}

/**
 * A LogStorage that keeps staged paths in memory and everything else in a real LogStorage.
 *
 * `stage(path)` marks a path (with everything below it) as staged; reads and writes under it
 * go to memory. `commit(path)` copies every stream under it to the real storage, keeping each
 * entry's seq, then switches the path over; `discard(path)` drops it. Operations arriving
 * during a commit wait for it and then go to the real side. Listings of a parent merge both
 * sides; a staged path appears in them once it holds at least one entry (as in the backends).
 */
export class StagedLogStorage implements LogStorage {
  private readonly memory: LogStorage;
  private readonly registry = new StagingRegistry();

  /**
   * @param real the durable storage that committed paths go to (closed by `close`).
   * @param options see {@link StagedLogStorageOptions}.
   */
  constructor(private readonly real: LogStorage, options: StagedLogStorageOptions = {}) {
    this.memory = options.memory ?? new SqliteLogStorage(':memory:');
  }

  /**
   * Stages a path: until commit or discard, it and everything below it live in memory.
   * The path should be new: entries the real storage already holds there are hidden while
   * staged, and a commit refuses to mix with them.
   *
   * @throws Error when the path is invalid, or it or an ancestor or descendant is already staged.
   */
  stage(path: string): void {
    validateLogPath(path);
    const overlapping = this.registry.names().find((other) => isWithinLogPath(path, other) || isWithinLogPath(other, path));
    if (overlapping !== undefined) {
      throw new Error(`Cannot stage log path ${JSON.stringify(path)}: ${JSON.stringify(overlapping)} is already staged`);
    }
    this.registry.stage(path, `Log path ${JSON.stringify(path)}`);
  }

  /** Whether `path` lies in a staged path. */
  isStaged(path: string): boolean {
    return this.stagedRoot(path) !== undefined;
  }

  /**
   * Copies every stream under a staged path to the real storage (same seq numbers), then
   * switches the path to it and frees the memory. Nothing is written when the path holds no
   * entries. On failure the streams copied so far are deleted from the real storage again
   * and the path stays staged.
   *
   * @throws Error when the path is not staged, or the real storage already has entries in
   *   one of the streams (seq numbers could not be kept), or the copy fails.
   */
  async commit(path: string): Promise<void> {
    validateLogPath(path);
    await this.registry.handOver(path, `Log path ${JSON.stringify(path)}`, async () => {
      const streams = await collectStreams(this.memory, path);
      for (const { path: streamPath, stream } of streams) {
        if ((await this.real.lastSeq(streamPath, stream)) > 0) {
          throw new Error(`Cannot commit log path ${JSON.stringify(path)}: stream ${JSON.stringify(stream)} in ${JSON.stringify(streamPath)} already has entries in real storage`);
        }
      }
      const copied: { path: string; stream: string }[] = [];
      try {
        for (const target of streams) {
          copied.push(target);
          await this.copyStream(target.path, target.stream);
        }
      } catch (error) {
        for (const target of copied) await this.real.deleteStream(target.path, target.stream).catch(() => undefined);
        throw error;
      }
      await this.memory.deletePath(path);
    });
  }

  /**
   * Drops a staged path and everything in memory under it; the path is then unstaged.
   * @throws Error when the path is not staged.
   */
  async discard(path: string): Promise<void> {
    validateLogPath(path);
    await this.registry.handOver(path, `Log path ${JSON.stringify(path)}`, () => this.memory.deletePath(path));
  }

  /** See {@link LogStorage.append}. */
  append<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    return this.routeStream(path, stream, (storage) => storage.append(path, stream, values));
  }

  /** See {@link LogStorage.read}. */
  /** See {@link LogStorage.replaceStream}: done by whichever storage holds the path now. */
  replaceStream<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    return this.routeStream(path, stream, (storage) => storage.replaceStream(path, stream, values));
  }

  read<T = unknown>(path: string, stream: string, options?: LogReadOptions): Promise<LogEntry<T>[]> {
    return this.routeStream(path, stream, (storage) => storage.read<T>(path, stream, options));
  }

  /** See {@link LogStorage.lastSeq}. */
  lastSeq(path: string, stream: string): Promise<number> {
    return this.routeStream(path, stream, (storage) => storage.lastSeq(path, stream));
  }

  /** See {@link LogStorage.deleteStream}. */
  deleteStream(path: string, stream: string): Promise<void> {
    return this.routeStream(path, stream, (storage) => storage.deleteStream(path, stream));
  }

  /** See {@link LogStorage.listStreams}. */
  async listStreams(path: string): Promise<string[]> {
    validateLogPath(path);
    return this.routePath(path, (storage) => storage.listStreams(path));
  }

  /** See {@link LogStorage.listPaths}: the real children plus staged paths below `path` that hold entries. */
  async listPaths(path: string): Promise<string[]> {
    validateLogPath(path);
    if (this.stagedRoot(path) !== undefined) return this.routePath(path, (storage) => storage.listPaths(path));
    return this.registry.partition(this.stagedBelow(path), async (staged) => {
      const children = new Set(await this.real.listPaths(path));
      for (const root of staged) {
        if ((await collectStreams(this.memory, root)).length > 0) {
          children.add((path === '' ? root : root.slice(path.length + 1)).split('/')[0] as string);
        }
      }
      return sortNames(children);
    });
  }

  /** See {@link LogStorage.deletePath}. Staged paths below `path` are emptied but stay staged. */
  async deletePath(path: string): Promise<void> {
    validateLogPath(path);
    if (this.stagedRoot(path) !== undefined) return this.routePath(path, (storage) => storage.deletePath(path));
    await this.registry.partition(this.stagedBelow(path), async (staged) => {
      await this.real.deletePath(path);
      for (const root of staged) await this.memory.deletePath(root);
    });
  }

  /** Closes the memory and the real storage; staged data is gone. */
  async close(): Promise<void> {
    await Promise.allSettled([this.memory.close()]);
    await this.real.close();
  }

  private stagedRoot(path: string): string | undefined {
    const segments = path === '' ? [] : path.split('/');
    for (let depth = 0; depth <= segments.length; depth += 1) {
      const candidate = segments.slice(0, depth).join('/');
      if (this.registry.has(candidate)) return candidate;
    }
    return undefined;
  }

  private stagedBelow(path: string): string[] {
    return this.registry.names().filter((root) => root !== path && isWithinLogPath(root, path));
  }

  private routeStream<R>(path: string, stream: string, operation: (storage: LogStorage) => Promise<R>): Promise<R> {
    try {
      validateLogPath(path);
      validateStreamId(stream, path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.routePath(path, operation);
  }

  private routePath<R>(path: string, operation: (storage: LogStorage) => Promise<R>): Promise<R> {
    return this.registry.route(
      () => this.stagedRoot(path),
      () => operation(this.memory),
      () => operation(this.real),
    );
  }

  private async copyStream(path: string, stream: string): Promise<void> {
    let after = 0;
    while (true) {
      const entries = await this.memory.read(path, stream, { after, limit: COMMIT_BATCH_ENTRIES });
      if (entries.length === 0) return;
      const stored = await this.real.append(path, stream, entries.map((entry) => entry.value));
      stored.forEach((entry, index) => {
        if (entry.seq !== entries[index]?.seq) {
          throw new Error(`Commit of stream ${JSON.stringify(stream)} in ${JSON.stringify(path)} could not keep seq ${String(entries[index]?.seq)} (got ${entry.seq})`);
        }
      });
      after = (entries.at(-1) as LogEntry).seq;
    }
  }
}

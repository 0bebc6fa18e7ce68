/**
 * LogStorage on plain files (SPEC §4): one JSON Lines file per stream at
 * `<root>/<path>/<stream>.jsonl`, one directory per path. The on-disk format and the
 * crash-safety rules are described in `docs/storage.md`.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import nodePath from 'node:path';
import { defaultLogProblemListener } from '../log-problems.js';
import type { LogEntry, LogProblemListener, LogReadOptions, LogStorage } from '../log-storage.js';
import {
  STREAM_FILE_SUFFIX,
  isWithinLogPath,
  normalizeReadOptions,
  serializeLogValues,
  validateLogPath,
  validateStreamId,
} from '../log-validation.js';
import { listChildPathNames, listStreamNames } from './directory-listing.js';
import { FileHandlePool, type FileLease } from './file-handle-pool.js';
import {
  appendDurably,
  closeDescriptor,
  ensureDirectory,
  openDescriptor,
  removeEmptyDirectories,
  removePathDirectory,
  syncDescriptor,
  readAt,
  syncDirectory,
  TORN_TAIL_SUFFIX,
  truncateDescriptor,
  writeAllAt,
} from './file-io.js';
import { OperationScheduler } from './operation-scheduler.js';
import { asUnreadable } from './stream-file-access.js';
import type { StreamState } from './stream-state.js';
import { StreamStateCache } from './stream-state-cache.js';
import { readStreamBackward, readStreamForward } from './stream-reads.js';

/** Options of {@link FileLogStorage}. */
export interface FileLogStorageOptions {
  /**
   * Receives torn tails and corrupt lines found in stream files. Default: a process warning
   * (`process.emitWarning`, code `OPENVAALA_LOG_PROBLEM`).
   */
  onProblem?: LogProblemListener;
  /**
   * Idle stream files kept open between operations; default 256. What is known of a file (its
   * last seq and length) is kept as long as it stays open, and read again from its tail after.
   */
  maximumOpenFiles?: number;
}

const noop = (): void => undefined;

/**
 * Append-only JSON Lines streams on the local file system.
 *
 * Each line is `{"seq":N,"value":V}` followed by `\n`. An append writes its whole batch
 * with one write at the end of the last complete line, fsyncs the file (and, when the file
 * or directories were created, their parent directories) and only then resolves. Appends to
 * one stream run one after another; different streams run in parallel. Per-stream state
 * (last seq, byte length, a sparse seq → offset index) is cached after the first open, so
 * no append or tail read scans the file. Damaged data never makes a read throw: it is
 * skipped and reported through `onProblem` (SPEC §4). A stream file that cannot be read at
 * all (a directory, a named pipe or a dangling link in its place, a permission or I/O error)
 * fails the operation with an UnreadableStreamError naming the file, and is left untouched.
 *
 * This process must be the only writer of the root directory (the server's lock file
 * guarantees it); files changed behind its back are not noticed until it is reopened.
 */
export class FileLogStorage implements LogStorage {
  private readonly root: string;
  private readonly handles: FileHandlePool;
  private readonly states: StreamStateCache;
  /** Per-file queues, path deletion barriers and the operations `close` waits for. */
  private readonly operations: OperationScheduler;
  /** Directories created for a file, to fsync before its first append is acknowledged. */
  private readonly unsyncedDirectories = new Map<string, Set<string>>();
  /** Files whose directory entries (up to the root) this process has fsynced. */
  private readonly durableEntries = new Set<string>();

  /**
   * @param rootDirectory directory holding every path; created on the first append.
   * @param options see {@link FileLogStorageOptions}.
   */
  constructor(rootDirectory: string, options: FileLogStorageOptions = {}) {
    if (typeof rootDirectory !== 'string' || rootDirectory === '') {
      throw new Error('FileLogStorage needs a root directory');
    }
    this.root = nodePath.resolve(rootDirectory);
    // What is kept per stream file (its state, whether its directory entries are synced) is kept
    // only while its descriptor is pooled: a long-running server touches ever more files.
    this.handles = new FileHandlePool(options.maximumOpenFiles ?? 256, (filePath) => {
      this.states.release(filePath);
      this.durableEntries.delete(filePath);
    });
    this.states = new StreamStateCache(this.handles, options.onProblem ?? defaultLogProblemListener);
    this.operations = new OperationScheduler(`FileLogStorage at ${this.root}`, isWithinLogPath);
  }

  /** The absolute file that holds a stream (it may not exist yet). */
  streamFilePath(path: string, stream: string): string {
    const segments = validateLogPath(path);
    validateStreamId(stream, path);
    return nodePath.join(this.root, ...segments, stream + STREAM_FILE_SUFFIX);
  }

  /** See {@link LogStorage.append}. Errors name the path and stream; a failed batch is rolled back. */
  append<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    return this.operations.track(() => {
      const filePath = this.streamFilePath(path, stream);
      const texts = serializeLogValues(path, stream, values);
      if (texts.length === 0) return Promise.resolve([]);
      return this.operations.afterDeletions(path, () =>
        this.operations.enqueue(filePath, () => this.appendNow(path, stream, filePath, values, texts)),
      );
    });
  }

  /** See {@link LogStorage.read}. Both cursors may be combined to read a bounded range. */
  read<T = unknown>(path: string, stream: string, options?: LogReadOptions): Promise<LogEntry<T>[]> {
    return this.operations.track(() => {
      const filePath = this.streamFilePath(path, stream);
      const normalized = normalizeReadOptions(options);
      return this.operations.afterDeletions(path, async () => {
        if (normalized.limit === 0) return [];
        return this.withStream(path, stream, filePath, async (state, fd) => {
          const onCorrupt = (offset: number, reason: string): Promise<void> =>
            this.states.report(state, fd, 'corrupt_line', offset, `corrupt line skipped: ${reason}`);
          const read = normalized.direction === 'forward' ? readStreamForward : readStreamBackward;
          return (await read(fd, state, normalized, onCorrupt)) as LogEntry<T>[];
        }, []);
      });
    });
  }

  /** See {@link LogStorage.lastSeq}. */
  lastSeq(path: string, stream: string): Promise<number> {
    return this.operations.track(() => {
      const filePath = this.streamFilePath(path, stream);
      return this.operations.afterDeletions(path, () =>
        this.withStream(path, stream, filePath, async (state) => state.lastSeq, 0),
      );
    });
  }

  /** See {@link LogStorage.listStreams}: the `.jsonl` files of the path's directory. */
  listStreams(path: string): Promise<string[]> {
    return this.operations.track(() => listStreamNames(this.root, path));
  }

  /** See {@link LogStorage.listPaths}: returns child names (single segments), not full paths. */
  listPaths(path: string): Promise<string[]> {
    return this.operations.track(() => listChildPathNames(this.root, path));
  }

  /**
   * See {@link LogStorage.replaceStream}. The new content is written to a temporary file next
   * to the stream's (`<stream>.jsonl.replace-<random>`, never listed as a stream), fsynced,
   * then renamed over the stream file and the directory fsynced: a crash before the rename
   * leaves the old file whole (the temporary file is an orphan, ignored), after it the new one.
   */
  replaceStream<T>(path: string, stream: string, values: T[]): Promise<LogEntry<T>[]> {
    return this.operations.track(() => {
      const filePath = this.streamFilePath(path, stream);
      const texts = serializeLogValues(path, stream, values);
      const segments = validateLogPath(path);
      return this.operations.afterDeletions(path, () =>
        this.operations.enqueue(filePath, async () => {
          await ensureDirectory(this.root, segments);
          const temporary = `${filePath}.replace-${randomBytes(6).toString('hex')}`;
          const text = texts.map((value, index) => `{"seq":${index + 1},"value":${value}}\n`).join('');
          try {
            const fd = await openDescriptor(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL);
            try {
              await writeAllAt(fd, Buffer.from(text, 'utf8'), 0);
              await syncDescriptor(fd);
            } finally {
              await closeDescriptor(fd);
            }
            await fs.promises.rename(temporary, filePath);
          } catch (error) {
            await fs.promises.unlink(temporary).catch(noop);
            throw new Error(`Replacing stream ${JSON.stringify(stream)} in path ${JSON.stringify(path)} failed: ${(error as Error).message}`, { cause: error });
          }
          // Cached offsets and open descriptors belong to the old file. Dropped after the rename,
          // not before: a read in between would open the old file again and keep it pooled.
          this.forgetStream(filePath);
          await this.handles.forget(filePath);
          for (let directory = nodePath.dirname(filePath); directory.startsWith(this.root); directory = nodePath.dirname(directory)) {
            await syncDirectory(directory);
            if (directory === this.root) break;
          }
          this.durableEntries.add(filePath);
          return values.map((value, index) => ({ seq: index + 1, value }));
        }),
      );
    });
  }

  /** See {@link LogStorage.deleteStream}; waits for the stream's queued appends first. */
  deleteStream(path: string, stream: string): Promise<void> {
    return this.operations.track(() => {
      const filePath = this.streamFilePath(path, stream);
      const segments = validateLogPath(path);
      return this.operations.afterDeletions(path, () =>
        this.operations.enqueue(filePath, async () => {
          let existed = true;
          try {
            await fs.promises.unlink(filePath);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
            existed = false;
          } finally {
            // After the unlink, not before: a read in between would open the file again and keep it pooled.
            this.forgetStream(filePath);
            await this.handles.forget(filePath);
          }
          if (!existed) return;
          await syncDirectory(nodePath.dirname(filePath)).catch(noop);
          await removeEmptyDirectories(this.root, segments);
        }),
      );
    });
  }

  /**
   * See {@link LogStorage.deletePath}. Waits for queued appends under the path, holds back new
   * operations under it until done, then removes the directory and any parent left empty.
   * The root path `''` empties the root directory.
   */
  deletePath(path: string): Promise<void> {
    return this.operations.track(() => {
      const segments = validateLogPath(path);
      const directory = nodePath.join(this.root, ...segments);
      const isUnder = (filePath: string): boolean => segments.length === 0 || filePath.startsWith(directory + nodePath.sep);
      return this.operations.runDeletion(path, isUnder, async () => {
        try {
          await removePathDirectory(this.root, segments);
        } finally {
          // After the removal, not before: a read still opening a file under the path must not keep it pooled.
          const known = new Set([...this.states.cachedFiles(), ...this.unsyncedDirectories.keys(), ...this.durableEntries]);
          for (const filePath of known) if (isUnder(filePath)) this.forgetStream(filePath);
          await this.handles.forgetWhere(isUnder);
        }
      });
    });
  }

  /** Waits for operations in progress, then closes every file. Later calls throw. Idempotent. */
  async close(): Promise<void> {
    if (!(await this.operations.close())) return;
    await this.handles.closeAll();
    this.states.clear();
  }

  private forgetStream(filePath: string): void {
    this.states.forget(filePath);
    this.unsyncedDirectories.delete(filePath);
    this.durableEntries.delete(filePath);
  }

  /** Runs `operation` with the stream's state and descriptor; `missing` when the file does not exist. */
  private async withStream<R>(
    path: string,
    stream: string,
    filePath: string,
    operation: (state: StreamState, fd: number) => Promise<R>,
    missing: R,
  ): Promise<R> {
    const lease = await this.handles.acquire(filePath, false);
    if (lease === undefined) return missing;
    try {
      return await operation(await this.states.stateFor(path, stream, filePath, lease), lease.fd);
    } catch (error) {
      throw asUnreadable(filePath, error);
    } finally {
      await this.handles.release(lease);
    }
  }

  private async openForAppend(path: string, filePath: string): Promise<FileLease> {
    const existing = await this.handles.acquire(filePath, false);
    if (existing !== undefined) return existing;
    const segments = validateLogPath(path);
    for (let attempt = 1; ; attempt += 1) {
      const changed = await ensureDirectory(this.root, segments);
      try {
        const lease = (await this.handles.acquire(filePath, true)) as FileLease;
        if (lease.created) changed.add(nodePath.dirname(filePath));
        if (changed.size > 0) this.unsyncedDirectories.set(filePath, changed);
        return lease;
      } catch (error) {
        // A concurrent deletion removed a directory that had just become empty: recreate it.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw error;
      }
    }
  }

  private async appendNow<T>(path: string, stream: string, filePath: string, values: T[], texts: string[]): Promise<LogEntry<T>[]> {
    const lease = await this.openForAppend(path, filePath);
    try {
      const directories = this.unsyncedDirectories.get(filePath) ?? new Set<string>();
      if (!this.durableEntries.has(filePath)) {
        // The file may have been created by an earlier process that died before syncing
        // its directories; sync the whole chain once before acknowledging anything in it.
        for (let directory = nodePath.dirname(filePath); directory.startsWith(this.root); directory = nodePath.dirname(directory)) {
          directories.add(directory);
          if (directory === this.root) break;
        }
      }
      for (const directory of directories) await syncDirectory(directory);
      this.unsyncedDirectories.delete(filePath);
      this.durableEntries.add(filePath);
      const state = await this.states.stateFor(path, stream, filePath, lease).catch((error: unknown) => {
        throw asUnreadable(filePath, error);
      });
      const firstSeq = state.lastSeq + 1;
      let text = state.needsNewline ? '\n' : '';
      for (let index = 0; index < texts.length; index += 1) {
        text += `{"seq":${firstSeq + index},"value":${texts[index]}}\n`;
      }
      const buffer = Buffer.from(text, 'utf8');
      const start = state.end;
      try {
        if (state.fileLength > start) {
          // A torn last line is cut so the batch starts on a line of its own; its bytes (the
          // start of an entry a crash interrupted) are kept beside the log, never just dropped.
          await appendDurably(`${filePath}${TORN_TAIL_SUFFIX}`, await readAt(lease.fd, state.fileLength - start, start));
          await truncateDescriptor(lease.fd, start);
          state.fileLength = start;
        }
        await writeAllAt(lease.fd, buffer, start);
        await syncDescriptor(lease.fd);
      } catch (error) {
        await this.rollBack(state, lease.fd, start);
        throw new Error(`Append to stream ${JSON.stringify(stream)} in path ${JSON.stringify(path)} failed: ${(error as Error).message}`, { cause: error });
      }
      state.end = start + buffer.length;
      state.fileLength = state.end;
      state.lastSeq = firstSeq + texts.length - 1;
      state.index.add(firstSeq, state.needsNewline ? start + 1 : start);
      state.needsNewline = false;
      return values.map((value, index) => ({ seq: firstSeq + index, value }));
    } finally {
      await this.handles.release(lease);
    }
  }

  /** Cuts a failed batch off again; if even that fails the cached state is dropped and rebuilt from the file. */
  private async rollBack(state: StreamState, fd: number, start: number): Promise<void> {
    try {
      await truncateDescriptor(fd, start);
      state.fileLength = start;
    } catch {
      state.fileLength = Number.POSITIVE_INFINITY;
      this.forgetStream(state.filePath);
    }
  }
}

/**
 * Keeps stream files open between operations (opening a file costs more than a small
 * append), bounded so that thousands of streams cannot exhaust file descriptors.
 */
import fs from 'node:fs';
import { closeDescriptor, openDescriptor } from './file-io.js';
import { asUnreadable, checkOpenedLogFile, danglingLinkError, NON_BLOCKING_OPEN } from './stream-file-access.js';

/** An open descriptor lent to one operation; give it back with {@link FileHandlePool.release}. */
export interface FileLease {
  readonly fd: number;
  /** True when this acquisition created the file (the caller must fsync its directory). */
  readonly created: boolean;
}

interface PooledHandle {
  filePath: string;
  fd: number;
  users: number;
  /** Set once the handle left the pool (evicted or its file deleted): close when idle. */
  retired: boolean;
  closed: boolean;
}

interface Lease extends FileLease {
  handle: PooledHandle;
}

/**
 * A pool of read-write descriptors keyed by file path, least recently used first out.
 * A descriptor in use is never closed under its user (a reused descriptor number would
 * silently point at another file); eviction and deletion only retire it.
 */
export class FileHandlePool {
  private readonly handles = new Map<string, PooledHandle>();
  private readonly opening = new Map<string, Promise<{ handle: PooledHandle; created: boolean }>>();

  /**
   * @param maximumOpen idle descriptors beyond this count are closed, oldest first.
   * @param onEvicted told of each file whose descriptor left the pool for this bound (not for a
   *   deletion), so that what its owner keeps per open file leaves memory with it.
   */
  constructor(
    private readonly maximumOpen: number,
    private readonly onEvicted: (filePath: string) => void = () => undefined,
  ) {}

  /**
   * Lends the descriptor of `filePath`, opening it if needed.
   *
   * @param create when true a missing file is created (exclusively, so `created` is exact).
   * @returns undefined when the file is missing and `create` is false.
   */
  async acquire(filePath: string, create: boolean): Promise<FileLease | undefined> {
    while (true) {
      let handle = this.handles.get(filePath);
      let created = false;
      if (handle === undefined) {
        const opened = await this.open(filePath, create);
        if (opened === undefined) return undefined;
        ({ handle, created } = opened);
      } else {
        // Re-insert to mark it most recently used.
        this.handles.delete(filePath);
        this.handles.set(filePath, handle);
      }
      // Closed between opening and this point (its file was deleted): open afresh.
      if (handle.closed) continue;
      handle.users += 1;
      await this.evictIdle();
      const lease: Lease = { fd: handle.fd, created, handle };
      return lease;
    }
  }

  /** Returns a lent descriptor; closes it if it was retired meanwhile. */
  async release(lease: FileLease): Promise<void> {
    const handle = (lease as Lease).handle;
    handle.users -= 1;
    if (handle.retired && handle.users === 0) await this.closeHandle(handle);
  }

  /** False once the lease's descriptor left the pool (its file was deleted or the pool closed). */
  isCurrent(lease: FileLease): boolean {
    return !(lease as Lease).handle.retired;
  }

  /**
   * Takes a file's descriptor out of the pool once the file was deleted or replaced; it closes
   * when idle. Call it after the change on disk: an open still in progress (begun before the
   * change) completes outside the pool, and the next acquisition opens the file afresh.
   */
  async forget(filePath: string): Promise<void> {
    // An open in progress (it may have opened the old file) no longer counts as the file's opening: see `open`.
    this.opening.delete(filePath);
    const handle = this.handles.get(filePath);
    if (handle === undefined) return;
    this.handles.delete(filePath);
    await this.retire(handle);
  }

  /** Forgets every file whose path passes `predicate`. */
  async forgetWhere(predicate: (filePath: string) => boolean): Promise<void> {
    for (const filePath of new Set([...this.handles.keys(), ...this.opening.keys()])) {
      if (predicate(filePath)) await this.forget(filePath);
    }
  }

  /** Retires every descriptor (each closes as soon as its last user releases it). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.opening.values()]);
    await this.forgetWhere(() => true);
  }

  private async retire(handle: PooledHandle): Promise<void> {
    handle.retired = true;
    if (handle.users === 0) await this.closeHandle(handle);
  }

  private async closeHandle(handle: PooledHandle): Promise<void> {
    if (handle.closed) return;
    handle.closed = true;
    await closeDescriptor(handle.fd).catch(() => undefined);
  }

  private async open(filePath: string, create: boolean): Promise<{ handle: PooledHandle; created: boolean } | undefined> {
    const pending = this.opening.get(filePath);
    if (pending !== undefined) {
      try {
        return { handle: (await pending).handle, created: false };
      } catch {
        // That open did not create a missing file; this one may have to.
        return this.open(filePath, create);
      }
    }
    let opening: Promise<{ handle: PooledHandle; created: boolean }> | undefined = undefined;
    opening = (async () => {
      const { fd, created } = await openStreamFile(filePath, create);
      // Forgotten meanwhile (no longer the file's opening): this descriptor may be the old
      // file's, and must not enter the pool, where it would serve every later operation. It
      // serves this one caller only.
      const current = this.opening.get(filePath) === opening;
      const handle: PooledHandle = { filePath, fd, users: 0, retired: !current, closed: false };
      if (current) this.handles.set(filePath, handle);
      return { handle, created };
    })();
    this.opening.set(filePath, opening);
    try {
      return await opening;
    } catch (error) {
      if (!create && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    } finally {
      if (this.opening.get(filePath) === opening) this.opening.delete(filePath);
    }
  }

  private async evictIdle(): Promise<void> {
    if (this.handles.size <= this.maximumOpen) return;
    for (const [filePath, handle] of this.handles) {
      if (this.handles.size <= this.maximumOpen) break;
      if (handle.users > 0) continue;
      this.handles.delete(filePath);
      this.onEvicted(filePath);
      await this.retire(handle);
    }
  }
}

/**
 * Opens (or creates) a stream file read-write. A missing file is ENOENT (the stream does not
 * exist yet); anything in its place that is no log file fails with an UnreadableStreamError
 * and is left as it is.
 */
async function openStreamFile(filePath: string, create: boolean): Promise<{ fd: number; created: boolean }> {
  let opened: { fd: number; created: boolean };
  try {
    opened = await openOrCreate(filePath, create);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw (await danglingLinkError(filePath)) ?? error;
    throw asUnreadable(filePath, error);
  }
  if (!opened.created) checkOpenedLogFile(filePath, opened.fd);
  return opened;
}

async function openOrCreate(filePath: string, create: boolean): Promise<{ fd: number; created: boolean }> {
  const { O_RDWR, O_CREAT, O_EXCL } = fs.constants;
  const flags = O_RDWR | NON_BLOCKING_OPEN;
  try {
    return { fd: await openDescriptor(filePath, flags), created: false };
  } catch (error) {
    if (!create || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    return { fd: await openDescriptor(filePath, flags | O_CREAT | O_EXCL), created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { fd: await openDescriptor(filePath, flags), created: false };
  }
}

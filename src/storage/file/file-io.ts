/**
 * Thin promise wrappers over the callback `node:fs` descriptor calls. The callback API is
 * used instead of `fs/promises` FileHandle because each call costs one thread-pool round
 * trip and nothing more, which matters when an append is dominated by one fsync.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { makeDirectory } from '../../make-directory.js';

/**
 * Mode of the files a file storage creates: owner only (conversations hold code and command
 * output; other local users must not read them).
 */
export const STORAGE_FILE_MODE = 0o600;
/** Mode of the directories a file storage creates: owner only. */
export const STORAGE_DIRECTORY_MODE = 0o700;

/** Opens a file descriptor with numeric `flags` (`fs.constants.O_*`) and `mode` for a created file (default 0o600). */
export function openDescriptor(filePath: string, flags: number, mode = STORAGE_FILE_MODE): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.open(filePath, flags, mode, (error, fd) => (error ? reject(error) : resolve(fd)));
  });
}

/** Closes a file descriptor. */
export function closeDescriptor(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.close(fd, (error) => (error ? reject(error) : resolve()));
  });
}

/** fsync(2): data and metadata of the file reach stable storage. */
export function syncDescriptor(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fsync(fd, (error) => (error ? reject(error) : resolve()));
  });
}

/** ftruncate(2) to `length` bytes. */
export function truncateDescriptor(fd: number, length: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.ftruncate(fd, length, (error) => (error ? reject(error) : resolve()));
  });
}

/** fstat(2): the file's size in bytes. */
export function descriptorSize(fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.fstat(fd, (error, stats) => (error ? reject(error) : resolve(stats.size)));
  });
}

function readOnce(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

/**
 * Reads up to `length` bytes at byte `position`, retrying short reads; the result is
 * shorter only at end of file.
 */
export async function readAt(fd: number, length: number, position: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const bytesRead = await readOnce(fd, buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

function writeOnce(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.write(fd, buffer, offset, length, position, (error, written) => (error ? reject(error) : resolve(written)));
  });
}

/**
 * Below this size a batch is copied into the page cache synchronously: that takes
 * microseconds and saves a thread-pool round trip on every small append. Larger batches are
 * written on the thread pool so the event loop is never held up by a big copy.
 */
const SYNCHRONOUS_WRITE_LIMIT_BYTES = 256 * 1024;

/** Writes all of `buffer` at byte `position`, retrying short writes. */
export async function writeAllAt(fd: number, buffer: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < buffer.length) {
    const count =
      buffer.length <= SYNCHRONOUS_WRITE_LIMIT_BYTES
        ? fs.writeSync(fd, buffer, written, buffer.length - written, position + written)
        : await writeOnce(fd, buffer, written, buffer.length - written, position + written);
    written += count;
  }
}

/**
 * Suffix of the file beside a stream's log (`<stream>.jsonl.torn`) that keeps the bytes of the
 * torn last lines appends cut off. Not a stream: stream listings take `.jsonl` files only.
 */
export const TORN_TAIL_SUFFIX = '.torn';

/**
 * What is said of a torn last line (reported as `torn_tail`): ignored by reads, and cut off by
 * the next append, which first keeps its bytes in `<file name>.torn`.
 * @param bytes the torn line's length, in bytes
 * @param filePath the log file
 */
export function tornTailMessage(bytes: number, filePath: string): string {
  return `incomplete last line (${bytes} bytes) ignored; the next append cuts it off and keeps its bytes in ${nodePath.basename(filePath)}${TORN_TAIL_SUFFIX}`;
}

/**
 * Appends `bytes` to the file at `filePath` (created with {@link STORAGE_FILE_MODE} when
 * missing) and fsyncs it: for bytes about to be cut from a log, which must be on disk first.
 */
export async function appendDurably(filePath: string, bytes: Buffer): Promise<void> {
  const handle = await fs.promises.open(filePath, 'a', STORAGE_FILE_MODE);
  try {
    await handle.write(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * fsyncs a directory so that entries created or removed in it survive a crash (a new
 * file is only durable once its directory entry is).
 */
export async function syncDirectory(directoryPath: string): Promise<void> {
  const fd = await openDescriptor(directoryPath, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    await syncDescriptor(fd);
  } finally {
    await closeDescriptor(fd);
  }
}

/**
 * Creates `root` and then each of `segments` below it, one level at a time.
 *
 * @returns the directories whose entries changed (the parents of every directory created),
 *   which the caller must fsync before acknowledging data written below them.
 */
export async function ensureDirectory(root: string, segments: string[]): Promise<Set<string>> {
  const changed = new Set<string>();
  const firstCreated = await makeDirectory(root, STORAGE_DIRECTORY_MODE);
  if (firstCreated !== undefined) {
    let directory = nodePath.resolve(root);
    const stop = nodePath.resolve(firstCreated);
    while (true) {
      changed.add(nodePath.dirname(directory));
      if (directory === stop || nodePath.dirname(directory) === directory) break;
      directory = nodePath.dirname(directory);
    }
  }
  let current = root;
  for (const segment of segments) {
    const next = nodePath.join(current, segment);
    try {
      await fs.promises.mkdir(next, { mode: STORAGE_DIRECTORY_MODE });
      changed.add(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    current = next;
  }
  return changed;
}

/**
 * Removes the directory `root/segments…` and then each parent that became empty, never
 * `root` itself. Stops quietly at the first directory that is not empty or is gone.
 */
export async function removeEmptyDirectories(root: string, segments: string[]): Promise<void> {
  for (let depth = segments.length; depth > 0; depth -= 1) {
    const directory = nodePath.join(root, ...segments.slice(0, depth));
    try {
      await fs.promises.rmdir(directory);
    } catch {
      return;
    }
    await syncDirectory(nodePath.dirname(directory)).catch(() => undefined);
  }
}

/**
 * Removes the directory of a path with everything in it, then any parent left empty; for the
 * root path (no segments) it empties `root` but keeps it. The changed directories are fsynced
 * on a best-effort basis (a deletion that is lost in a crash only leaves data behind).
 */
export async function removePathDirectory(root: string, segments: string[]): Promise<void> {
  if (segments.length === 0) {
    const children = await fs.promises.readdir(root).catch(() => [] as string[]);
    for (const child of children) await fs.promises.rm(nodePath.join(root, child), { recursive: true, force: true });
    await syncDirectory(root).catch(() => undefined);
    return;
  }
  const directory = nodePath.join(root, ...segments);
  await fs.promises.rm(directory, { recursive: true, force: true });
  await syncDirectory(nodePath.dirname(directory)).catch(() => undefined);
  await removeEmptyDirectories(root, segments.slice(0, -1));
}

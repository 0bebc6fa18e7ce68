import { randomBytes } from 'node:crypto';
import { lstat, open, readdir, readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import type { DirectoryEntry, ExecutorFileSystem, FileKind, FileStat } from '../executor.js';
import { makeDirectory } from '../../make-directory.js';
import { readFully } from '../read-range.js';

function kindOf(entry: Stats | Dirent): FileKind {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  return 'other';
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EEXIST: 'already exists',
  ELOOP: 'too many levels of symbolic links',
  EROFS: 'read-only file system',
};

/**
 * Rewrites a Node.js file error so that its message always names the path (Node omits it for
 * some operations, e.g. reading a directory) and keeps the error code for callers:
 * `cannot ACTION PATH: REASON (CODE)`. Shared by the sandboxed file system, so both word
 * failures alike.
 * @param action what was attempted (`read`, `write`…)
 * @param filePath the absolute path on the executor
 * @param error what Node.js threw (its `code`, when present, is kept)
 */
export function describeFailure(action: string, filePath: string, error: unknown): Error {
  const code = errorCode(error);
  const reason = (code !== undefined ? REASONS[code] : undefined) ?? (error as Error).message;
  const failure = new Error(`cannot ${action} ${filePath}: ${reason}${code !== undefined ? ` (${code})` : ''}`, { cause: error });
  return Object.assign(failure, { code });
}

function requireAbsolute(filePath: string): void {
  if (!path.posix.isAbsolute(filePath)) throw new Error(`path must be absolute, got "${filePath}"`);
}

/** Failures that mean "no new file can be made here", which a write in place may still overcome. */
const CANNOT_CREATE = new Set(['EACCES', 'EPERM']);

/**
 * Writes `data` to a temporary sibling of `target` and renames it over `target`.
 * @returns false, having left nothing behind, when the temporary file cannot be created or
 *   cannot be given the old file's owner; the caller then writes in place
 * @throws the file-system error of any other failure (the temporary file is removed)
 */
async function replaceAtomically(target: string, data: Uint8Array | string, existing: Stats | undefined): Promise<boolean> {
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const mode = existing === undefined ? 0o666 : existing.mode & 0o7777;
  let handle;
  try {
    handle = await open(temporary, 'wx', mode);
  } catch (error) {
    if (CANNOT_CREATE.has(errorCode(error) ?? '')) return false;
    throw error;
  }
  let renamed = false;
  try {
    try {
      if (existing !== undefined) {
        // open() applies the umask; the old file's mode is restored exactly.
        await handle.chmod(mode);
        if (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.()) await handle.chown(existing.uid, existing.gid);
      }
    } catch (error) {
      if (CANNOT_CREATE.has(errorCode(error) ?? '')) return false;
      throw error;
    }
    await handle.writeFile(data);
    await handle.datasync();
    await handle.close();
    handle = undefined;
    await rename(temporary, target);
    renamed = true;
    return true;
  } finally {
    await handle?.close().catch(() => undefined);
    if (!renamed) await unlink(temporary).catch(() => undefined);
  }
}

/**
 * `ExecutorFileSystem` over the local disk (`node:fs/promises`). Paths must be absolute;
 * thrown errors name the path and carry Node's error `code` (`ENOENT`…).
 */
export class LocalFileSystem implements ExecutorFileSystem {
  /** Reads a whole file. @throws when missing or a directory. */
  async readFile(filePath: string): Promise<Uint8Array> {
    requireAbsolute(filePath);
    try {
      return await readFile(filePath);
    } catch (error) {
      throw describeFailure('read', filePath, error);
    }
  }

  /** See {@link ExecutorFileSystem.readRange}: one `open`, reads until `length` bytes or the end, `close`. */
  async readRange(filePath: string, offset: number, length: number): Promise<Uint8Array> {
    requireAbsolute(filePath);
    let handle;
    try {
      const opened = await open(filePath, 'r');
      handle = opened;
      return await readFully(length, offset, async (buffer, at, count, position) => (await opened.read(buffer, at, count, position)).bytesRead);
    } catch (error) {
      throw describeFailure('read', filePath, error);
    } finally {
      await handle?.close();
    }
  }

  /**
   * Creates or replaces a file (strings are written as UTF-8). Parent directories must exist.
   *
   * The replacement is atomic: the data goes to a temporary file in the same directory, which
   * gets the old file's mode and owner, is flushed to disk and renamed over the file, so a
   * reader sees the old or the new content, never a part. A symlink is followed: its target
   * is replaced, the link stays. When the old file's owner cannot be given to a new file (it
   * belongs to another user and this process may not chown), or no file can be created in
   * the directory, the file is rewritten in place instead, keeping its owner.
   */
  async writeFile(filePath: string, data: Uint8Array | string): Promise<void> {
    requireAbsolute(filePath);
    try {
      const existing = await stat(filePath).catch((error: unknown) => {
        if (errorCode(error) === 'ENOENT') return undefined;
        throw error;
      });
      if (existing?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      const target = existing === undefined ? filePath : await realpath(filePath);
      if (existing !== undefined && !existing.isFile()) {
        // A device or FIFO is written to, not replaced.
        await writeFile(target, data);
        return;
      }
      if (!(await replaceAtomically(target, data, existing))) await writeFile(target, data);
    } catch (error) {
      throw describeFailure('write', filePath, error);
    }
  }

  /** Stat without following a final symlink (`lstat`); undefined when nothing is there. */
  async stat(filePath: string): Promise<FileStat | undefined> {
    requireAbsolute(filePath);
    try {
      const stats = await lstat(filePath);
      return { kind: kindOf(stats), size: stats.size, modifiedAt: stats.mtimeMs };
    } catch (error) {
      // A file standing where a parent directory should be also means "nothing there".
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw describeFailure('stat', filePath, error);
    }
  }

  /** Lists a directory, sorted by name (code-unit order, independent of locale). */
  async readDirectory(directoryPath: string): Promise<DirectoryEntry[]> {
    requireAbsolute(directoryPath);
    try {
      const entries = await readdir(directoryPath, { withFileTypes: true });
      return entries
        .map((entry) => ({ name: entry.name, kind: kindOf(entry) }))
        .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    } catch (error) {
      throw describeFailure('list directory', directoryPath, error);
    }
  }

  /** Creates a directory and its missing parents; an existing directory is fine. */
  async makeDirectory(directoryPath: string): Promise<void> {
    requireAbsolute(directoryPath);
    try {
      await makeDirectory(directoryPath);
    } catch (error) {
      throw describeFailure('create directory', directoryPath, error);
    }
  }

  /** Removes a file or symlink. @throws when missing or a directory. */
  async removeFile(filePath: string): Promise<void> {
    requireAbsolute(filePath);
    // unlink on a directory fails differently per platform (EISDIR, EPERM); say it plainly.
    if ((await this.stat(filePath))?.kind === 'directory') {
      throw Object.assign(new Error(`cannot remove ${filePath}: is a directory (EISDIR)`), { code: 'EISDIR' });
    }
    try {
      await unlink(filePath);
    } catch (error) {
      throw describeFailure('remove', filePath, error);
    }
  }

  /** Resolves symlinks in an existing path. @throws when the path or a link target is missing. */
  async realPath(filePath: string): Promise<string> {
    requireAbsolute(filePath);
    try {
      return await realpath(filePath);
    } catch (error) {
      throw describeFailure('resolve', filePath, error);
    }
  }
}

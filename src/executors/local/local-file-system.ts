import { lstat, mkdir, readdir, readFile, realpath, unlink, writeFile } from 'node:fs/promises';
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import type { DirectoryEntry, ExecutorFileSystem, FileKind, FileStat } from '../executor.js';

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
};

/**
 * Rewrites a Node.js file error so that its message always names the path (Node omits it for
 * some operations, e.g. reading a directory) and keeps the error code for callers.
 */
function describeFailure(action: string, filePath: string, error: unknown): Error {
  const code = errorCode(error);
  const reason = (code !== undefined ? REASONS[code] : undefined) ?? (error as Error).message;
  const failure = new Error(`cannot ${action} ${filePath}: ${reason}${code !== undefined ? ` (${code})` : ''}`, { cause: error });
  return Object.assign(failure, { code });
}

function requireAbsolute(filePath: string): void {
  if (!path.posix.isAbsolute(filePath)) throw new Error(`path must be absolute, got "${filePath}"`);
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

  /** Creates or replaces a file (strings are written as UTF-8). Parent directories must exist. */
  async writeFile(filePath: string, data: Uint8Array | string): Promise<void> {
    requireAbsolute(filePath);
    try {
      await writeFile(filePath, data);
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
      await mkdir(directoryPath, { recursive: true });
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

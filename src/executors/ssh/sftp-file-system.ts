/**
 * `ExecutorFileSystem` over SFTP (the `ssh2` SFTP client). Errors name the path and carry a
 * Node-style `code` (`ENOENT`, `EACCES`, `EISDIR`…) like the local file system's.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { FileEntryWithStats, SFTPWrapper, Stats } from 'ssh2';
import type { DirectoryEntry, ExecutorFileSystem, FileKind, FileStat } from '../executor.js';
import { readFully } from '../read-range.js';

/** SFTP status codes (draft-ietf-secsh-filexfer-02 §7) and their Node-style equivalents. */
const STATUS_CODES: Record<number, { code: string; reason: string }> = {
  2: { code: 'ENOENT', reason: 'no such file or directory' },
  3: { code: 'EACCES', reason: 'permission denied' },
  8: { code: 'ENOTSUP', reason: 'operation not supported by the server' },
};

/** Runs one SFTP operation on a live session (the executor connects and retries once). */
export type SftpRunner = <T>(operation: (sftp: SFTPWrapper) => Promise<T>) => Promise<T>;

function kindOf(stats: Stats): FileKind {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  return 'other';
}

function failure(action: string, filePath: string, code: string, reason: string, cause?: unknown): Error {
  return Object.assign(new Error(`cannot ${action} ${filePath}: ${reason} (${code})`, { cause }), { code });
}

function describeFailure(action: string, filePath: string, error: unknown): Error {
  const status = (error as { code?: unknown }).code;
  const known = typeof status === 'number' ? STATUS_CODES[status] : undefined;
  if (known !== undefined) return failure(action, filePath, known.code, known.reason, error);
  return Object.assign(new Error(`cannot ${action} ${filePath}: ${(error as Error).message}`, { cause: error }), { code: 'EIO' });
}

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown }).code === 2;
}

function requireAbsolute(filePath: string): void {
  if (!path.posix.isAbsolute(filePath)) throw new Error(`path must be absolute, got "${filePath}"`);
}

function call<T>(start: (done: (error: Error | null | undefined, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value as T))));
}

/**
 * Writes `bytes` to a temporary sibling of `target` and renames it over `target` with
 * `posix-rename@openssh.com`.
 * @returns false, having left nothing behind, when that cannot be done while keeping the old
 *   file's owner (no extension, no right to create or chown); the caller writes in place
 * @throws the described SFTP error of any other failure
 */
async function replaceAtomically(sftp: SFTPWrapper, target: string, bytes: Buffer, existing: Stats | undefined): Promise<boolean> {
  const temporary = path.posix.join(path.posix.dirname(target), `.${path.posix.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const mode = existing === undefined ? 0o644 : existing.mode & 0o7777;
  try {
    await call<void>((done) => sftp.writeFile(temporary, bytes, { flag: 'wx', mode }, done));
  } catch (error) {
    await call<void>((done) => sftp.unlink(temporary, done)).catch(() => undefined);
    if ((error as { code?: unknown }).code === 3) return false;
    throw describeFailure('write', target, error);
  }
  try {
    if (existing !== undefined) {
      // The server applies its umask on creation; the old mode and owner are set explicitly.
      await call<void>((done) => sftp.setstat(temporary, { mode, uid: existing.uid, gid: existing.gid }, done));
    }
    await call<void>((done) => sftp.ext_openssh_rename(temporary, target, done));
    return true;
  } catch (error) {
    await call<void>((done) => sftp.unlink(temporary, done)).catch(() => undefined);
    // Permission denied (chown to another user) or an unsupported extension: write in place.
    // (ssh2 rejects without an SFTP status when the server lacks the extension.)
    const status = (error as { code?: unknown }).code;
    if (typeof status !== 'number' || status === 3 || status === 8) return false;
    throw describeFailure('write', target, error);
  }
}

/** The file system of an SSH executor, over its connection's SFTP session. */
export class SftpFileSystem implements ExecutorFileSystem {
  /** @param withSftp runs an operation on the executor's SFTP session */
  constructor(private readonly withSftp: SftpRunner) {}

  private lstatRaw(sftp: SFTPWrapper, filePath: string): Promise<Stats | undefined> {
    return call<Stats>((done) => sftp.lstat(filePath, done)).catch((error: unknown) => {
      if (isMissing(error)) return undefined;
      throw describeFailure('stat', filePath, error);
    });
  }

  /** Reads a whole file. @throws when missing or a directory (`EISDIR`). */
  async readFile(filePath: string): Promise<Uint8Array> {
    requireAbsolute(filePath);
    return this.withSftp(async (sftp) => {
      const stats = await call<Stats>((done) => sftp.stat(filePath, done)).catch((error: unknown) => {
        throw describeFailure('read', filePath, error);
      });
      if (stats.isDirectory()) throw failure('read', filePath, 'EISDIR', 'is a directory');
      return call<Buffer>((done) => sftp.readFile(filePath, done)).catch((error: unknown) => {
        throw describeFailure('read', filePath, error);
      });
    });
  }

  /** See {@link ExecutorFileSystem.readRange}: SFTP `open`, `read` requests until `length` bytes or the end, `close`. */
  async readRange(filePath: string, offset: number, length: number): Promise<Uint8Array> {
    requireAbsolute(filePath);
    return this.withSftp(async (sftp) => {
      const handle = await call<Buffer>((done) => sftp.open(filePath, 'r', done)).catch((error: unknown) => {
        throw describeFailure('read', filePath, error);
      });
      try {
        return await readFully(length, offset, (buffer, at, count, position) => new Promise<number>((resolve, reject) => sftp.read(handle, buffer, at, count, position, (error, read) => (error ? reject(error) : resolve(read)))));
      } catch (error) {
        throw describeFailure('read', filePath, error);
      } finally {
        // The bytes are read; a handle the server fails to close is dropped with the session, and reporting it would lose a good read.
        await call<void>((done) => sftp.close(handle, done)).catch(() => undefined);
      }
    });
  }

  /**
   * Creates or replaces a file (strings as UTF-8). Parents must exist.
   *
   * The replacement is atomic: the data goes to a temporary file in the same directory, which
   * gets the old file's mode and owner and is renamed over the file with the
   * `posix-rename@openssh.com` extension (plain SFTP rename refuses an existing destination),
   * so a reader sees the old or the new content, never a part. A symlink is followed: its
   * target is replaced. When the server lacks the extension, no file can be created in the
   * directory, or the old owner cannot be kept, the file is rewritten in place instead.
   */
  async writeFile(filePath: string, data: Uint8Array | string): Promise<void> {
    requireAbsolute(filePath);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return this.withSftp(async (sftp) => {
      const existing = await call<Stats>((done) => sftp.stat(filePath, done)).catch((error: unknown) => {
        if (isMissing(error)) return undefined;
        throw describeFailure('write', filePath, error);
      });
      if (existing?.isDirectory()) throw failure('write', filePath, 'EISDIR', 'is a directory');
      const target =
        existing === undefined
          ? filePath
          : await call<string>((done) => sftp.realpath(filePath, done)).catch((error: unknown) => {
              throw describeFailure('write', filePath, error);
            });
      if (existing === undefined || existing.isFile()) {
        if (await replaceAtomically(sftp, target, bytes, existing)) return;
      }
      try {
        await call<void>((done) => sftp.writeFile(target, bytes, done));
      } catch (error) {
        throw describeFailure('write', filePath, error);
      }
    });
  }

  /** Stat without following a final symlink; undefined when nothing is there. */
  async stat(filePath: string): Promise<FileStat | undefined> {
    requireAbsolute(filePath);
    return this.withSftp(async (sftp) => {
      const stats = await this.lstatRaw(sftp, filePath);
      if (stats === undefined) return undefined;
      return { kind: kindOf(stats), size: stats.size, modifiedAt: stats.mtime * 1000 };
    });
  }

  /** Lists a directory, sorted by name (code-unit order); `.` and `..` are left out. */
  async readDirectory(directoryPath: string): Promise<DirectoryEntry[]> {
    requireAbsolute(directoryPath);
    return this.withSftp(async (sftp) => {
      let entries: FileEntryWithStats[];
      try {
        entries = await call<FileEntryWithStats[]>((done) => sftp.readdir(directoryPath, done));
      } catch (error) {
        const stats = await this.lstatRaw(sftp, directoryPath).catch(() => undefined);
        if (stats !== undefined && !stats.isDirectory()) throw failure('list directory', directoryPath, 'ENOTDIR', 'not a directory', error);
        throw describeFailure('list directory', directoryPath, error);
      }
      return entries
        .filter((entry) => entry.filename !== '.' && entry.filename !== '..')
        .map((entry) => ({ name: entry.filename, kind: kindOf(entry.attrs) }))
        .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    });
  }

  /** Creates a directory and its missing parents; an existing directory is fine. */
  async makeDirectory(directoryPath: string): Promise<void> {
    requireAbsolute(directoryPath);
    return this.withSftp(async (sftp) => {
      const missing: string[] = [];
      let current = path.posix.resolve(directoryPath);
      for (;;) {
        const stats = await this.lstatRaw(sftp, current);
        if (stats !== undefined) {
          if (!stats.isDirectory() && !stats.isSymbolicLink()) throw failure('create directory', directoryPath, 'ENOTDIR', `${current} is not a directory`);
          break;
        }
        missing.unshift(current);
        if (current === '/') break;
        current = path.posix.dirname(current);
      }
      for (const directory of missing) {
        try {
          await call<void>((done) => sftp.mkdir(directory, done));
        } catch (error) {
          // Created meanwhile by someone else: fine.
          if ((await this.lstatRaw(sftp, directory).catch(() => undefined))?.isDirectory()) continue;
          throw describeFailure('create directory', directory, error);
        }
      }
    });
  }

  /** Removes a file or symlink. @throws when missing (`ENOENT`) or a directory (`EISDIR`). */
  async removeFile(filePath: string): Promise<void> {
    requireAbsolute(filePath);
    return this.withSftp(async (sftp) => {
      const stats = await this.lstatRaw(sftp, filePath);
      if (stats === undefined) throw failure('remove', filePath, 'ENOENT', 'no such file or directory');
      if (stats.isDirectory()) throw failure('remove', filePath, 'EISDIR', 'is a directory');
      await call<void>((done) => sftp.unlink(filePath, done)).catch((error: unknown) => {
        throw describeFailure('remove', filePath, error);
      });
    });
  }

  /**
   * Resolves symlinks in an existing path. Some servers resolve a path whose last part is
   * missing too; the result is checked to exist, so a broken link fails as it does locally.
   * @throws Error `ENOENT` when the path or a link target is missing
   */
  async realPath(filePath: string): Promise<string> {
    requireAbsolute(filePath);
    return this.withSftp(async (sftp) => {
      const resolved = await call<string>((done) => sftp.realpath(filePath, done)).catch((error: unknown) => {
        throw describeFailure('resolve', filePath, error);
      });
      const stats = await call<Stats>((done) => sftp.stat(resolved, done)).catch((error: unknown) => {
        throw describeFailure('resolve', filePath, error);
      });
      if (stats === undefined) throw failure('resolve', filePath, 'ENOENT', 'no such file or directory');
      return resolved;
    });
  }
}

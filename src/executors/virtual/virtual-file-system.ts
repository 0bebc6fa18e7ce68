/**
 * `ExecutorFileSystem` over just-bash's in-memory file system: the same contract as the local
 * one (absolute paths, lstat semantics, parents must exist for writes, errors naming the path
 * with a Node-style `code`), with nothing ever written to the real disk.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { IFileSystem } from 'just-bash';
import type { DirectoryEntry, ExecutorFileSystem, FileKind, FileStat } from '../executor.js';

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  EEXIST: 'already exists',
  ENOTEMPTY: 'directory not empty',
  ELOOP: 'too many levels of symbolic links',
  EACCES: 'permission denied',
};

/** just-bash throws plain Errors whose message starts with the code (`ENOENT: …`). */
function codeOf(error: unknown): string | undefined {
  const explicit = (error as { code?: unknown }).code;
  if (typeof explicit === 'string') return explicit;
  return /^([A-Z]{2,}):/.exec((error as Error).message ?? '')?.[1];
}

function failure(action: string, filePath: string, code: string, cause?: unknown): Error {
  return Object.assign(new Error(`cannot ${action} ${filePath}: ${REASONS[code] ?? code} (${code})`, { cause }), { code });
}

function describeFailure(action: string, filePath: string, error: unknown): Error {
  const code = codeOf(error);
  if (code !== undefined) return failure(action, filePath, code, error);
  return new Error(`cannot ${action} ${filePath}: ${(error as Error).message}`, { cause: error });
}

function requireAbsolute(filePath: string): void {
  if (!path.posix.isAbsolute(filePath)) throw new Error(`path must be absolute, got "${filePath}"`);
}

function byName(left: DirectoryEntry, right: DirectoryEntry): number {
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

/** The file system of a virtual executor. */
export class VirtualFileSystem implements ExecutorFileSystem {
  /**
   * @param memoryOf the in-memory file system the simulated shell uses too; called only after `ready` resolved
   * @param ready resolves once the file system exists and seeding finished; every operation waits for it
   */
  constructor(
    private readonly memoryOf: () => IFileSystem,
    private readonly ready: () => Promise<void>,
  ) {}

  private get memory(): IFileSystem {
    return this.memoryOf();
  }

  private async kindOf(filePath: string): Promise<FileKind | undefined> {
    try {
      const stats = await this.memory.lstat(filePath);
      if (stats.isSymbolicLink) return 'symlink';
      if (stats.isFile) return 'file';
      return stats.isDirectory ? 'directory' : 'other';
    } catch (error) {
      const code = codeOf(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw describeFailure('stat', filePath, error);
    }
  }

  /** Reads a whole file. @throws when missing (`ENOENT`) or a directory (`EISDIR`). */
  async readFile(filePath: string): Promise<Uint8Array> {
    requireAbsolute(filePath);
    await this.ready();
    try {
      return await this.memory.readFileBuffer(filePath);
    } catch (error) {
      throw describeFailure('read', filePath, error);
    }
  }

  /**
   * Creates or replaces a file (strings as UTF-8). Like the other executors, the replacement
   * is atomic: the data is written to a temporary sibling that gets the old file's mode and
   * is moved over the file, so the simulated shell sees the old or the new content.
   * @throws `ENOENT` when the parent is missing, `EISDIR` for a directory
   */
  async writeFile(filePath: string, data: Uint8Array | string): Promise<void> {
    requireAbsolute(filePath);
    await this.ready();
    // just-bash creates missing parents on its own; the contract says they must exist.
    const parent = path.posix.dirname(filePath);
    const parentKind = await this.kindOf(parent);
    if (parentKind === undefined) throw failure('write', filePath, 'ENOENT');
    if ((await this.kindOf(filePath)) === 'directory') throw failure('write', filePath, 'EISDIR');
    const content = typeof data === 'string' ? data : new Uint8Array(data);
    let target = filePath;
    let mode: number | undefined;
    try {
      const existing = await this.memory.stat(filePath).catch(() => undefined);
      if (existing !== undefined) {
        target = await this.memory.realpath(filePath);
        mode = existing.mode;
      }
      const temporary = path.posix.join(path.posix.dirname(target), `.${path.posix.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
      await this.memory.writeFile(temporary, content);
      try {
        if (mode !== undefined) await this.memory.chmod(temporary, mode & 0o7777);
        await this.memory.mv(temporary, target);
      } catch (error) {
        await this.memory.rm(temporary, { force: true }).catch(() => undefined);
        throw error;
      }
    } catch (error) {
      throw describeFailure('write', filePath, error);
    }
  }

  /** Stat without following a final symlink; undefined when nothing is there. */
  async stat(filePath: string): Promise<FileStat | undefined> {
    requireAbsolute(filePath);
    await this.ready();
    try {
      const stats = await this.memory.lstat(filePath);
      const kind: FileKind = stats.isSymbolicLink ? 'symlink' : stats.isFile ? 'file' : stats.isDirectory ? 'directory' : 'other';
      return { kind, size: stats.size, modifiedAt: stats.mtime.getTime() };
    } catch (error) {
      const code = codeOf(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw describeFailure('stat', filePath, error);
    }
  }

  /** Lists a directory, sorted by name (code-unit order). */
  async readDirectory(directoryPath: string): Promise<DirectoryEntry[]> {
    requireAbsolute(directoryPath);
    await this.ready();
    try {
      if (this.memory.readdirWithFileTypes !== undefined) {
        const entries = await this.memory.readdirWithFileTypes(directoryPath);
        return entries
          .map((entry): DirectoryEntry => ({
            name: entry.name,
            kind: entry.isSymbolicLink ? 'symlink' : entry.isFile ? 'file' : entry.isDirectory ? 'directory' : 'other',
          }))
          .sort(byName);
      }
      const names = await this.memory.readdir(directoryPath);
      const entries: DirectoryEntry[] = [];
      for (const name of names) entries.push({ name, kind: (await this.kindOf(path.posix.join(directoryPath, name))) ?? 'other' });
      return entries.sort(byName);
    } catch (error) {
      throw describeFailure('list directory', directoryPath, error);
    }
  }

  /** Creates a directory and its missing parents; an existing directory is fine. */
  async makeDirectory(directoryPath: string): Promise<void> {
    requireAbsolute(directoryPath);
    await this.ready();
    const kind = await this.kindOf(directoryPath);
    if (kind === 'directory') return;
    if (kind !== undefined && kind !== 'symlink') throw failure('create directory', directoryPath, 'EEXIST');
    try {
      await this.memory.mkdir(directoryPath, { recursive: true });
    } catch (error) {
      throw describeFailure('create directory', directoryPath, error);
    }
  }

  /** Removes a file or symlink. @throws when missing (`ENOENT`) or a directory (`EISDIR`). */
  async removeFile(filePath: string): Promise<void> {
    requireAbsolute(filePath);
    await this.ready();
    const kind = await this.kindOf(filePath);
    if (kind === undefined) throw failure('remove', filePath, 'ENOENT');
    if (kind === 'directory') throw failure('remove', filePath, 'EISDIR');
    try {
      await this.memory.rm(filePath);
    } catch (error) {
      throw describeFailure('remove', filePath, error);
    }
  }

  /** Resolves symlinks in an existing path. @throws `ENOENT` when the path or a link target is missing. */
  async realPath(filePath: string): Promise<string> {
    requireAbsolute(filePath);
    await this.ready();
    try {
      return await this.memory.realpath(filePath);
    } catch (error) {
      throw describeFailure('resolve', filePath, error);
    }
  }

  /** Creates a symbolic link at `linkPath` pointing to `target` (for seeding and tests). */
  async makeSymlink(target: string, linkPath: string): Promise<void> {
    requireAbsolute(linkPath);
    await this.ready();
    try {
      await this.memory.symlink(target, linkPath);
    } catch (error) {
      throw describeFailure('create symlink', linkPath, error);
    }
  }
}

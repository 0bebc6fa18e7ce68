import path from 'node:path';
import type { Executor } from './executor.js';

/**
 * How a tool will use a path, which decides how much of it must stay inside the workspace:
 * - `follow`: the path is read, written, listed or used as a working directory, following
 *   symlinks to the end, so wherever it finally leads must be inside;
 * - `entry`: the directory entry itself is acted on (a file or symlink removed), so only the
 *   directory holding it must be inside; a final symlink may point anywhere.
 */
export type PathIntent = 'follow' | 'entry';

function isInside(root: string, candidate: string): boolean {
  const relative = path.posix.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith('../') && !path.posix.isAbsolute(relative));
}

/**
 * A conversation's working area on one executor: the executor plus the directory tool paths
 * are resolved against (SPEC §3, "work location"). Every tool resolves its path arguments
 * with `resolveSafe`, so every executor gets the same confinement.
 */
export class Workspace {
  private rootRealPath: Promise<string> | undefined;

  /**
   * @param executor where tools run
   * @param root absolute working directory on that executor (POSIX path)
   * @throws Error when `root` is not absolute
   */
  constructor(
    readonly executor: Executor,
    readonly root: string,
  ) {
    if (!path.posix.isAbsolute(root)) {
      throw new Error(`workspace root must be an absolute path, got "${root}"`);
    }
    executor.useWorkspace?.(root);
  }

  /**
   * Resolves a tool's path argument lexically: relative paths are taken from the root,
   * absolute paths must lie inside it. Symlinks are not looked at; tools use `resolveSafe`.
   * @throws Error `path "…" is outside the workspace …` when it resolves outside the root, or
   *   naming the path when it contains a NUL byte
   */
  resolve(toolPath: string): string {
    if (toolPath.includes('\0')) throw new Error(`path "${toolPath}" contains a NUL byte`);
    const absolute = path.posix.resolve(this.root, toolPath);
    if (!isInside(path.posix.resolve(this.root), absolute)) {
      throw new Error(`path "${toolPath}" is outside the workspace ${this.root}`);
    }
    return absolute;
  }

  /**
   * Resolves a tool's path argument and makes sure it cannot lead outside the workspace,
   * neither lexically (`../`, absolute paths) nor through symlinks already on the executor:
   * the deepest part of the path that exists is resolved with `fs.realPath` and must lie
   * inside the root's own real path. Parts that do not exist yet (a file about to be
   * created) cannot be links, so checking their deepest existing ancestor is enough.
   *
   * The check happens when called; a symlink created afterwards by a command is not seen
   * (commands have their own confinement: the executor, or the bwrap sandbox).
   *
   * @param toolPath the path as the model wrote it
   * @param intent `follow` (default) or `entry`, see `PathIntent`
   * @returns the absolute path, spelled lexically under `root` (symlinks kept, for display)
   * @throws Error naming the path: `is outside the workspace` (lexical), `leads outside the
   *   workspace … through a symlink`, `goes through a symlink that cannot be resolved` (a
   *   broken link could be created outside), or when the root itself cannot be resolved; the
   *   executor's own error as it is when it fails otherwise (an SSH host that cannot be reached)
   */
  async resolveSafe(toolPath: string, intent: PathIntent = 'follow'): Promise<string> {
    const absolute = this.resolve(toolPath);
    const root = path.posix.resolve(this.root);
    const fileSystem = this.executor.fs;
    const rootRealPath = await this.realRoot();
    let existing = intent === 'entry' && absolute !== root ? path.posix.dirname(absolute) : absolute;
    while (existing !== root && (await fileSystem.stat(existing)) === undefined) {
      existing = path.posix.dirname(existing);
    }
    let realPath: string;
    try {
      realPath = await fileSystem.realPath(existing);
    } catch (error) {
      // Only a link that leads nowhere (or in a loop) is the path's fault; an executor that
      // cannot be reached says so itself, and blaming a symlink would send the model looking for one.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw error;
      throw new Error(`path "${toolPath}" goes through a symlink that cannot be resolved (${(error as Error).message})`, { cause: error });
    }
    if (!isInside(rootRealPath, realPath)) {
      throw new Error(`path "${toolPath}" leads outside the workspace ${this.root} through a symlink (to ${realPath})`);
    }
    return absolute;
  }

  /** The path relative to the root, for display (`.` for the root itself). */
  display(absolutePath: string): string {
    return path.posix.relative(this.root, absolutePath) || '.';
  }

  /** The root's real path, resolved once; a failure is not cached, so a later call retries. */
  private realRoot(): Promise<string> {
    this.rootRealPath ??= this.executor.fs.realPath(this.root).catch((error: unknown) => {
      this.rootRealPath = undefined;
      throw new Error(`the workspace root ${this.root} cannot be resolved: ${(error as Error).message}`, { cause: error });
    });
    return this.rootRealPath;
  }
}

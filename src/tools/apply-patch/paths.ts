/**
 * Turning the paths written in a patch into absolute paths inside the workspace, before any
 * file is touched, so that a patch aiming outside the workspace changes nothing at all.
 */
import path from 'node:path';
import type { Workspace } from '../../executors/workspace.js';

function isInside(root: string, candidate: string): boolean {
  const relative = path.posix.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith('../') && !path.posix.isAbsolute(relative));
}

/**
 * Resolves patch paths against one workspace. Besides the lexical check of
 * `Workspace.resolve`, it follows symlinks already on disk: a path whose existing part leads
 * out of the workspace through a symlink is refused too, since writing through it would change
 * a file outside.
 */
export class PatchPathResolver {
  private rootRealPath: Promise<string> | undefined;

  /** @param workspace the workspace whose root the patch paths are relative to */
  constructor(private readonly workspace: Workspace) {}

  /**
   * @param patchPath a path as written in the patch (relative, or absolute inside the root)
   * @param intent `write` for files read or written through (symlinks followed to the end);
   *   `remove` for files only unlinked (a final symlink is removed itself, so only its
   *   directory must be inside)
   * @returns the absolute path
   * @throws Error naming the path when it lies outside the workspace, lexically or through a
   *   symlink, or when a symlink on the way cannot be resolved
   */
  async resolve(patchPath: string, intent: 'write' | 'remove'): Promise<string> {
    const absolute = this.workspace.resolve(patchPath);
    const root = path.posix.resolve(this.workspace.root);
    if (absolute === root) {
      throw new Error(`path "${patchPath}" is the workspace root itself, not a file`);
    }
    const fileSystem = this.workspace.executor.fs;
    this.rootRealPath ??= fileSystem.realPath(this.workspace.root).catch((error: unknown) => {
      throw new Error(`the workspace root ${this.workspace.root} cannot be resolved: ${(error as Error).message}`, { cause: error });
    });
    const rootRealPath = await this.rootRealPath;
    let existing = intent === 'remove' ? path.posix.dirname(absolute) : absolute;
    while ((await fileSystem.stat(existing)) === undefined && existing !== root) {
      existing = path.posix.dirname(existing);
    }
    let realPath: string;
    try {
      realPath = await fileSystem.realPath(existing);
    } catch (error) {
      throw new Error(`path "${patchPath}" goes through a symlink that cannot be resolved: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (!isInside(rootRealPath, realPath)) {
      throw new Error(`path "${patchPath}" leads outside the workspace ${this.workspace.root} through a symlink`);
    }
    return absolute;
  }
}

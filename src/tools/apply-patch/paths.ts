/**
 * Turning the paths written in a patch into absolute paths inside the workspace, before any
 * file is touched, so that a patch aiming outside the workspace changes nothing at all.
 */
import path from 'node:path';
import type { Workspace } from '../../executors/workspace.js';

/**
 * Resolves patch paths against one workspace with `Workspace.resolveSafe`: a path outside the
 * workspace, lexically or through a symlink already on disk, is refused, since writing
 * through it would change a file outside. The workspace root itself is refused too: it is not
 * a file.
 */
export class PatchPathResolver {
  /** @param workspace the workspace whose root the patch paths are relative to */
  constructor(private readonly workspace: Workspace) {}

  /**
   * @param patchPath a path as written in the patch (relative, or absolute inside the root)
   * @param intent `write` for files read or written through (symlinks followed to the end);
   *   `remove` for files only unlinked (a final symlink is removed itself, so only its
   *   directory must be inside)
   * @returns the absolute path
   * @throws Error naming the path when it lies outside the workspace, lexically or through a
   *   symlink, when a symlink on the way cannot be resolved, or when it is the root itself
   */
  async resolve(patchPath: string, intent: 'write' | 'remove'): Promise<string> {
    const absolute = this.workspace.resolve(patchPath);
    if (absolute === path.posix.resolve(this.workspace.root)) {
      throw new Error(`path "${patchPath}" is the workspace root itself, not a file`);
    }
    return this.workspace.resolveSafe(patchPath, intent === 'remove' ? 'entry' : 'follow');
  }
}

import path from 'node:path';
import type { Executor } from './executor.js';

/**
 * A conversation's working area on one executor: the executor plus the directory tool paths
 * are resolved against (SPEC §3, "work location").
 */
export class Workspace {
  /**
   * @param executor where tools run
   * @param root absolute working directory on that executor (POSIX path)
   */
  constructor(
    readonly executor: Executor,
    readonly root: string,
  ) {
    if (!path.posix.isAbsolute(root)) {
      throw new Error(`workspace root must be an absolute path, got "${root}"`);
    }
  }

  /**
   * Resolves a tool's path argument to an absolute path inside the workspace.
   * Relative paths are taken from the root; absolute paths must lie inside it.
   * @throws Error naming the path when it resolves outside the workspace root.
   */
  resolve(toolPath: string): string {
    if (toolPath.includes('\0')) throw new Error(`path "${toolPath}" contains a NUL byte`);
    const absolute = path.posix.resolve(this.root, toolPath);
    const relative = path.posix.relative(this.root, absolute);
    if (relative === '..' || relative.startsWith('../') || path.posix.isAbsolute(relative)) {
      throw new Error(`path "${toolPath}" is outside the workspace ${this.root}`);
    }
    return absolute;
  }

  /** The path relative to the root, for display (`.` for the root itself). */
  display(absolutePath: string): string {
    return path.posix.relative(this.root, absolutePath) || '.';
  }
}

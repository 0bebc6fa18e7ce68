/**
 * Creating a directory with its missing parents (`mkdir -p`). Node's own
 * `mkdir(path, { recursive: true })` never returns when a parent exists but the directory
 * cannot be made in it with ENOENT, as anywhere under `/proc`: it makes the parent again
 * (EEXIST), retries the child (ENOENT), and so on for ever. A `--data-dir /proc/x` hung
 * `serve` with no output, and an agent's tool creating a folder there tied up a file-system
 * thread of the server. Here each level is made once, and an ENOENT right after its parent
 * was found or made is final.
 */
import fs from 'node:fs';
import path from 'node:path';

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Creates `directory` and its missing parents, each with `mode` (less the umask); an existing
 * directory (or a symbolic link to one) is fine.
 * @param mode permission bits of every directory created, default 0o777
 * @returns the topmost directory created (absolute), undefined when `directory` already existed
 * @throws the file system's error naming the directory that could not be made: ENOENT (its
 *   parent cannot hold it, e.g. under `/proc`, or a dangling link), EEXIST (a file has the name),
 *   ENOTDIR, EACCES, EROFS, ENOSPC…
 */
export function makeDirectorySync(directory: string, mode = 0o777): string | undefined {
  const target = path.resolve(directory);
  try {
    fs.mkdirSync(target, { mode });
    return target;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return existingDirectory(target, error);
    const parent = path.dirname(target);
    if (codeOf(error) !== 'ENOENT' || parent === target) throw error;
    const created = makeDirectorySync(parent, mode);
    try {
      fs.mkdirSync(target, { mode });
    } catch (again) {
      if (codeOf(again) === 'EEXIST') return existingDirectory(target, again) ?? created;
      throw again;
    }
    return created ?? target;
  }
}

/**
 * {@link makeDirectorySync} without blocking the event loop.
 * @param mode permission bits of every directory created, default 0o777
 * @returns the topmost directory created (absolute), undefined when `directory` already existed
 * @throws the file system's error naming the directory that could not be made (see {@link makeDirectorySync})
 */
export async function makeDirectory(directory: string, mode = 0o777): Promise<string | undefined> {
  const target = path.resolve(directory);
  try {
    await fs.promises.mkdir(target, { mode });
    return target;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return existingDirectoryAsync(target, error);
    const parent = path.dirname(target);
    if (codeOf(error) !== 'ENOENT' || parent === target) throw error;
    const created = await makeDirectory(parent, mode);
    try {
      await fs.promises.mkdir(target, { mode });
    } catch (again) {
      if (codeOf(again) === 'EEXIST') return (await existingDirectoryAsync(target, again)) ?? created;
      throw again;
    }
    return created ?? target;
  }
}

/** undefined when `target` is a directory (or a link to one); otherwise throws `error` (its EEXIST) or the stat's own error. */
function existingDirectory(target: string, error: unknown): undefined {
  if (fs.statSync(target).isDirectory()) return undefined;
  throw error;
}

async function existingDirectoryAsync(target: string, error: unknown): Promise<undefined> {
  if ((await fs.promises.stat(target)).isDirectory()) return undefined;
  throw error;
}

/**
 * The directory {@link makeDirectorySync} would create first for `directory`: the topmost of
 * its path that does not exist yet, so that what a step makes can be taken away again.
 * @returns the absolute path, or undefined when `directory` exists (or cannot be looked at)
 */
export function missingAncestor(directory: string): string | undefined {
  let missing: string | undefined;
  for (let current = path.resolve(directory); ; current = path.dirname(current)) {
    try {
      fs.lstatSync(current);
      return missing;
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') return missing;
      missing = current;
    }
    if (path.dirname(current) === current) return missing;
  }
}

/**
 * Takes away directories made by {@link makeDirectorySync}: `directory`, then each parent up to
 * `topmost` (the value it returned), each only while it is empty. Stops at the first one that is
 * not (something else was put there) or cannot be removed; never removes a file.
 * @param topmost the topmost directory made; nothing is done when undefined or not `directory` or one of its parents
 * @returns whether every directory up to `topmost` is gone
 */
export function removeMadeDirectoriesSync(directory: string, topmost: string | undefined): boolean {
  if (topmost === undefined) return true;
  const top = path.resolve(topmost);
  const target = path.resolve(directory);
  const relative = path.relative(top, target);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return false;
  for (let current = target; ; current = path.dirname(current)) {
    try {
      fs.rmdirSync(current);
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') return false;
    }
    if (current === top) return true;
  }
}

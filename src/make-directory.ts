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

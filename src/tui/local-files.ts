/**
 * `@` completion before the conversation exists (no `fs/list` without a conversation): the
 * entries of a directory under the working directory on this machine, where the new
 * conversation will run.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** Most entries read for one completion. */
const MAX_ENTRIES = 2000;

/**
 * Lists `relative` under `cwd`, sorted by name, as `fs/list` does.
 * @returns no entries for a directory that does not exist or lies outside `cwd`
 */
export async function listLocalDirectory(cwd: string, relative: string): Promise<{ name: string; kind: 'file' | 'directory' | 'symlink' | 'other' }[]> {
  const directory = path.resolve(cwd, relative || '.');
  if (directory !== cwd && !directory.startsWith(`${cwd}${path.sep}`)) return [];
  try {
    const entries = await readdir(directory, { withFileTypes: true });
    return entries
      .slice(0, MAX_ENTRIES)
      .map((entry) => ({ name: entry.name, kind: entry.isDirectory() ? ('directory' as const) : entry.isFile() ? ('file' as const) : entry.isSymbolicLink() ? ('symlink' as const) : ('other' as const) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return [];
  }
}

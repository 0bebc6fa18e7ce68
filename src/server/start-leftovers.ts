/**
 * Taking away what a server start that failed put on disk: a refused `serve` leaves the disk
 * as it found it. What the data directory held once locked is recorded; when the start fails,
 * the entries added since (databases, keys, folders of a new data directory) are removed
 * while the lock is still held, so no other server can have added them. Entries that were
 * there stay untouched, with everything in them.
 */
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

/** The names directly in a directory, as a start found them. */
export type DirectoryEntries = ReadonlySet<string>;

/**
 * The names directly in `directory`.
 * @returns undefined when it cannot be read: nothing will be removed from it then
 */
export function recordEntries(directory: string): DirectoryEntries | undefined {
  try {
    return new Set(readdirSync(directory));
  } catch {
    return undefined;
  }
}

/**
 * Removes what was added directly in `directory` since `before` was recorded, each with
 * everything in it; entries recorded then are left as they are.
 * @param before what {@link recordEntries} returned; nothing is removed when undefined
 * @returns the paths that could not be removed, with the reason
 */
export function removeAddedEntries(directory: string, before: DirectoryEntries | undefined): { path: string; error: string }[] {
  if (before === undefined) return [];
  const kept: { path: string; error: string }[] = [];
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return [];
  }
  for (const name of names) {
    if (before.has(name)) continue;
    const entry = path.join(directory, name);
    try {
      rmSync(entry, { recursive: true, force: true });
    } catch (error) {
      kept.push({ path: entry, error: (error as Error).message });
    }
  }
  return kept;
}

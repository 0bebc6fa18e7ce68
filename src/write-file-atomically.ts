/**
 * Replacing a whole file so that a reader, or the next start after a crash or a full disk,
 * sees either the old content or the new one, never half of the new one: write a temporary
 * file beside it, flush it, rename it over the target (rename(2) is atomic within a file
 * system), then flush the directory entry.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { syncDirectoryEntries } from './sync-directory.js';

/**
 * Writes `data` to `file` atomically. An existing file keeps its permission bits; a new one
 * gets `modeForNewFile`.
 * @param modeForNewFile permission bits of a file that did not exist (default 0o600: owner only)
 * @throws the file system's error (ENOSPC, EACCES, ENOENT for a missing directory…); `file`
 *   is then unchanged and no temporary file is left
 */
export async function writeFileAtomically(file: string, data: string | Uint8Array, modeForNewFile = 0o600): Promise<void> {
  const mode = await stat(file).then(
    (existing) => existing.mode & 0o7777,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return modeForNewFile;
      throw error;
    },
  );
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, data, { mode, flag: 'wx', flush: true });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  syncDirectoryEntries(path.dirname(file));
}

/**
 * Replacing a whole file so that a reader, or the next start after a crash or a full disk,
 * sees either the old content or the new one, never half of the new one: write a temporary
 * file beside it, flush it, rename it over the target (rename(2) is atomic within a file
 * system), then flush the directory entry.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { chmod, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { syncDirectoryEntries } from './sync-directory.js';

/** Permission bits of the written file. */
export interface AtomicWriteMode {
  /** Bits of the file whatever it had before (e.g. 0o600 for a file holding keys). */
  mode?: number;
  /** Without `mode`: bits of a file that did not exist (default 0o600: owner only); an existing file keeps its own. */
  modeForNewFile?: number;
}

/**
 * Writes `data` to `link` atomically, with the permission bits `modes` says. When `link` is a
 * symbolic link, the file it points to is replaced and the link kept.
 * @throws the file system's error (ENOSPC, EACCES, ENOENT for a missing directory…); `file`
 *   is then unchanged and no temporary file is left
 */
export async function writeFileAtomically(link: string, data: string | Uint8Array, modes: AtomicWriteMode = {}): Promise<void> {
  // A link (a dotfile kept in a shared folder) stays a link: its target is the file replaced.
  const file = await realpath(link).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return link;
    throw error;
  });
  const mode =
    modes.mode ??
    (await stat(file).then(
      (existing) => existing.mode & 0o7777,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return modes.modeForNewFile ?? 0o600;
        throw error;
      },
    ));
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, data, { mode, flag: 'wx', flush: true });
    // The creation mode is reduced by the umask; the bits asked for are set exactly.
    await chmod(temporary, mode);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  syncDirectoryEntries(path.dirname(file));
}

/**
 * {@link writeFileAtomically} for the few callers that must not yield (a key stored by a
 * command before it exits, state saved inside a synchronous method).
 * @throws the file system's error; `file` is then unchanged and no temporary file is left
 */
export function writeFileAtomicallySync(link: string, data: string | Uint8Array, modes: AtomicWriteMode = {}): void {
  let file = link;
  try {
    file = realpathSync(link);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const existing = modes.mode === undefined ? statSync(file, { throwIfNoEntry: false }) : undefined;
  const mode = modes.mode ?? (existing ? existing.mode & 0o7777 : (modes.modeForNewFile ?? 0o600));
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, data, { mode, flag: 'wx', flush: true });
    chmodSync(temporary, mode);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncDirectoryEntries(path.dirname(file));
}

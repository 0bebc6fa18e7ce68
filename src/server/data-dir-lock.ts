/**
 * The exclusive lock on a data directory (SPEC §2): one runtime server per data dir. The lock
 * file `runtime.lock` holds the owner's pid; a second server is refused with that pid. A lock
 * left by a process that no longer exists is taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Name of the lock file inside the data directory (SPEC §4 layout). */
export const LOCK_FILE = 'runtime.lock';

/** Another live process holds the lock. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(`data directory ${dataDir} is in use by another OpenVaala server (pid ${holderPid})`);
    this.name = 'DataDirLockedError';
  }
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid recorded in a data dir's lock file, when the lock is held by a live process. */
export function lockHolder(dataDir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 && processExists(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A held lock; `release` removes the file (only if it is still ours). */
export interface DataDirLock {
  release(): void;
}

/**
 * Takes the lock on a data directory, creating the directory when missing.
 * @throws DataDirLockedError naming the holder's pid when a live process holds it
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // 'wx' fails when the file exists, so two servers starting together cannot both win.
      const descriptor = openSync(file, 'wx', 0o600);
      writeSync(descriptor, `${process.pid}\n`);
      closeSync(descriptor);
      return {
        release() {
          try {
            if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = lockHolder(dataDir);
      if (holder !== undefined && holder !== process.pid) throw new DataDirLockedError(dataDir, holder);
      // Stale lock from a process that died: remove it and try again.
      try {
        unlinkSync(file);
      } catch {
        // Someone else removed it first; the next attempt settles who wins.
      }
    }
  }
  throw new Error(`could not take the lock ${file} after 3 attempts`);
}

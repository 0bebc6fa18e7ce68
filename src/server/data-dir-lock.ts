/**
 * The exclusive lock on a data directory (SPEC §2): one runtime server per data dir. The lock
 * file `runtime.lock` holds the owner's pid and, where the system tells it, the owner's start
 * time (`<pid> <start time>`, the start time in clock ticks since boot from
 * `/proc/<pid>/stat`, field 22, proc(5)). A second server is refused with the pid. A lock left
 * by a process that no longer exists — or whose pid now belongs to another process, started
 * later — is taken over.
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { makeDirectorySync, removeMadeDirectoriesSync } from '../make-directory.js';

/** Name of the lock file inside the data directory (SPEC §4 layout). */
export const LOCK_FILE = 'runtime.lock';

/** Clock ticks per second of `/proc` times (USER_HZ, 100 on Linux whatever the kernel's HZ). */
const TICKS_PER_SECOND = 100;

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

/**
 * The data directory cannot be made or used: a path that cannot be created (under `/proc`, a
 * read-only file system, no permission), or one naming a file.
 */
export class DataDirUnusableError extends Error {
  constructor(
    readonly dataDir: string,
    /** What went wrong, e.g. `cannot create it (ENOENT: …)`. */
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`data directory ${dataDir}: ${problem}`, options);
    this.name = 'DataDirUnusableError';
  }
}

/**
 * Whether a live process has this pid (signal 0 checks without sending anything). A zombie — a
 * process that has exited but that its parent has not reaped yet, which in a container whose
 * first process never reaps may stay forever — has ended: it holds nothing (state `Z` or `X`
 * in `/proc/<pid>/stat`, proc(5)).
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !hasExited(pid);
}

/** Whether `/proc` shows the process as exited but not reaped (false where `/proc` does not tell). */
function hasExited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command name) is in parentheses and may hold spaces or ')': field 3 follows the last ')'.
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

/**
 * A process's start time in clock ticks after boot (`/proc/<pid>/stat` field 22, proc(5)), or
 * undefined where `/proc` does not tell (not Linux, process gone).
 */
export function processStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command name) is in parentheses and may hold spaces or ')': count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTime = Number(fields[19]);
    return Number.isSafeInteger(startTime) ? startTime : undefined;
  } catch {
    return undefined;
  }
}

/** Boot time, ms since the epoch (`btime` in `/proc/stat`), or undefined where unknown. */
function bootTimeMs(): number | undefined {
  try {
    const match = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    return match ? Number(match[1]) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** What a lock file says. */
interface LockContents {
  pid: number;
  /** Start time of the holder in clock ticks after boot, when it was recorded. */
  startTime?: number;
}

function parseLock(text: string): LockContents | undefined {
  const [pidText, startText] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const startTime = startText === undefined ? undefined : Number(startText);
  return { pid, ...(startTime !== undefined && Number.isSafeInteger(startTime) ? { startTime } : {}) };
}

/**
 * Whether the process a lock file names is still the one that wrote it: alive and, when the
 * file has a start time, started at that time. A file with only a pid (older servers) counts as
 * stale when its pid's process started after the file was last written (the pid was reused).
 */
function holderAlive(lock: LockContents, file: string): boolean {
  if (!processExists(lock.pid)) return false;
  const startTime = processStartTime(lock.pid);
  if (startTime === undefined) return true;
  if (lock.startTime !== undefined) return startTime === lock.startTime;
  const boot = bootTimeMs();
  if (boot === undefined) return true;
  try {
    const startedAt = boot + (startTime * 1000) / TICKS_PER_SECOND;
    // One second of slack: btime is whole seconds.
    return startedAt <= statSync(file).mtimeMs + 1000;
  } catch {
    return true;
  }
}

/** The pid recorded in a data dir's lock file, when the lock is held by the live process that took it. */
export function lockHolder(dataDir: string): number | undefined {
  const file = path.join(dataDir, LOCK_FILE);
  try {
    const lock = parseLock(readFileSync(file, 'utf8'));
    return lock && holderAlive(lock, file) ? lock.pid : undefined;
  } catch {
    return undefined;
  }
}

/** A held lock; `release` removes the file (only if it is still ours). */
export interface DataDirLock {
  /**
   * The topmost directory made for the data directory when taking the lock (absolute): the data
   * directory itself or one of its parents; undefined when the data directory existed.
   */
  readonly createdDirectory?: string;
  release(): void;
}

/**
 * Takes the lock on a data directory, creating the directory when missing. When the lock is
 * not taken, the directories made for it are removed again (those still empty).
 * @throws DataDirLockedError naming the holder's pid when a live process holds it
 * @throws DataDirUnusableError when the directory cannot be created, is not a directory, or the lock file cannot be created in it
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  let created: string | undefined;
  try {
    created = makeDirectorySync(dataDir, 0o700);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DataDirUnusableError(dataDir, code === 'EEXIST' || code === 'ENOTDIR' ? `not a directory (${(error as Error).message})` : `cannot create it (${(error as Error).message})`, { cause: error });
  }
  try {
    return lockDirectory(dataDir, created);
  } catch (error) {
    // Only empty directories go: another server that took the lock meanwhile has its file there.
    removeMadeDirectoriesSync(dataDir, created);
    throw error;
  }
}

/** Takes the lock of an existing data directory (see {@link acquireDataDirLock}). */
function lockDirectory(dataDir: string, created: string | undefined): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  const startTime = processStartTime(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // 'wx' fails when the file exists, so two servers starting together cannot both win.
      const descriptor = openSync(file, 'wx', 0o600);
      writeSync(descriptor, `${process.pid}${startTime !== undefined ? ` ${startTime}` : ''}\n`);
      closeSync(descriptor);
      return {
        ...(created !== undefined ? { createdDirectory: created } : {}),
        release() {
          try {
            if (parseLock(readFileSync(file, 'utf8'))?.pid === process.pid) unlinkSync(file);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new DataDirUnusableError(dataDir, `cannot create the lock file ${LOCK_FILE} in it (${(error as Error).message})`, { cause: error });
      const holder = lockHolder(dataDir);
      if (holder !== undefined && holder !== process.pid) throw new DataDirLockedError(dataDir, holder);
      // Stale lock from a process that died (or whose pid was reused): remove it and try again.
      try {
        unlinkSync(file);
      } catch {
        // Someone else removed it first; the next attempt settles who wins.
      }
    }
  }
  throw new Error(`could not take the lock ${file} after 3 attempts`);
}

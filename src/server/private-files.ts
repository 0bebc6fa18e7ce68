/**
 * Permissions of what OpenVaala keeps on disk. Conversations hold source code, commands and
 * their output, and the configuration holds API keys, so nothing is readable by other local
 * users: directories are created 0700 and files 0600, whatever the umask, and the server
 * tightens its own directories that are more open when it starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { OpenVaalaPaths } from '../config/paths.js';
import type { Logger } from '../logger.js';
import { makeDirectorySync } from '../make-directory.js';

/** Mode of every directory OpenVaala creates: owner only. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
/** Mode of every file OpenVaala creates: owner read and write. */
export const PRIVATE_FILE_MODE = 0o600;

/** Creates a directory (and missing parents) with mode 0700. */
export function ensurePrivateDirectory(directory: string): void {
  makeDirectorySync(directory, PRIVATE_DIRECTORY_MODE);
}

/**
 * Creates an empty file with mode 0600 when it does not exist (an existing file is left as
 * it is). Its directory is created 0700 when missing.
 */
export function createPrivateFile(file: string): void {
  ensurePrivateDirectory(path.dirname(file));
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
}

/** One permission change made by {@link tightenPermissions}. */
export interface TightenedPath {
  path: string;
  /** Permission bits before, e.g. 0o755. */
  from: number;
  /** Permission bits after (0o700 or 0o600). */
  to: number;
}

/**
 * Takes group and other permissions away from one path owned by this user, when it is of the
 * kind expected there: a directory given mode 0700 must be a directory (a file named by a
 * mistaken option would otherwise become executable), a file given 0600 a regular file.
 * Symbolic links and paths of other owners are left alone. Returns the change, if one was made.
 */
function tighten(target: string, mode: number): TightenedPath | undefined {
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(target);
  } catch {
    return undefined;
  }
  if (stats.isSymbolicLink() || (process.getuid && stats.uid !== process.getuid())) return undefined;
  if (mode === PRIVATE_DIRECTORY_MODE ? !stats.isDirectory() : !stats.isFile()) return undefined;
  const current = stats.mode & 0o777;
  if ((current & 0o077) === 0) return undefined;
  fs.chmodSync(target, mode);
  return { path: target, from: current, to: mode };
}

/**
 * Tightens what a server owns when it starts: the data, state and configuration directories
 * and the data directory's `conversations` directory become 0700; regular files directly in
 * the data and state directories (index, lock, server file) become 0600. Files deeper down
 * are reachable only through those directories. Each change is logged.
 * @returns the changes made
 */
export function tightenPermissions(paths: OpenVaalaPaths, logger: Logger): TightenedPath[] {
  const changes: TightenedPath[] = [];
  const directories = [paths.dataDir, path.join(paths.dataDir, 'conversations'), paths.stateDir, paths.configDir];
  for (const directory of directories) {
    const change = tighten(directory, PRIVATE_DIRECTORY_MODE);
    if (change) changes.push(change);
  }
  for (const directory of [paths.dataDir, paths.stateDir]) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(directory, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const change = tighten(path.join(directory, entry.name), PRIVATE_FILE_MODE);
      if (change) changes.push(change);
    }
  }
  for (const change of changes) {
    logger.warn({ path: change.path, from: `0${change.from.toString(8)}`, to: `0${change.to.toString(8)}` }, 'permissions were open to other users: tightened');
  }
  return changes;
}

/**
 * When a stream file cannot hold a log at all, shared by FileLogStorage and the fast reindex
 * reads so both refuse the same files with the same words: only a regular file (or a link to
 * one) is a log. A directory, named pipe, socket or device under a stream's name, a dangling
 * link, and the open or read errors that describe the file itself become an
 * {@link UnreadableStreamError} naming the file; nothing about such a file is changed.
 */
import fs from 'node:fs';
import { UnreadableStreamError } from '../log-storage.js';

/**
 * Added to every open of a stream file: without it, opening a named pipe found in a log's
 * place for reading waits for a writer that never comes. Regular files ignore it.
 */
export const NON_BLOCKING_OPEN = fs.constants.O_NONBLOCK;

/**
 * Errors of open and read that say something about the file (as opposed to the process,
 * such as too many open files, which are left as they are), in words.
 */
const FILE_FAULTS: Record<string, string> = {
  EISDIR: 'it is a directory',
  EACCES: 'permission denied (EACCES)',
  EPERM: 'operation not permitted (EPERM)',
  EIO: 'input/output error (EIO)',
  ELOOP: 'too many levels of symbolic links (ELOOP)',
  ENOTDIR: 'a directory on its path is not a directory (ENOTDIR)',
  ENXIO: 'no such device or address (ENXIO)',
  ENODEV: 'no such device (ENODEV)',
  EOVERFLOW: 'it is too large to open (EOVERFLOW)',
  ETXTBSY: 'it is busy (ETXTBSY)',
  ESTALE: 'stale file handle (ESTALE)',
};

/** Why a file with these stats (of the file itself, links followed) holds no log; undefined for a regular file. */
export function notALogFile(stats: fs.Stats): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'it is a directory';
  if (stats.isFIFO()) return 'it is a named pipe (FIFO)';
  if (stats.isSocket()) return 'it is a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'it is a device';
  return 'it is not a regular file';
}

/**
 * `error`, thrown opening or reading `filePath`, as an {@link UnreadableStreamError} when it
 * describes the file; any other error is returned as it is.
 */
export function asUnreadable(filePath: string, error: unknown): unknown {
  if (error instanceof UnreadableStreamError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = code === undefined ? undefined : FILE_FAULTS[code];
  return reason === undefined ? error : new UnreadableStreamError(filePath, reason, { cause: error });
}

/** The error for a dangling symbolic link at `filePath`, given the link's `lstat`; undefined when it is none. */
function danglingLink(filePath: string, stats: fs.Stats, readTarget: () => string): UnreadableStreamError | undefined {
  if (!stats.isSymbolicLink()) return undefined;
  let target = '';
  try {
    target = ` (${readTarget()})`;
  } catch {
    // The link is there; its target is only a detail of the message.
  }
  return new UnreadableStreamError(filePath, `it is a symbolic link to a missing file${target}`);
}

/**
 * After an open of `filePath` failed with ENOENT: the error to throw when a dangling symbolic
 * link stands in the stream's place (it must not read as a missing, empty stream, nor be
 * replaced by a new file); undefined when nothing is there.
 */
export async function danglingLinkError(filePath: string): Promise<UnreadableStreamError | undefined> {
  const stats = await fs.promises.lstat(filePath).catch(() => undefined);
  return stats && danglingLink(filePath, stats, () => fs.readlinkSync(filePath));
}

/** {@link danglingLinkError}, synchronously (for the reindex reads, which are synchronous). */
export function danglingLinkErrorSync(filePath: string): UnreadableStreamError | undefined {
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(filePath);
  } catch {
    return undefined;
  }
  return danglingLink(filePath, stats, () => fs.readlinkSync(filePath));
}

/**
 * Checks a descriptor just opened on `filePath`: closes it and throws when the file is no
 * regular file.
 * @throws UnreadableStreamError naming the file and what it is
 */
export function checkOpenedLogFile(filePath: string, fd: number): void {
  let reason: string | undefined;
  try {
    reason = notALogFile(fs.fstatSync(fd));
  } catch (error) {
    fs.closeSync(fd);
    throw asUnreadable(filePath, error);
  }
  if (reason === undefined) return;
  fs.closeSync(fd);
  throw new UnreadableStreamError(filePath, reason);
}

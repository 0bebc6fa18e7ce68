/**
 * The server never says where its data directory is (it writes `<data dir>/` in what it tells
 * clients; see `server/request-errors.ts`). A command of the command line that found the server
 * through that data directory on this machine knows the path, and prints it, so a file named in
 * a warning or an error can be opened as printed.
 */
import path from 'node:path';
import { DATA_DIRECTORY_MARK } from '../protocol/error-codes.js';

/**
 * `text` with each `<data dir>/` written as the data directory's path.
 * @param dataDirectory the data directory of the server that answered, as the command resolved it
 */
export function showDataDirectory(text: string, dataDirectory: string): string {
  return text.split(DATA_DIRECTORY_MARK).join(`${dataDirectory.replace(/[\\/]+$/, '')}${path.sep}`);
}

/**
 * Writes the data directory's path into an error's message (see {@link showDataDirectory}) and
 * returns the same error, to be thrown on; anything but an Error is returned as it is.
 */
export function withDataDirectoryShown(error: unknown, dataDirectory: string): unknown {
  if (error instanceof Error) error.message = showDataDirectory(error.message, dataDirectory);
  return error;
}

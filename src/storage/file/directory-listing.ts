/**
 * What FileLogStorage lists under a log path (SPEC §4, `listStreams` and `listPaths`): the
 * stream files and the child directories of the path's directory. Names that are not valid
 * stream ids or path segments are left out, as are other files (such as the temporary file
 * of a stream replacement, `<stream>.jsonl.replace-<random>`), so nothing found on disk can
 * make a listing name something the storage would refuse to open.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { STREAM_FILE_SUFFIX, sortNames, validateLogPath, validateStreamId } from '../log-validation.js';

/**
 * The stream ids of a path: its directory's `.jsonl` files without the suffix, in code point
 * order; [] when the directory does not exist.
 * @param root the storage's absolute root directory
 * @throws Error for an invalid log path, or a read error other than a missing directory
 */
export async function listStreamNames(root: string, path: string): Promise<string[]> {
  const entries = await listDirectory(root, path);
  const names = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(STREAM_FILE_SUFFIX))
    .map((entry) => entry.name.slice(0, -STREAM_FILE_SUFFIX.length))
    .filter((name) => isValidName(() => validateStreamId(name, path)));
  return sortNames(names);
}

/**
 * The child path names of a path (single segments, not full paths): its directory's
 * subdirectories, in code point order; [] when the directory does not exist.
 * @param root the storage's absolute root directory
 * @throws Error for an invalid log path, or a read error other than a missing directory
 */
export async function listChildPathNames(root: string, path: string): Promise<string[]> {
  const entries = await listDirectory(root, path);
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .filter((name) => isValidName(() => validateLogPath(name)));
  return sortNames(names);
}

async function listDirectory(root: string, path: string): Promise<fs.Dirent[]> {
  const segments = validateLogPath(path);
  try {
    return await fs.promises.readdir(nodePath.join(root, ...segments), { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

function isValidName(check: () => void): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

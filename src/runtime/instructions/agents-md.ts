/**
 * `AGENTS.md` files (SPEC §6 "`AGENTS.md` files in the work location become instruction
 * items", as in Codex): every `AGENTS.md` from the repository root down to the working
 * directory, outermost first, so more specific instructions come later and win. The
 * repository root is the nearest directory at or above the working directory that holds a
 * `.git` entry (a directory, or a file in worktrees and submodules); without one, only the
 * working directory itself is read. Files are read through the executor's file system.
 */
import path from 'node:path';
import type { ExecutorFileSystem } from '../../executors/executor.js';

/** The file name looked for in each directory. */
export const AGENTS_MD_FILE = 'AGENTS.md';
/** Most bytes of AGENTS.md text given to the model, all files together (32 KiB, as in Codex). */
export const AGENTS_MD_LIMIT_BYTES = 32 * 1024;

/** One AGENTS.md as it goes into an `instruction` item. */
export interface AgentsMdFile {
  /** Absolute path on the executor (the item's name). */
  path: string;
  /** Its text, cut (with a note saying so) where the total limit was reached. */
  body: string;
  /** True when the body is not the whole file. */
  truncated: boolean;
}

/**
 * The repository root of `workDirectory`: the nearest directory at or above it holding
 * `.git`, or `workDirectory` itself when there is none.
 */
export async function findRepositoryRoot(fileSystem: ExecutorFileSystem, workDirectory: string): Promise<string> {
  let directory = path.posix.resolve(workDirectory);
  while (true) {
    if ((await fileSystem.stat(path.posix.join(directory, '.git'))) !== undefined) return directory;
    const parent = path.posix.dirname(directory);
    if (parent === directory) return path.posix.resolve(workDirectory);
    directory = parent;
  }
}

/** The directories from `root` down to `workDirectory`, both included (`root` must contain it). */
function directoriesBetween(root: string, workDirectory: string): string[] {
  const relative = path.posix.relative(root, workDirectory);
  const directories = [root];
  if (relative === '') return directories;
  let current = root;
  for (const part of relative.split('/')) {
    current = path.posix.join(current, part);
    directories.push(current);
  }
  return directories;
}

/** Cuts UTF-8 text to at most `limitBytes` bytes without splitting a character. */
function cutToBytes(text: string, limitBytes: number): string {
  return Buffer.from(text, 'utf8').subarray(0, limitBytes).toString('utf8').replace(/\uFFFD+$/, '');
}

/**
 * Reads the AGENTS.md files that apply to `workDirectory`, outermost first, within a total
 * of `limitBytes` bytes: the file that crosses the limit is cut, later ones are listed with
 * a note instead of their text, and both notes name the limit. A file that cannot be read
 * is listed with the reason. Never rejects for a missing or unreadable file.
 */
export async function collectAgentsMd(fileSystem: ExecutorFileSystem, workDirectory: string, limitBytes = AGENTS_MD_LIMIT_BYTES): Promise<AgentsMdFile[]> {
  const root = await findRepositoryRoot(fileSystem, workDirectory);
  const files: AgentsMdFile[] = [];
  let remaining = limitBytes;
  for (const directory of directoriesBetween(root, path.posix.resolve(workDirectory))) {
    const file = path.posix.join(directory, AGENTS_MD_FILE);
    const stat = await fileSystem.stat(file).catch(() => undefined);
    if (stat === undefined || stat.kind === 'directory') continue;
    let text: string;
    try {
      text = Buffer.from(await fileSystem.readFile(file)).toString('utf8').replace(/^\uFEFF/, '');
    } catch (error) {
      files.push({ path: file, body: `[${AGENTS_MD_FILE} could not be read: ${(error as Error).message}]`, truncated: true });
      continue;
    }
    const size = Buffer.byteLength(text, 'utf8');
    if (remaining <= 0) {
      files.push({ path: file, body: `[not included: ${size} bytes; AGENTS.md files are limited to ${limitBytes} bytes in total and the files above used them all]`, truncated: true });
    } else if (size > remaining) {
      const kept = cutToBytes(text, remaining);
      files.push({ path: file, body: `${kept}\n[… truncated: AGENTS.md files are limited to ${limitBytes} bytes in total; ${size - Buffer.byteLength(kept, 'utf8')} bytes of this file were left out …]`, truncated: true });
      remaining = 0;
    } else {
      files.push({ path: file, body: text, truncated: false });
      remaining -= size;
    }
  }
  return files;
}

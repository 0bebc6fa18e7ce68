/**
 * Puts an uploaded file into the conversation's working directory, in
 * `.openvaala/attachments/`, so the agent's tools can open it where they work (docs/protocol.md,
 * "Resumable uploads"). Written through the executor's file API, so it works the same on a
 * local, sandboxed, SSH or virtual executor. The folder holds a `.gitignore` reading `*`: git
 * ignores the folder and everything in it, the `.gitignore` included, so uploads never show up
 * as changes of the project.
 */
import path from 'node:path';
import { lockKeyOf, pathLocksOf } from '../executors/path-locks.js';
import type { Workspace } from '../executors/workspace.js';

/** The attachments folder, relative to the working directory. */
export const WORKSPACE_ATTACHMENTS_DIRECTORY = '.openvaala/attachments';
/** Content of the folder's `.gitignore`: everything in the folder, itself included. */
const IGNORE_EVERYTHING = '*\n';
/** How many numbered names are tried before giving up. */
const MAX_NAME_ATTEMPTS = 1000;

/**
 * The `attempt`-th candidate for a file name: the name itself, then `<stem>-2<ext>`, `<stem>-3<ext>`…
 * (`photo.png` → `photo-2.png`; `archive.tar.gz` → `archive.tar-2.gz`; `.env`-like names keep no extension).
 */
export function numberedName(name: string, attempt: number): string {
  if (attempt <= 1) return name;
  const extension = path.posix.extname(name);
  return `${name.slice(0, name.length - extension.length)}-${attempt}${extension}`;
}

/**
 * Writes `bytes` as a new file in the workspace's attachments folder, creating the folder and
 * its `.gitignore` when missing. The name is `name` or, when a file of that name exists, the
 * first free numbered variant (see `numberedName`): an existing file is never overwritten. The
 * choice and the write hold the executor's path lock of the folder, so two uploads at once never
 * pick the same name (a command creating a file of that name at the same moment is not locked out).
 * @param workspace the conversation's (first) workspace
 * @param name a name already passed through `sanitizeFileName` (one path segment, no leading dot)
 * @returns the file's path relative to the working directory (`.openvaala/attachments/<name>`)
 * @throws Error naming the path when the folder leads outside the workspace through a symlink,
 *   when no free name is found, or from the executor's file system (permissions, disk full, SSH down)
 */
export async function placeInWorkspace(workspace: Workspace, name: string, bytes: Uint8Array): Promise<string> {
  const fileSystem = workspace.executor.fs;
  const directory = await workspace.resolveSafe(WORKSPACE_ATTACHMENTS_DIRECTORY);
  await fileSystem.makeDirectory(directory);
  const key = await lockKeyOf(fileSystem, directory, 'follow');
  return pathLocksOf(workspace.executor).withLocks([key], async () => {
    const ignoreFile = path.posix.join(directory, '.gitignore');
    if ((await fileSystem.stat(ignoreFile)) === undefined) await fileSystem.writeFile(ignoreFile, IGNORE_EVERYTHING);
    for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt++) {
      const candidate = numberedName(name, attempt);
      if (candidate === '.gitignore') continue;
      const target = path.posix.join(directory, candidate);
      if ((await fileSystem.stat(target)) !== undefined) continue;
      await fileSystem.writeFile(target, bytes);
      return `${WORKSPACE_ATTACHMENTS_DIRECTORY}/${candidate}`;
    }
    throw new Error(`${WORKSPACE_ATTACHMENTS_DIRECTORY}/${name}: no free name after ${MAX_NAME_ATTEMPTS} attempts`);
  });
}

/**
 * Seeding and reading back file trees through an executor's own file system, so that the
 * same test works on the local disk, over SFTP and in memory.
 */
import path from 'node:path';
import type { ExecutorFileSystem } from '../../src/executors/executor.js';

/** Writes `files` (relative path → content) under `root`, creating directories as needed. */
export async function writeTree(fileSystem: ExecutorFileSystem, root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    const target = path.posix.join(root, file);
    await fileSystem.makeDirectory(path.posix.dirname(target));
    await fileSystem.writeFile(target, content);
  }
}

/**
 * Every regular file under `root`, keyed by its relative POSIX path.
 * @throws Error naming the entry when something other than a file or directory is found
 */
export async function readTree(fileSystem: ExecutorFileSystem, root: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await fileSystem.readDirectory(directory)) {
      const full = path.posix.join(directory, entry.name);
      if (entry.kind === 'directory') await walk(full);
      else if (entry.kind === 'file') files.set(path.posix.relative(root, full), Buffer.from(await fileSystem.readFile(full)));
      else throw new Error(`unexpected ${entry.kind} entry ${full}`);
    }
  };
  await walk(root);
  return files;
}

/**
 * The four executor set-ups the shared tool suite runs against, unchanged: `local`,
 * `local+bwrap`, `ssh` (a real OpenSSH server on 127.0.0.1 started for the suite) and
 * `virtual`. Each hands out fresh workspaces and a directory outside all of them (holding
 * `secret.txt`) for escape attempts. A variant whose system program is missing fails with
 * a message naming the install script.
 */
import { mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Executor, ExecutorFileSystem } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { VirtualExecutor } from '../../src/executors/virtual/virtual-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { writeTree } from './executor-tree.js';
import { requireExecutable } from './required-commands.js';
import { startSshServer } from './ssh-server.js';

/** The executor set-ups of the shared suite. */
export const EXECUTOR_VARIANTS = ['local', 'local+bwrap', 'ssh', 'virtual'] as const;
/** One of `EXECUTOR_VARIANTS`. */
export type ExecutorVariant = (typeof EXECUTOR_VARIANTS)[number];

/** Content of `secret.txt` in the outside directory. */
export const OUTSIDE_SECRET = 'outside secret\n';

/** A started executor variant. */
export interface ExecutorFixture {
  variant: ExecutorVariant;
  executor: Executor;
  /** A directory outside every workspace, holding `secret.txt`. */
  outsideDirectory: string;
  /** A file system that sees the outside directory (the host's, for a sandbox that hides it). */
  outsideFiles: ExecutorFileSystem;
  /** Whether the executor has a real ripgrep (every variant but `virtual` must). */
  expectsRipgrep: boolean;
  /** A new empty workspace, optionally holding `files`. */
  newWorkspace(files?: Record<string, string | Uint8Array>): Promise<Workspace>;
  /** Creates a symlink on the executor (`target` as written, `linkPath` absolute). */
  makeSymlink(target: string, linkPath: string): Promise<void>;
  /** Stops servers, closes the executor, removes temporary directories. */
  dispose(): Promise<void>;
}

async function realTemporaryDirectory(prefix: string): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

/**
 * Starts a variant.
 * @throws Error naming the install script when `bwrap`, `sshd`, `ssh-keygen` or `rg` is missing
 */
export async function createExecutorFixture(variant: ExecutorVariant): Promise<ExecutorFixture> {
  let counter = 0;
  if (variant === 'virtual') {
    const executor = new VirtualExecutor({ name: 'virtual', root: '/workspaces', files: { '../outside/secret.txt': OUTSIDE_SECRET } });
    return {
      variant,
      executor,
      outsideDirectory: '/outside',
      outsideFiles: executor.fs,
      expectsRipgrep: false,
      async newWorkspace(files = {}) {
        counter += 1;
        const root = `/workspaces/w${counter}`;
        await executor.fs.makeDirectory(root);
        await writeTree(executor.fs, root, files);
        return new Workspace(executor, root);
      },
      makeSymlink: (target, linkPath) => executor.fs.makeSymlink(target, linkPath),
      dispose: () => executor.close(),
    };
  }

  requireExecutable('rg', 'ripgrep');
  const base = await realTemporaryDirectory(`openvaala-${variant.replace('+', '-')}-`);
  const outsideDirectory = path.join(base, 'outside');
  const cleanups: (() => Promise<void>)[] = [() => rm(base, { recursive: true, force: true })];
  let executor: Executor;
  if (variant === 'local') {
    executor = new LocalExecutor({ name: 'local' });
  } else if (variant === 'local+bwrap') {
    requireExecutable('bwrap', 'bubblewrap');
    executor = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' });
  } else {
    const server = await startSshServer();
    cleanups.push(() => server.dispose());
    executor = new SshExecutor({
      name: 'ssh-test',
      host: server.host,
      port: server.port,
      user: server.user,
      identityFile: server.identityFile,
      knownHostsFile: server.knownHostsFile,
      connectTimeoutMs: 5000,
    });
  }
  // A sandboxed executor's file operations can write only inside workspaces: the directory
  // outside them is made on the host.
  const hostFiles = variant === 'local+bwrap' ? new LocalFileSystem() : executor.fs;
  await writeTree(hostFiles, outsideDirectory, { 'secret.txt': OUTSIDE_SECRET });
  return {
    variant,
    executor,
    outsideDirectory,
    outsideFiles: hostFiles,
    expectsRipgrep: true,
    async newWorkspace(files = {}) {
      counter += 1;
      const root = path.join(base, `w${counter}`);
      await hostFiles.makeDirectory(root);
      const workspace = new Workspace(executor, root);
      await writeTree(executor.fs, root, files);
      return workspace;
    },
    makeSymlink: (target, linkPath) => symlink(target, linkPath),
    async dispose() {
      await executor.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}

/**
 * Wrapping local commands in bubblewrap (`bwrap`, SPEC §7 "optional sandbox: bwrap"): the
 * command sees the whole system read-only, can write only to its workspace and the configured
 * extra paths, gets a private `/tmp`, its own process, IPC and session namespaces, and no
 * network unless allowed.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { CommandRequest } from '../executor.js';
import type { CommandProgram } from './run-command.js';

/** How a sandboxed local executor confines its commands. */
export interface BubblewrapPolicy {
  /** True to keep the host's network (default false: `--unshare-net`, only a private loopback). */
  network: boolean;
  /** Absolute paths made writable besides the workspace (e.g. a build cache). */
  writablePaths: string[];
}

/**
 * The absolute path of `bwrap`: `explicitPath` when given, else the first `bwrap` on `PATH`.
 * @returns undefined when there is none (or `explicitPath` is not executable)
 */
export function findBubblewrap(explicitPath?: string, searchPath = process.env.PATH ?? ''): string | undefined {
  const candidates = explicitPath !== undefined ? [explicitPath] : searchPath.split(path.delimiter).filter((entry) => entry !== '').map((directory) => path.join(directory, 'bwrap'));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

/** The error for a sandboxed executor on a machine without bubblewrap. */
export function missingBubblewrapError(executorName: string, explicitPath?: string): Error {
  const where = explicitPath !== undefined ? `at ${explicitPath}` : 'on PATH';
  return new Error(
    `executor "${executorName}" is configured with sandbox: bwrap, but bubblewrap (the bwrap command) was not found ${where}; ` +
      'install it (Debian/Ubuntu: apt-get install bubblewrap) or remove the sandbox setting',
  );
}

function requireDirectory(executorName: string, what: string, directory: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(directory).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) throw new Error(`executor "${executorName}": the ${what} ${directory} does not exist or is not a directory, so it cannot be made writable in the bwrap sandbox`);
}

/**
 * The bubblewrap command line that runs `bash -c request.command` in the sandbox.
 *
 * Mount order matters: `/` read-only first, then a fresh `/dev`, `/proc` and an empty tmpfs
 * on `/tmp`, and only then the writable binds, so that a workspace under `/tmp` is bound on
 * top of the private tmpfs instead of being hidden by it. `--die-with-parent` and the PID
 * namespace make the whole sandbox, background jobs included, end with the command.
 *
 * @param request the command; `workspaceRoot` (or `cwd` when absent) becomes writable
 * @param policy network and extra writable paths
 * @param bwrapPath absolute path of `bwrap`
 * @param executorName named in errors
 * @throws Error naming the path when the workspace or a writable path is not a directory
 */
export function bubblewrapProgram(request: Pick<CommandRequest, 'command' | 'cwd' | 'workspaceRoot'>, policy: BubblewrapPolicy, bwrapPath: string, executorName: string): CommandProgram {
  // A missing cwd is reported by the spawn itself, like for unsandboxed commands.
  if (request.workspaceRoot !== undefined) requireDirectory(executorName, 'workspace', request.workspaceRoot);
  const workspace = request.workspaceRoot ?? request.cwd;
  for (const extra of policy.writablePaths) requireDirectory(executorName, 'writable path', extra);
  const args = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc'];
  if (!policy.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  for (const writable of [workspace, ...policy.writablePaths]) args.push('--bind', writable, writable);
  args.push('--chdir', request.cwd, '--', 'bash', '-c', request.command);
  return { file: bwrapPath, args };
}

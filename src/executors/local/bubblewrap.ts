/**
 * Wrapping local commands in bubblewrap (`bwrap`, SPEC §7 "optional sandbox: bwrap"): the
 * command sees the whole system read-only, can write only to its workspace and the configured
 * extra paths, gets a private `/tmp`, its own process, IPC and session namespaces, and no
 * network unless allowed.
 */
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandRequest } from '../executor.js';
import type { CommandProgram } from './run-command.js';

/** How a sandboxed local executor confines its commands. */
export interface BubblewrapPolicy {
  /** True to keep the host's network (default false: `--unshare-net`, only a private loopback). */
  network: boolean;
  /** Absolute paths made writable besides the workspace (e.g. a build cache). */
  writablePaths: string[];
  /** Absolute paths made readable (read-only) even where a hidden directory or the emptied home would hide them. */
  readablePaths?: string[];
  /**
   * Absolute directories the sandbox must never see (the server's configuration, data and
   * state directories): each is replaced by an empty tmpfs, even inside the workspace.
   */
  hiddenPaths?: string[];
  /** The home directory of the server's user (`$HOME`), replaced by an empty tmpfs (unless it is `/`). */
  homeDirectory?: string;
  /**
   * The home of the server's account in the password database (`getpwuid(3)`), emptied as well
   * when it differs from `homeDirectory`: a server started with `HOME` pointing elsewhere (a
   * service manager, a wrapper script) would otherwise show its account's real home, keys and
   * credentials included, to every sandboxed command.
   */
  accountHomeDirectory?: string;
}

/** The home of the current account in the password database, or undefined when it has none (`os.userInfo` throws then). */
export function accountHomeDirectory(): string | undefined {
  try {
    const home = os.userInfo().homedir;
    return home === '' ? undefined : home;
  } catch {
    return undefined;
  }
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

/** One mount of the sandbox's file system view, applied in order of depth. */
interface Mount {
  option: '--tmpfs' | '--bind' | '--ro-bind';
  target: string;
  /** Among mounts of equal depth: the home (0) goes first, binds (1) next, hidden directories (2) last. */
  rank: number;
}

function depth(target: string): number {
  return target.split('/').filter((part) => part !== '').length;
}

/** The real path of an existing directory, or undefined (nothing there to hide). */
function existingDirectory(directory: string): string | undefined {
  try {
    return statSync(directory).isDirectory() ? realpathSync(directory) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bubblewrap options building the sandbox's file system view: the whole system read-only,
 * fresh `/dev` and `/proc`, a private `/tmp`, the home emptied, the writable and readable
 * paths bound, and the hidden directories emptied.
 *
 * Mounts are applied shallowest first, so a deeper one always wins over a shallower one
 * whatever their kind: a workspace under the emptied home is bound on top of it, and a hidden
 * directory inside the workspace is emptied on top of the workspace. At equal depth a hidden
 * directory wins over a bind, which wins over the emptied home.
 *
 * @param writable absolute directories to make writable (the workspace first)
 * @param policy the executor's policy (readable, hidden and home directories; both homes are emptied)
 * @param executorName named in errors
 * @param readOnlyScratch true to make the private `/tmp` and the emptied home read-only too
 *   (for the file server, whose writes must fail rather than vanish into a private tmpfs);
 *   the emptied hidden directories are read-only either way
 * @throws Error naming the path when a readable path does not exist (writable ones are checked by the caller)
 */
export function sandboxMountArguments(writable: string[], policy: BubblewrapPolicy, executorName: string, readOnlyScratch = false): string[] {
  const mounts: Mount[] = [];
  const homes = new Set<string>();
  for (const configured of [policy.homeDirectory, policy.accountHomeDirectory]) {
    const home = configured !== undefined ? existingDirectory(configured) : undefined;
    if (home !== undefined && home !== '/') homes.add(home);
  }
  for (const home of homes) mounts.push({ option: '--tmpfs', target: home, rank: 0 });
  for (const directory of writable) mounts.push({ option: '--bind', target: directory, rank: 1 });
  for (const readable of policy.readablePaths ?? []) {
    if (!existsSync(readable)) throw new Error(`executor "${executorName}": the readable path ${readable} does not exist, so it cannot be shown in the bwrap sandbox`);
    mounts.push({ option: '--ro-bind', target: readable, rank: 1 });
  }
  for (const hidden of policy.hiddenPaths ?? []) {
    const directory = existingDirectory(hidden);
    if (directory !== undefined) mounts.push({ option: '--tmpfs', target: directory, rank: 2 });
  }
  const ordered = mounts.map((mount, index) => ({ mount, index })).sort((left, right) => depth(left.mount.target) - depth(right.mount.target) || left.mount.rank - right.mount.rank || left.index - right.index);
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  for (const { mount } of ordered) {
    if (mount.option === '--tmpfs') args.push('--tmpfs', mount.target);
    else args.push(mount.option, mount.target, mount.target);
  }
  // Remounting a tmpfs read-only leaves the binds below it writable: they are mounts of their own.
  // A hidden directory is read-only for commands too: what a command wrote there would seem
  // written and vanish with the sandbox (the directory shown is not the real one).
  if (readOnlyScratch) args.push('--remount-ro', '/tmp');
  for (const { mount } of ordered) if (mount.option === '--tmpfs' && (readOnlyScratch || mount.rank === 2)) args.push('--remount-ro', mount.target);
  return args;
}

/**
 * The bubblewrap options every sandboxed process gets: its own session (no terminal
 * injection through TIOCSTI), PID and IPC namespaces, no network unless allowed, and death
 * with its parent. In the PID namespace bwrap is the init; when the command ends, or bwrap is
 * killed, the kernel kills every process left in the namespace, daemons included.
 */
export function sandboxNamespaceArguments(policy: BubblewrapPolicy): string[] {
  const args = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc'];
  if (!policy.network) args.push('--unshare-net');
  return args;
}

/**
 * The bubblewrap command line that runs `bash -c request.command` in the sandbox (see
 * `sandboxMountArguments` for what the command sees and `sandboxNamespaceArguments` for its
 * namespaces).
 *
 * @param request the command; `workspaceRoot` (or `cwd` when absent) becomes writable
 * @param policy network, extra writable and readable paths, hidden directories, home
 * @param bwrapPath absolute path of `bwrap`
 * @param executorName named in errors
 * @param environment the whole environment of the sandboxed process
 * @throws Error naming the path when the workspace or a writable path is not a directory
 */
export function bubblewrapProgram(
  request: Pick<CommandRequest, 'command' | 'cwd' | 'workspaceRoot'>,
  policy: BubblewrapPolicy,
  bwrapPath: string,
  executorName: string,
  environment?: Record<string, string>,
): CommandProgram {
  // A missing cwd is reported by the spawn itself, like for unsandboxed commands.
  if (request.workspaceRoot !== undefined) requireDirectory(executorName, 'workspace', request.workspaceRoot);
  const workspace = request.workspaceRoot ?? request.cwd;
  for (const extra of policy.writablePaths) requireDirectory(executorName, 'writable path', extra);
  const args = [...sandboxNamespaceArguments(policy), ...sandboxMountArguments([workspace, ...policy.writablePaths], policy, executorName)];
  args.push('--chdir', request.cwd, '--', 'bash', '-c', request.command);
  return { file: bwrapPath, args, ...(environment !== undefined ? { env: environment } : {}) };
}

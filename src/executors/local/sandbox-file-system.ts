/**
 * The file system of a sandboxed local executor: every operation runs inside a bwrap sandbox
 * with the same view as the executor's commands (see `sandbox-file-server.ts`), so no race
 * between a path check and an open can reach what the sandbox hides or write where it may not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DirectoryEntry, ExecutorFileSystem, FileKind, FileStat } from '../executor.js';
import { sandboxMountArguments, sandboxNamespaceArguments, type BubblewrapPolicy } from './bubblewrap.js';
import { sandboxFileServerSource, type SandboxFileOperation, type SandboxFileResponse } from './sandbox-file-server.js';
import { describeFailure } from './local-file-system.js';

/** A file server with no request for this long exits; the next request starts a new one, in ms. */
const IDLE_EXIT_MS = 60_000;

/** Options of `SandboxFileSystem`. */
export interface SandboxFileSystemOptions {
  /** Named in errors. */
  executorName: string;
  /** The executor's sandbox (the file servers get the same view as its commands). */
  policy: BubblewrapPolicy;
  /**
   * The absolute path of `bwrap`, looked up when a server starts.
   * @throws Error when bubblewrap is missing
   */
  bwrap: () => string;
}

interface PendingRequest {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** One long-lived file server inside a sandbox whose writable root is `root` (or none). */
class FileServer {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, PendingRequest>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;
  private ended = false;
  private stderr = '';

  constructor(bwrapPath: string, args: string[], onEnd: () => void) {
    // The server needs no variable of the server's environment, least of all its secrets.
    this.child = spawn(bwrapPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
    this.child.stdin?.on('error', () => undefined);
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-2000);
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      let response: SandboxFileResponse;
      try {
        response = JSON.parse(line) as SandboxFileResponse;
      } catch {
        return;
      }
      const request = this.pending.get(response.id);
      if (!request) return;
      this.pending.delete(response.id);
      this.armIdleTimer();
      if (response.error) request.reject(Object.assign(new Error(response.error.message), { code: response.error.code }));
      else request.resolve(response.result);
    });
    const end = (reason: string): void => {
      if (this.ended) return;
      this.ended = true;
      if (this.idleTimer) clearTimeout(this.idleTimer);
      onEnd();
      for (const request of this.pending.values()) request.reject(new Error(`the sandboxed file server ended (${reason})${this.stderr.trim() !== '' ? `: ${this.stderr.trim()}` : ''}`));
      this.pending.clear();
    };
    this.child.once('error', (error) => end(error.message));
    this.child.once('exit', (code, signal) => end(signal ?? `exit code ${String(code)}`));
  }

  request(op: SandboxFileOperation, target: string, extra: { data?: string; offset?: number; length?: number } = {}): Promise<unknown> {
    if (this.ended) return Promise.reject(new Error('the sandboxed file server has ended'));
    const id = this.nextId++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin?.write(`${JSON.stringify({ id, op, path: target, ...extra })}\n`);
    });
  }

  stop(): void {
    if (this.ended) return;
    this.child.stdin?.end();
    // bwrap is the init of the sandbox's PID namespace: killing it ends everything inside.
    setTimeout(() => this.child.kill('SIGKILL'), 2000).unref();
  }

  private armIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.pending.size > 0) return;
    this.idleTimer = setTimeout(() => this.stop(), IDLE_EXIT_MS);
    this.idleTimer.unref();
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.posix.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith('../') && !path.posix.isAbsolute(relative));
}

/**
 * `ExecutorFileSystem` whose operations run inside bubblewrap: for a path inside a known
 * workspace (`addWorkspaceRoot`), in a sandbox where that workspace is writable, as it is for
 * the commands of that workspace; elsewhere in a sandbox where only the executor's
 * `writablePaths` are. One server per workspace stays up between calls (and exits after a
 * minute without requests), so a call costs a round trip over a pipe, not a sandbox start.
 *
 * Errors have the local file system's style (`cannot read /x: no such file or directory
 * (ENOENT)`) and carry the errno `code`. A file outside what the sandbox shows reads as
 * missing; a write outside its writable paths fails (`EROFS`: read-only file system).
 */
export class SandboxFileSystem implements ExecutorFileSystem {
  private readonly roots = new Set<string>();
  private readonly servers = new Map<string, FileServer>();
  private closed = false;

  /** @param options executor name, sandbox policy and how to find `bwrap` */
  constructor(private readonly options: SandboxFileSystemOptions) {}

  /** Makes `root` writable for the file operations on paths inside it (a conversation's workspace). */
  addWorkspaceRoot(root: string): void {
    this.roots.add(path.posix.resolve(root));
  }

  /** Stops every file server; later operations fail. */
  close(): void {
    this.closed = true;
    for (const server of this.servers.values()) server.stop();
    this.servers.clear();
  }

  /** The deepest known workspace holding `target`, or '' for none. */
  private rootOf(target: string): string {
    let best = '';
    for (const root of this.roots) if (isInside(root, target) && root.length > best.length) best = root;
    return best;
  }

  private async call(action: string, op: SandboxFileOperation, target: string, extra: { data?: string; offset?: number; length?: number } = {}): Promise<unknown> {
    if (!path.posix.isAbsolute(target)) throw new Error(`path must be absolute, got "${target}"`);
    if (this.closed) throw new Error(`executor "${this.options.executorName}" is closed`);
    const root = this.rootOf(target);
    let server = this.servers.get(root);
    if (!server) {
      const writable = [...(root !== '' ? [root] : []), ...this.options.policy.writablePaths];
      const node = process.execPath;
      const args = [
        ...sandboxNamespaceArguments({ ...this.options.policy, network: false }),
        ...sandboxMountArguments(writable, this.options.policy, this.options.executorName, true),
        // Node itself may live under the emptied home (nvm); it is shown read-only, alone.
        '--ro-bind',
        node,
        node,
        '--chdir',
        '/',
        '--',
        node,
        '-e',
        sandboxFileServerSource(),
      ];
      const started = new FileServer(this.options.bwrap(), args, () => {
        if (this.servers.get(root) === started) this.servers.delete(root);
      });
      server = started;
      this.servers.set(root, server);
    }
    try {
      return await server.request(op, target, extra);
    } catch (error) {
      throw describeFailure(action, target, error);
    }
  }

  /** Reads a whole file inside the sandbox. @throws when missing, hidden or a directory */
  async readFile(filePath: string): Promise<Uint8Array> {
    return Buffer.from((await this.call('read', 'read', filePath)) as string, 'base64');
  }

  /** See {@link ExecutorFileSystem.readRange}: read inside the sandbox, only the piece crosses the pipe. @throws when missing, hidden or a directory */
  async readRange(filePath: string, offset: number, length: number): Promise<Uint8Array> {
    return Buffer.from((await this.call('read', 'readRange', filePath, { offset, length })) as string, 'base64');
  }

  /** Replaces a file atomically inside the sandbox (temporary file + rename, mode kept). Parent directories must exist. */
  async writeFile(filePath: string, data: Uint8Array | string): Promise<void> {
    await this.call('write', 'write', filePath, { data: Buffer.from(data).toString('base64') });
  }

  /** Stat without following a final symlink; undefined when nothing is there (or it is hidden). */
  async stat(filePath: string): Promise<FileStat | undefined> {
    const result = (await this.call('stat', 'stat', filePath)) as { kind: FileKind; size: number; modifiedAt: number } | null;
    return result ?? undefined;
  }

  /** Lists a directory, sorted by name (code-unit order). */
  async readDirectory(directoryPath: string): Promise<DirectoryEntry[]> {
    const entries = (await this.call('list directory', 'list', directoryPath)) as DirectoryEntry[];
    return entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  }

  /** Creates a directory and its missing parents; an existing directory is fine. */
  async makeDirectory(directoryPath: string): Promise<void> {
    await this.call('create directory', 'mkdir', directoryPath);
  }

  /** Removes a file or symlink. @throws when missing or a directory */
  async removeFile(filePath: string): Promise<void> {
    await this.call('remove', 'remove', filePath);
  }

  /** Resolves symlinks in an existing path, as seen inside the sandbox. */
  async realPath(filePath: string): Promise<string> {
    return (await this.call('resolve', 'realpath', filePath)) as string;
  }
}

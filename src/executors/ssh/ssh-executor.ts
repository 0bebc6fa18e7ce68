/**
 * The `ssh` executor (SPEC §7): commands over SSH exec channels, files over SFTP, on one
 * connection opened on first use, kept alive, shared by every call and reopened when it drops.
 */
import os from 'node:os';
import path from 'node:path';
import type { CommandRequest, CommandResult, Executor, PipedProcess, PipedSpawnRequest, RunningProcess, SpawnRequest } from '../executor.js';
import { describeTarget, SshConnection, type SshTarget } from './connection.js';
import { startRemoteCommand, type RunningRemoteCommand } from './remote-command.js';
import { startRemotePipedProcess } from './remote-piped-process.js';
import { startRemoteProcess, type RemoteProcessHost } from './remote-process.js';
import { SftpFileSystem } from './sftp-file-system.js';

/** Default time allowed to connect, exchange keys and authenticate, in ms. */
export const SSH_DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Default interval of SSH keep-alive messages, in ms. */
export const SSH_DEFAULT_KEEP_ALIVE_INTERVAL_MS = 15_000;
/**
 * Commands run at once over one connection; more wait their turn. OpenSSH allows 10 sessions
 * per connection by default (`MaxSessions`), and the SFTP session and kill helpers need some.
 */
export const SSH_MAX_CONCURRENT_COMMANDS = 6;

/** Options of `SshExecutor`. */
export interface SshExecutorOptions {
  /** Executor name from configuration. */
  name: string;
  host: string;
  /** TCP port (default 22). */
  port?: number;
  user: string;
  /** Absolute path of an unencrypted private key. */
  identityFile?: string;
  /** ssh-agent socket to authenticate with (e.g. `process.env.SSH_AUTH_SOCK`). */
  agentSocket?: string;
  /** known_hosts file the host key must be in (default `~/.ssh/known_hosts`). */
  knownHostsFile?: string;
  /** Time allowed to connect and authenticate, in ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Keep-alive interval, in ms (default 15 000); 3 unanswered ones drop the connection. */
  keepAliveIntervalMs?: number;
}

/** Whether a failed operation may be retried on a fresh connection. */
function connectionWasLost(connection: SshConnection, error: unknown): boolean {
  return connection.closed || /not connected|no response from server|connection (?:lost|closed|reset)|ECONNRESET|EPIPE/i.test((error as Error).message);
}

/**
 * An executor on another machine reached over SSH. Host keys are checked against a
 * known_hosts file (unknown or changed keys are refused); authentication uses a private key
 * file and/or ssh-agent. A host that is down or refuses yields an error within the connect
 * timeout. Commands get the local executor's rules: own process group, killed (with their
 * descendants) on timeout or abort, capped streamed output, and a result soon after the
 * command exits even when background jobs hold its output open.
 */
export class SshExecutor implements Executor {
  readonly kind = 'ssh' as const;
  readonly name: string;
  readonly fs: SftpFileSystem;
  /** Where it connects, with defaults applied. */
  readonly target: SshTarget;
  private connection: SshConnection | undefined;
  private connecting: Promise<SshConnection> | undefined;
  private readonly running = new Set<RunningRemoteCommand>();
  /** Processes started by `spawn` that have not ended yet. */
  private readonly spawned = new Set<RunningProcess | PipedProcess>();
  private readonly waiting: (() => void)[] = [];
  private activeCommands = 0;
  private closed = false;

  /** @throws Error naming the option when host, user or a path is unusable */
  constructor(options: SshExecutorOptions) {
    this.name = options.name;
    if (options.host.trim() === '') throw new Error(`ssh executor "${options.name}": host is empty`);
    if (options.user.trim() === '') throw new Error(`ssh executor "${options.name}": user is empty`);
    for (const [option, value] of [['identityFile', options.identityFile], ['knownHostsFile', options.knownHostsFile]] as const) {
      if (value !== undefined && !path.isAbsolute(value)) throw new Error(`ssh executor "${options.name}": ${option} must be an absolute path, got "${value}"`);
    }
    this.target = {
      name: options.name,
      host: options.host,
      port: options.port ?? 22,
      user: options.user,
      identityFile: options.identityFile,
      agentSocket: options.agentSocket,
      knownHostsFile: options.knownHostsFile ?? path.join(os.homedir(), '.ssh', 'known_hosts'),
      connectTimeoutMs: options.connectTimeoutMs ?? SSH_DEFAULT_CONNECT_TIMEOUT_MS,
      keepAliveIntervalMs: options.keepAliveIntervalMs ?? SSH_DEFAULT_KEEP_ALIVE_INTERVAL_MS,
    };
    this.fs = new SftpFileSystem((operation) => this.withConnection((connection) => connection.sftp().then(operation)));
  }

  /** The live connection, opening one when there is none (concurrent callers share it). */
  private connect(): Promise<SshConnection> {
    if (this.closed) return Promise.reject(new Error(`executor "${this.name}" is closed`));
    if (this.connection !== undefined && !this.connection.closed) return Promise.resolve(this.connection);
    this.connecting ??= SshConnection.open(this.target)
      .then((connection) => {
        if (this.closed) {
          connection.close();
          throw new Error(`executor "${this.name}" is closed`);
        }
        this.connection = connection;
        connection.onClose(() => {
          if (this.connection === connection) this.connection = undefined;
        });
        return connection;
      })
      .finally(() => {
        this.connecting = undefined;
      });
    return this.connecting;
  }

  /**
   * Runs an operation on the connection; when it fails because the connection had dropped
   * (the server restarted, the network blinked), retries once on a fresh connection.
   */
  private async withConnection<T>(operation: (connection: SshConnection) => Promise<T>): Promise<T> {
    const connection = await this.connect();
    try {
      return await operation(connection);
    } catch (error) {
      if (this.closed || !connectionWasLost(connection, error)) throw error;
      connection.close();
      return operation(await this.connect());
    }
  }

  private async acquireCommandSlot(signal: AbortSignal | undefined): Promise<boolean> {
    if (this.activeCommands < SSH_MAX_CONCURRENT_COMMANDS) {
      this.activeCommands += 1;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.activeCommands += 1;
        resolve(true);
      };
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant);
        if (index !== -1) this.waiting.splice(index, 1);
        resolve(false);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  private releaseCommandSlot(): void {
    this.activeCommands -= 1;
    this.waiting.shift()?.();
  }

  /**
   * Runs a command on the remote host (see `startRemoteCommand`): `bash -c` in `cwd` with the
   * extra environment, stdin closed. A command killed by a signal reports its name
   * (`SIGTERM`); an exit status above 128 that names a signal is reported as that signal.
   * @throws Error when the executor is closed, the host cannot be reached or refuses (message
   *   names host and reason), `cwd` does not exist there, or the connection drops mid-command
   */
  async run(request: CommandRequest): Promise<CommandResult> {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const aborted = { exitCode: null, signal: null, output: '', truncated: false, omittedBytes: 0, timedOut: false, aborted: true, durationMs: 0 };
    if (request.signal?.aborted) return aborted;
    if (!(await this.acquireCommandSlot(request.signal))) return aborted;
    try {
      const command = startRemoteCommand(request, {
        describe: `ssh executor "${this.name}" (${describeTarget(this.target)})`,
        // The channel never opened if this fails, so the command never ran: safe to retry.
        openChannel: (commandLine) =>
          this.withConnection(async (connection) => ({
            ...(await connection.exec(commandLine).catch((error: unknown) => {
              const failure = new Error(`cannot open a command channel on ${describeTarget(this.target)}: ${(error as Error).message}`, { cause: error });
              throw failure;
            })),
            onConnectionClosed: (listener: () => void) => connection.onClose(listener),
          })),
        runHelper: (commandLine) => this.runHelper(commandLine),
      });
      this.running.add(command);
      try {
        return await command.result;
      } finally {
        this.running.delete(command);
      }
    } finally {
      this.releaseCommandSlot();
    }
  }

  /**
   * Starts a command on the remote host and leaves it running (background and `tty` commands;
   * see `startRemoteProcess`): stdin stays open, `tty` asks sshd for a PTY. Such commands do
   * not count against the limit of concurrent `run` commands.
   * @throws Error when the executor is closed; connection failures end the process with exit
   *   code 255 and the reason as output
   */
  spawn(request: SpawnRequest): RunningProcess {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const started = startRemoteProcess(request, this.processHost());
    this.track(started);
    return started;
  }

  /**
   * Starts a program on the remote host with its stdin, stdout and stderr as the bytes of one
   * exec channel (see `startRemotePipedProcess`); stdio MCP servers run this way. Like
   * `spawn`, it does not count against the limit of concurrent `run` commands.
   * @throws Error when the executor is closed; connection failures end the process with exit
   *   code 255 and the reason on stderr
   */
  spawnPiped(request: PipedSpawnRequest): PipedProcess {
    if (this.closed) throw new Error(`executor "${this.name}" is closed`);
    const started = startRemotePipedProcess(request, this.processHost());
    this.track(started);
    return started;
  }

  private processHost(): RemoteProcessHost {
    return {
      openChannel: (commandLine, pty) =>
        this.withConnection((connection) =>
          connection.exec(commandLine, pty).catch((error: unknown) => {
            throw new Error(`cannot open a command channel on ${describeTarget(this.target)}: ${(error as Error).message}`, { cause: error });
          }),
        ),
      runHelper: (commandLine) => this.runHelper(commandLine),
    };
  }

  private track(started: RunningProcess | PipedProcess): void {
    this.spawned.add(started);
    // `exited` never rejects; the handler is there so nothing can float.
    started.exited.then(
      () => this.spawned.delete(started),
      () => this.spawned.delete(started),
    );
  }

  /** Runs a short helper command and returns its stdout (used for killing process groups). */
  private async runHelper(commandLine: string): Promise<string> {
    const connection = this.connection;
    if (connection === undefined || connection.closed) throw new Error('not connected');
    const { channel, outcome } = await connection.exec(commandLine);
    let output = '';
    channel.on('data', (data: Buffer) => (output += data.toString('utf8')));
    channel.stderr.on('data', () => undefined);
    channel.end();
    await new Promise((resolve) => outcome.onClose(resolve));
    return output;
  }

  /**
   * Kills every command still running, `spawn`ed ones included (their remote process groups), waits for them to end
   * and closes the connection. Later calls are refused.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    // Refuse new work at once; the kill helpers use the connection that is already open.
    this.closed = true;
    const pending = [...this.running];
    const spawned = [...this.spawned];
    for (const command of pending) command.kill();
    for (const started of spawned) started.kill();
    await Promise.allSettled([...pending.map((command) => command.result), ...spawned.map((started) => started.exited)]);
    this.connection?.close();
    this.connection = undefined;
  }
}

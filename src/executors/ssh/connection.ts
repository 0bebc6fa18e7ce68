/**
 * One authenticated SSH connection (the `ssh2` library): opening it with host key
 * verification and a hard connect timeout, opening exec channels and the SFTP session on it,
 * and noticing when it drops.
 */
import { readFile } from 'node:fs/promises';
// ssh2 is imported by the first connection: a server without SSH executors never loads it.
import type { Client, ClientChannel, ConnectConfig, SFTPWrapper } from 'ssh2';
import { watchChannelOutcome, type ChannelOutcome } from './channel-outcome.js';
import { hostKeyAlgorithmsFor, parseKnownHosts, verifyHostKey } from './known-hosts.js';

/** Where and how to connect (all paths absolute). */
export interface SshTarget {
  /** Executor name, for messages. */
  name: string;
  host: string;
  /** TCP port. */
  port: number;
  user: string;
  /** Private key file (OpenSSH or PEM format, unencrypted). */
  identityFile?: string;
  /** ssh-agent socket path. */
  agentSocket?: string;
  /** known_hosts file the server's host key must be listed in. */
  knownHostsFile: string;
  /** How long connecting, key exchange and authentication may take together, in ms. */
  connectTimeoutMs: number;
  /** Interval of SSH keep-alive messages, in ms; the connection is dropped after 3 unanswered. */
  keepAliveIntervalMs: number;
}

/** An open exec channel and the watcher of how its command ends. */
export interface ExecChannel {
  /** The ssh2 channel: stdout as its data, `stderr`, stdin as its writable side. */
  channel: ClientChannel;
  /** Its exit status, watched since the channel opened; close it through `outcome.close()`. */
  outcome: ChannelOutcome;
}

/** `user@host:port` as shown in messages. */
export function describeTarget(target: SshTarget): string {
  return `${target.user}@${target.host}:${target.port}`;
}

function explainConnectFailure(error: Error & { code?: string; level?: string }, target: SshTarget): string {
  if (error.code === 'ECONNREFUSED') return 'connection refused (is the SSH server running and listening on that port?)';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return `host name "${target.host}" not found`;
  if (error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH') return 'host unreachable';
  if (error.code === 'ECONNRESET') return 'the server closed the connection during the handshake';
  if (error.level === 'client-timeout' || error.code === 'ETIMEDOUT') return `no SSH handshake within ${target.connectTimeoutMs} ms`;
  if (error.level === 'client-authentication') {
    const methods = [target.identityFile !== undefined ? `key ${target.identityFile}` : undefined, target.agentSocket !== undefined ? 'ssh-agent' : undefined];
    return `authentication as "${target.user}" failed (tried: ${methods.filter((method) => method !== undefined).join(', ')})`;
  }
  return error.message;
}

/** An open, authenticated connection. Create with `SshConnection.open`. */
export class SshConnection {
  private sftpSession: Promise<SFTPWrapper> | undefined;
  private closeListeners = new Set<() => void>();
  /** True once the connection ended or failed; a new one must be opened. */
  closed = false;

  private constructor(
    private readonly client: Client,
    private readonly target: SshTarget,
  ) {
    const markClosed = (): void => {
      if (this.closed) return;
      this.closed = true;
      for (const listener of [...this.closeListeners]) listener();
    };
    client.on('close', markClosed);
    client.on('end', markClosed);
    // After the handshake an error (reset, keep-alive timeout) only means the connection is gone.
    client.on('error', markClosed);
  }

  /**
   * Connects, verifies the host key against `target.knownHostsFile` and authenticates.
   * @throws Error `ssh executor "NAME" cannot connect to USER@HOST:PORT: REASON` — refused,
   *   unknown or changed host key (with fingerprints), authentication failed, no handshake
   *   within `connectTimeoutMs`, unreadable key or known_hosts file, no auth method
   */
  static async open(target: SshTarget): Promise<SshConnection> {
    const fail = (reason: string, cause?: unknown): Error =>
      new Error(`ssh executor "${target.name}" cannot connect to ${describeTarget(target)}: ${reason}`, { cause });
    let knownHostsText = '';
    try {
      knownHostsText = await readFile(target.knownHostsFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fail(`cannot read known_hosts file ${target.knownHostsFile}: ${(error as Error).message}`, error);
    }
    let privateKey: Buffer | undefined;
    if (target.identityFile !== undefined) {
      try {
        privateKey = await readFile(target.identityFile);
      } catch (error) {
        throw fail(`cannot read identityFile ${target.identityFile}: ${(error as Error).message}`, error);
      }
    }
    if (privateKey === undefined && target.agentSocket === undefined) throw fail('no identityFile and no ssh-agent to authenticate with');

    const knownHosts = parseKnownHosts(knownHostsText);
    const algorithms = hostKeyAlgorithmsFor(knownHosts, target.host, target.port);
    let refusal: string | undefined;
    const { Client } = await import('ssh2');
    const client = new Client();
    const config: ConnectConfig = {
      host: target.host,
      port: target.port,
      username: target.user,
      readyTimeout: target.connectTimeoutMs,
      keepaliveInterval: target.keepAliveIntervalMs,
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer): boolean => {
        const verdict = verifyHostKey(knownHosts, target.host, target.port, key, target.knownHostsFile);
        if (!verdict.accepted) refusal = verdict.reason;
        return verdict.accepted;
      },
      ...(algorithms.length > 0 ? { algorithms: { serverHostKey: algorithms as NonNullable<ConnectConfig['algorithms']>['serverHostKey'] } } : {}),
      ...(privateKey !== undefined ? { privateKey } : {}),
      ...(target.agentSocket !== undefined ? { agent: target.agentSocket } : {}),
    };
    return new Promise<SshConnection>((resolve, reject) => {
      let settled = false;
      // ssh2's readyTimeout covers the handshake; this guard also covers a stalled TCP connect.
      const guard = setTimeout(() => settle(fail(`no SSH handshake within ${target.connectTimeoutMs} ms`)), target.connectTimeoutMs + 250);
      const settle = (outcome: Error | SshConnection): void => {
        if (settled) return;
        settled = true;
        clearTimeout(guard);
        client.removeListener('error', onError);
        client.removeListener('close', onClose);
        if (outcome instanceof Error) {
          // Keep a listener: ssh2 may still emit while tearing the socket down.
          client.on('error', () => undefined);
          client.destroy();
          reject(outcome);
        } else {
          resolve(outcome);
        }
      };
      const onError = (error: Error & { code?: string; level?: string }): void => {
        settle(refusal !== undefined ? fail(refusal, error) : fail(explainConnectFailure(error, target), error));
      };
      const onClose = (): void => settle(fail(refusal ?? 'the server closed the connection during the handshake'));
      client.on('error', onError);
      client.on('close', onClose);
      client.once('ready', () => settle(new SshConnection(client, target)));
      try {
        client.connect(config);
      } catch (error) {
        // Synchronous failures: an unparsable or encrypted private key, a bad option.
        settle(fail((error as Error).message, error));
      }
    });
  }

  /** Calls `listener` once when the connection drops (at once when it already has). */
  onClose(listener: () => void): () => void {
    if (this.closed) {
      listener();
      return () => undefined;
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * Opens an exec channel running `command` (a line for the remote login shell), in a
   * pseudo-terminal of `pty.columns` × `pty.rows` when given.
   * @returns the channel, and its outcome watched from the moment it opened (see
   *   `channel-outcome.ts`: a listener attached after this promise settles could miss the exit status)
   * @throws Error when the channel cannot be opened (connection gone, server's MaxSessions)
   */
  exec(command: string, pty?: { columns: number; rows: number }): Promise<ExecChannel> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error(`the connection to ${describeTarget(this.target)} is closed`));
        return;
      }
      try {
        const options = pty ? { pty: { cols: pty.columns, rows: pty.rows, term: 'xterm-256color' } } : {};
        this.client.exec(command, options, (error, channel) => {
          if (error) {
            reject(error);
            return;
          }
          // Synchronously, inside ssh2's packet loop: the exit status may be in the same read.
          resolve({ channel, outcome: watchChannelOutcome(channel, { connectionClosed: () => this.closed }) });
        });
      } catch (error) {
        reject(error as Error);
      }
    });
  }

  /** The connection's SFTP session, opened on first use and reused. */
  sftp(): Promise<SFTPWrapper> {
    this.sftpSession ??= new Promise<SFTPWrapper>((resolve, reject) => {
      if (this.closed) {
        reject(new Error(`the connection to ${describeTarget(this.target)} is closed`));
        return;
      }
      this.client.sftp((error, session) => {
        if (error) {
          reject(error);
          return;
        }
        session.on('close', () => {
          this.sftpSession = undefined;
        });
        resolve(session);
      });
    }).catch((error: unknown) => {
      this.sftpSession = undefined;
      throw new Error(`cannot open an SFTP session on ${describeTarget(this.target)}: ${(error as Error).message}`, { cause: error });
    });
    return this.sftpSession;
  }

  /** Ends the connection (idempotent). */
  close(): void {
    if (this.closed) return;
    this.client.end();
    this.closed = true;
    for (const listener of [...this.closeListeners]) listener();
  }
}

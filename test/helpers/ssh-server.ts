/**
 * A real OpenSSH server for tests, started on 127.0.0.1 with throwaway keys: its own host
 * key, a user key in a temporary authorized_keys file, and a known_hosts file that trusts the
 * host key. Password login is off; only the generated key is accepted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { requireExecutable } from './required-commands.js';

/** A running (or stopped) test SSH server. */
export interface TestSshServer {
  readonly host: '127.0.0.1';
  /** TCP port it listens on (kept across `restart`). */
  readonly port: number;
  /** The account to log in as (the user running the tests). */
  readonly user: string;
  /** Private key accepted by the server. */
  readonly identityFile: string;
  /** A known_hosts file holding the server's host key for `[127.0.0.1]:port`. */
  readonly knownHostsFile: string;
  /** The host public key line, `ssh-ed25519 AAAA… comment`. */
  readonly hostPublicKey: string;
  /** Temporary directory holding keys, configuration and logs. */
  readonly directory: string;
  /** What sshd wrote to stderr so far (for failure messages). */
  log(): string;
  /** Stops the server and every connection it serves (so clients see the drop). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same keys. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
}

function generateKey(file: string): void {
  const keygen = requireExecutable('ssh-keygen', 'openssh-client');
  const result = spawnSync(keygen, ['-q', '-t', 'ed25519', '-N', '', '-C', 'openvaala-test', '-f', file], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ssh-keygen failed for ${file}: ${result.stderr}`);
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Every descendant of a process, from /proc (sshd's per-connection children call setsid). */
export function descendantsOf(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
    } catch {
      // Gone while reading.
    }
  }
  const found: number[] = [];
  const pending = [rootPid];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop() as number) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

async function waitForListening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sshd exited with code ${child.exitCode} before listening:\n${log()}`);
    const banner = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.setTimeout(500);
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString('latin1').startsWith('SSH-'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
    if (banner) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`sshd did not listen on 127.0.0.1:${port} within 10 s:\n${log()}`);
}

/**
 * Starts `sshd -D -e -f <config> -p <port>` on 127.0.0.1 with throwaway host and user keys.
 * @throws Error telling to run the install script when `sshd` or `ssh-keygen` is missing,
 *   or with sshd's own messages when it does not start
 */
export async function startSshServer(): Promise<TestSshServer> {
  const sshd = requireExecutable('sshd', 'openssh-server');
  const directory = await mkdtemp(path.join(os.tmpdir(), 'openvaala-sshd-'));
  const hostKey = path.join(directory, 'host_ed25519');
  const identityFile = path.join(directory, 'user_ed25519');
  generateKey(hostKey);
  generateKey(identityFile);
  const authorizedKeys = path.join(directory, 'authorized_keys');
  await writeFile(authorizedKeys, await readFile(`${identityFile}.pub`, 'utf8'), { mode: 0o600 });
  const port = await freePort();
  const hostPublicKey = (await readFile(`${hostKey}.pub`, 'utf8')).trim();
  const [keyType, keyData] = hostPublicKey.split(' ');
  const knownHostsFile = path.join(directory, 'known_hosts');
  await writeFile(knownHostsFile, `[127.0.0.1]:${port} ${keyType} ${keyData}\n`);
  const user = os.userInfo().username;
  const config = path.join(directory, 'sshd_config');
  await writeFile(
    config,
    [
      `ListenAddress 127.0.0.1`,
      `HostKey ${hostKey}`,
      `PidFile ${path.join(directory, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      'UsePAM no',
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      // bash started by sshd reads ~/.bashrc only at SHLVL < 1; the test server must not
      // depend on (or wait for) the test account's own shell start-up files.
      'SetEnv SHLVL=1',
      'LogLevel ERROR',
      'Subsystem sftp internal-sftp',
      // MaxSessions stays at its default (10), which the executor must live with.
      '',
    ].join('\n'),
  );
  // sshd started by root insists on its privilege separation directory.
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  let child: ChildProcess | undefined;
  let stderr = '';
  const log = (): string => stderr;
  const start = async (): Promise<void> => {
    // sshd re-executes itself and so needs its absolute path.
    const started = spawn(sshd, ['-D', '-e', '-f', config, '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child = started;
    await waitForListening(port, started, log);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running?.pid === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    for (const pid of descendantsOf(running.pid)) killQuietly(pid);
    killQuietly(running.pid);
    await exited;
  };
  try {
    await start();
  } catch (error) {
    await stop();
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    host: '127.0.0.1',
    port,
    user,
    identityFile,
    knownHostsFile,
    hostPublicKey,
    directory,
    log,
    stop,
    start,
    async dispose() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

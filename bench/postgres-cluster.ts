/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a new temporary
 * directory, then the `postgres` server on a free TCP port of 127.0.0.1 (no Unix socket),
 * stopped by its pid and removed afterwards. Uses the Debian `postgresql` package's programs
 * (`/usr/lib/postgresql/<version>/bin`, not on `PATH`) or, failing that, `initdb` and
 * `postgres` on `PATH`.
 *
 * PostgreSQL refuses to run as root, so when this process is root the programs run as the
 * `postgres` account (or `nobody`), with the directory given to that account: `spawn` with
 * `uid`/`gid` starts the server itself (not a `runuser` wrapper), so the pid we hold is the
 * postmaster's and stopping it by pid works.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** A running throwaway cluster. */
export interface ThrowawayPostgres {
  /** `postgres://openvaala@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly connectionString: string;
  readonly port: number;
  /** Temporary directory holding the cluster. */
  readonly directory: string;
  /** Pid of the postmaster. */
  readonly pid: number;
  /** What the server wrote to stderr so far (for failure messages). */
  log(): string;
  /** Stops the server (fast shutdown, by pid) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link startThrowawayPostgres}. */
export interface ThrowawayPostgresOptions {
  /**
   * `false` turns `fsync` off: faster, for tests whose data does not need to survive a power
   * loss. Default `true` (benchmarks measure durable commits).
   */
  durable?: boolean;
  /** Most time to wait for the server to accept connections, ms. Default 60,000. */
  startTimeoutMs?: number;
}

/** The Debian package that provides the programs (named in errors). */
const DEBIAN_PACKAGE = 'postgresql';
const SUPERUSER = 'openvaala';

function executable(candidate: string): boolean {
  try {
    accessSync(candidate, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The directory holding `initdb` and `postgres`: the newest `/usr/lib/postgresql/<version>/bin`,
 * else a `PATH` directory.
 * @throws Error naming the Debian package and the install script when none is found
 */
export function findPostgresBinaries(): string {
  const root = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = readdirSync(root).filter((name) => /^\d+(\.\d+)?$/.test(name)).sort((left, right) => Number(right) - Number(left));
  } catch {
    // No Debian layout; try PATH.
  }
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (executable(path.join(bin, 'initdb')) && executable(path.join(bin, 'postgres'))) return bin;
  }
  for (const directory of (process.env.PATH ?? '').split(path.delimiter).filter((entry) => entry !== '')) {
    if (executable(path.join(directory, 'initdb')) && executable(path.join(directory, 'postgres'))) return directory;
  }
  throw new Error(`PostgreSQL (initdb and postgres, Debian package ${DEBIAN_PACKAGE}) is not installed, and these tests need it: run scripts/install-test-packages.sh`);
}

/** The account to run PostgreSQL as when this process is root: `postgres`, else `nobody`. */
function unprivilegedAccount(): { uid: number; gid: number; name: string } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()), name };
  }
  throw new Error('PostgreSQL cannot run as root and neither a "postgres" nor a "nobody" account exists to run it as');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function canConnect(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Creates and starts a throwaway cluster (UTF-8, `C` locale, trust authentication for the
 * superuser `openvaala`, listening on 127.0.0.1 only).
 * @throws Error with the programs' output when `initdb` fails or the server does not accept
 *   connections in time (the directory is removed then)
 */
export async function startThrowawayPostgres(options: ThrowawayPostgresOptions = {}): Promise<ThrowawayPostgres> {
  const bin = findPostgresBinaries();
  const account = unprivilegedAccount();
  const directory = await mkdtemp(path.join(os.tmpdir(), 'openvaala-postgres-'));
  const data = path.join(directory, 'data');
  const identity = account ? { uid: account.uid, gid: account.gid } : {};
  if (account) chownSync(directory, account.uid, account.gid);
  const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', HOME: directory };
  const initdb = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], {
    ...identity,
    env: environment,
    encoding: 'utf8',
  });
  if (initdb.status !== 0) {
    await rm(directory, { recursive: true, force: true });
    throw new Error(`initdb failed (${initdb.error?.message ?? `exit ${String(initdb.status)}`}${account ? `, as ${account.name}` : ''}): ${initdb.stderr}${initdb.stdout}`);
  }
  const port = await freePort();
  const settings = [
    `listen_addresses=127.0.0.1`,
    `port=${port}`,
    `unix_socket_directories=`,
    `fsync=${options.durable === false ? 'off' : 'on'}`,
    `synchronous_commit=on`,
    `full_page_writes=${options.durable === false ? 'off' : 'on'}`,
    `max_connections=100`,
    `shared_buffers=128MB`,
  ];
  const child: ChildProcess = spawn(path.join(bin, 'postgres'), ['-D', data, ...settings.flatMap((setting) => ['-c', setting])], {
    ...identity,
    env: environment,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  exited
    .then(() => {
      running = false;
    })
    .catch(() => undefined);
  const connectionString = `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (running && child.pid !== undefined) {
      // SIGINT is PostgreSQL's fast shutdown: sessions are ended, no checkpoint wait for clients.
      process.kill(child.pid, 'SIGINT');
      const timer = setTimeout(() => {
        if (running && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
      }, 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(directory, { recursive: true, force: true });
  };
  for (;;) {
    if (!running) {
      await stop();
      throw new Error(`PostgreSQL exited before accepting connections on 127.0.0.1:${port}: ${output}`);
    }
    if (await canConnect(connectionString)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`PostgreSQL did not accept connections on 127.0.0.1:${port} in time: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    connectionString,
    port,
    directory,
    pid: child.pid as number,
    log: () => output,
    stop,
  };
}

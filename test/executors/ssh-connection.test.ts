/**
 * Connecting the ssh executor to a real OpenSSH server on 127.0.0.1: host key verification
 * (changed, unknown, hashed entries), authentication (key, agent, wrong key), a server that is
 * down or never answers, and reconnecting after the server restarts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/processes.js';
import { SshExecutor, type SshExecutorOptions } from '../../src/executors/ssh/ssh-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { execCommandTool } from '../../src/tools/exec-command.js';
import { readFileTool } from '../../src/tools/read-file.js';
import { requireExecutable } from '../helpers/required-commands.js';
import { freePort, startSshServer, type TestSshServer } from '../helpers/ssh-server.js';

let server: TestSshServer;
let directory: string;
const executors: SshExecutor[] = [];

beforeAll(async () => {
  server = await startSshServer();
  directory = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ssh-connection-')));
}, 30_000);
afterEach(async () => {
  await Promise.all(executors.splice(0).map((executor) => executor.close()));
});
afterAll(async () => {
  await server?.dispose();
  await rm(directory, { recursive: true, force: true });
});

function executorFor(overrides: Partial<SshExecutorOptions> = {}): SshExecutor {
  const executor = new SshExecutor({
    name: 'box',
    host: server.host,
    port: server.port,
    user: server.user,
    identityFile: server.identityFile,
    knownHostsFile: server.knownHostsFile,
    connectTimeoutMs: 3000,
    ...overrides,
  });
  executors.push(executor);
  return executor;
}

function echo(executor: SshExecutor, text = 'ok'): Promise<string> {
  return executor.run({ command: `echo ${text}`, cwd: directory, timeoutMs: 10_000, maxOutputBytes: 1024 }).then((result) => result.output);
}

/** `SHA256:…` of a public key file, as OpenSSH's own ssh-keygen prints it. */
function fingerprintOfFile(publicKeyFile: string): string {
  const keygen = requireExecutable('ssh-keygen', 'openssh-client');
  const output = spawnSync(keygen, ['-l', '-E', 'sha256', '-f', publicKeyFile], { encoding: 'utf8' }).stdout;
  return output.split(' ')[1] as string;
}

async function newKey(name: string): Promise<string> {
  const file = path.join(directory, name);
  const keygen = requireExecutable('ssh-keygen', 'openssh-client');
  spawnSync(keygen, ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
  return file;
}

describe('host key verification', () => {
  it('accepts the listed key, also from a hashed known_hosts entry', async () => {
    expect(await echo(executorFor())).toBe('ok\n');
    const hashed = path.join(directory, 'known_hosts_hashed');
    await writeFile(hashed, await readFile(server.knownHostsFile, 'utf8'));
    spawnSync(requireExecutable('ssh-keygen', 'openssh-client'), ['-H', '-f', hashed]);
    expect(await readFile(hashed, 'utf8')).toMatch(/^\|1\|/);
    expect(await echo(executorFor({ knownHostsFile: hashed }))).toBe('ok\n');
  });

  it('refuses a changed host key, naming host, file and both fingerprints', async () => {
    const other = await newKey('other_host_key');
    const [type, key] = (await readFile(`${other}.pub`, 'utf8')).split(' ');
    const knownHosts = path.join(directory, 'known_hosts_changed');
    await writeFile(knownHosts, `# a comment\n[127.0.0.1]:${server.port} ${type} ${key}\n`);
    const failure = echo(executorFor({ knownHostsFile: knownHosts }));
    await expect(failure).rejects.toThrow(`host key verification failed for 127.0.0.1:${server.port}: the HOST KEY HAS CHANGED`);
    await expect(failure).rejects.toThrow(fingerprintOfFile(`${server.directory}/host_ed25519.pub`));
    await expect(failure).rejects.toThrow(`${fingerprintOfFile(`${other}.pub`)} (line 2)`);
    await expect(failure).rejects.toThrow(knownHosts);
  });

  it('refuses an unknown host, missing known_hosts file included, with the fingerprint to check', async () => {
    const empty = path.join(directory, 'known_hosts_other_host');
    await writeFile(empty, `[127.0.0.2]:${server.port} ${server.hostPublicKey}\n`);
    for (const knownHostsFile of [empty, path.join(directory, 'does-not-exist')]) {
      const failure = echo(executorFor({ knownHostsFile }));
      await expect(failure).rejects.toThrow(`the server's ssh-ed25519 key ${fingerprintOfFile(`${server.directory}/host_ed25519.pub`)} is not in ${knownHostsFile}`);
      await expect(failure).rejects.toThrow(`ssh-keyscan -p ${server.port} 127.0.0.1`);
    }
  });

  it('gives the refusal as a tool error, without running anything', async () => {
    const knownHosts = path.join(directory, 'known_hosts_none');
    await writeFile(knownHosts, '');
    const marker = path.join(directory, 'should-not-exist');
    const workspace = new Workspace(executorFor({ knownHostsFile: knownHosts }), directory);
    const result = await execCommandTool.invoke({ command: `touch ${marker}` }, { workspace, signal: new AbortController().signal });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^exec_command: .*host key verification failed/);
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
  });
});

describe('authentication', () => {
  it('names the user and the key when the server refuses the key', async () => {
    const stranger = await newKey('stranger_key');
    await expect(echo(executorFor({ identityFile: stranger }))).rejects.toThrow(`authentication as "${server.user}" failed (tried: key ${stranger})`);
  });

  it('names an identity file that cannot be read', async () => {
    const missing = path.join(directory, 'no-such-key');
    await expect(echo(executorFor({ identityFile: missing }))).rejects.toThrow(`cannot read identityFile ${missing}`);
  });

  it('authenticates with ssh-agent', async () => {
    const socket = path.join(directory, 'agent.sock');
    const agent: ChildProcess = spawn(requireExecutable('ssh-agent', 'openssh-client'), ['-D', '-a', socket], { stdio: 'ignore' });
    try {
      const deadline = Date.now() + 5000;
      let added = 1;
      while (Date.now() < deadline && added !== 0) {
        added = spawnSync(requireExecutable('ssh-add', 'openssh-client'), ['-q', server.identityFile], { env: { ...process.env, SSH_AUTH_SOCK: socket }, stdio: 'ignore' }).status ?? 1;
        if (added !== 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(added).toBe(0);
      expect(await echo(executorFor({ identityFile: undefined, agentSocket: socket }))).toBe('ok\n');
    } finally {
      agent.kill('SIGTERM');
    }
  });
});

describe('unreachable servers', () => {
  it('gives a clear tool error at once when nothing listens on the port', async () => {
    const port = await freePort();
    const workspace = new Workspace(executorFor({ port, connectTimeoutMs: 2000 }), directory);
    const started = Date.now();
    const result = await readFileTool.invoke({ path: 'anything.txt' }, { workspace, signal: new AbortController().signal });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.isError).toBe(true);
    expect(result.output).toContain(`ssh executor "box" cannot connect to ${server.user}@127.0.0.1:${port}: connection refused`);
  });

  it('gives up within the connect timeout on a server that accepts but never answers', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const started = Date.now();
      await expect(echo(executorFor({ port, connectTimeoutMs: 700 }))).rejects.toThrow(`cannot connect to ${server.user}@127.0.0.1:${port}: no SSH handshake within 700 ms`);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(650);
      expect(elapsed).toBeLessThan(2000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('reconnecting', () => {
  it('reuses one connection, reconnects after the server restarts, and reports the outage meanwhile', async () => {
    const executor = executorFor();
    // SSH_CLIENT holds the client's port: the same value means the same connection.
    const firstClient = await echo(executor, '$SSH_CLIENT');
    expect(await echo(executor, '$SSH_CLIENT')).toBe(firstClient);
    await server.stop();
    await expect(echo(executor)).rejects.toThrow('connection refused');
    await server.start();
    const secondClient = await echo(executor, '$SSH_CLIENT');
    expect(secondClient).toMatch(/^127\.0\.0\.1 \d+ \d+\n$/);
    expect(secondClient).not.toBe(firstClient);
    // A restart between two calls, unnoticed by the client: the next call still succeeds.
    await server.stop();
    await server.start();
    expect(await echo(executor, 'again')).toBe('again\n');
    expect(await executor.fs.stat(directory)).toMatchObject({ kind: 'directory' });
  });

  it('fails a command whose connection drops while it runs', async () => {
    const executor = executorFor();
    expect(await echo(executor)).toBe('ok\n');
    let output = '';
    const running = executor.run({ command: 'echo started; sleep 5', cwd: directory, timeoutMs: 10_000, maxOutputBytes: 1024, onOutput: (text) => (output += text) });
    const outcome = expect(running).rejects.toThrow('was lost while the command was running');
    // The server stops once the command is known to run.
    await until(() => output.includes('started'), 10_000, 'the command to print "started"');
    const started = Date.now();
    await server.stop();
    await outcome;
    expect(Date.now() - started).toBeLessThan(2000);
    await server.start();
    expect(await echo(executor, 'back')).toBe('back\n');
  });
});

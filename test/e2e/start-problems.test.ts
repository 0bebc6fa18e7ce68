/**
 * What gets in the way of a start, as real processes: a damaged server file (taken as
 * describing no server, said once, overwritten), a `--data-dir` that does not exist given to a
 * command that only uses stored conversations (refused, nothing created), and a data
 * directory or address `serve` cannot use (refused at once, naming the option).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serverInfoFile } from '../../src/config/paths.js';
import { readServerInfo } from '../../src/server/server-info.js';
import { createTestEnvironment, runCli, startServe, stopBackgroundServer, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;

afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  if (environment) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
  environment = undefined;
});

const DAMAGED_SERVER_FILES: [string, string, string][] = [
  ['not YAML', 'url: [broken\n', 'not valid YAML'],
  ['empty', '', 'empty'],
  ['missing fields', 'url: http://127.0.0.1:1\ntoken: t\n', 'pid: missing; dataDir: missing; startedAt: missing'],
];

describe('a damaged runtime-server.yaml', { timeout: 60_000 }, () => {
  it.each(DAMAGED_SERVER_FILES)('%s: serve warns naming the file and the problem, and overwrites it', async (_kind, content, problem) => {
    environment = await createTestEnvironment('responses: []\n');
    const file = serverInfoFile(environment.paths);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
    serve = await startServe(environment);
    expect(readServerInfo(file)?.pid).toBe(serve.child.pid);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const warnings = serve
      .output()
      .split('\n')
      .filter((line) => line.includes('server file is damaged'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(file);
    expect(warnings[0]).toContain(problem);
    // Nothing but the file itself is left in the state directory (no temporary file).
    expect(readdirSync(path.dirname(file))).toEqual(['runtime-server.yaml']);
  });

  it('exec starts a server and runs the turn', async () => {
    environment = await createTestEnvironment('responses:\n  - text: "Answered anyway."\n');
    const file = serverInfoFile(environment.paths);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'url: [broken\n');
    const result = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.stderr).not.toContain('did not start');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Answered anyway.');
    expect(readServerInfo(file)?.dataDir).toBe(environment.paths.dataDir);
  });

  it('server status says what is wrong with it and that no server is taken to run', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const file = serverInfoFile(environment.paths);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'url: [broken\n');
    const status = await runCli(['server', 'status'], { env: environment.env });
    expect(status.code).toBe(3);
    expect(status.stderr).toContain(`${file}: not valid YAML`);
    expect(status.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('a --data-dir that does not exist', { timeout: 60_000 }, () => {
  const READ_ONLY_COMMANDS = [['export', 'last'], ['conversations'], ['conversations', 'list'], ['conversations', 'search', 'word'], ['conversations', 'show', 'last'], ['exec', '--resume', 'last', 'hi'], ['tui', '--resume', 'last'], ['--resume', 'last'], ['reindex'], ['server', 'restart']];

  it.each(READ_ONLY_COMMANDS.map((command) => [command.join(' '), command]))('%s: refused with exit 64 naming the option and the path, and nothing is created', async (_name, command) => {
    environment = await createTestEnvironment('responses: []\n');
    const missing = path.join(environment.root, 'mistyped', 'data');
    const result = await runCli([...command, '--data-dir', missing], { env: environment.env, cwd: environment.workDir, timeoutMs: 20_000 });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(`--data-dir ${missing}: no such directory`);
    expect(existsSync(path.join(environment.root, 'mistyped'))).toBe(false);
    // No server was started for it (nor for the default data directory).
    expect(existsSync(serverInfoFile(environment.paths))).toBe(false);
  });

  it('a file given as --data-dir is refused as not a directory', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const file = path.join(environment.root, 'a-file');
    writeFileSync(file, 'not a store\n');
    const result = await runCli(['conversations', '--data-dir', file], { env: environment.env });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(`--data-dir ${file}: not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('not a store\n');
  });

  it('exec starting a new conversation still creates it', async () => {
    environment = await createTestEnvironment('responses:\n  - text: "A new store."\n');
    const fresh = path.join(environment.root, 'fresh-data');
    const result = await runCli(['exec', '--data-dir', fresh, 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('A new store.');
    expect(readServerInfo(serverInfoFile(environment.paths))?.dataDir).toBe(fresh);
  });
});

describe('serve with a data directory or address it cannot use', { timeout: 60_000 }, () => {
  it.skipIf(!existsSync('/proc/self'))('a --data-dir that cannot be created (under /proc) fails at once naming the option and the path', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const started = Date.now();
    const result = await runCli(['serve', '--port', '0', '--data-dir', '/proc/openvaala-no-such-dir'], { env: environment.env, timeoutMs: 15_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--data-dir /proc/openvaala-no-such-dir: cannot create it (ENOENT: no such file or directory, mkdir '/proc/openvaala-no-such-dir')");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('a file given as --data-dir fails naming the option', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const file = path.join(environment.root, 'a-file');
    writeFileSync(file, 'kept\n');
    const result = await runCli(['serve', '--port', '0', '--data-dir', file], { env: environment.env, timeoutMs: 15_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`--data-dir ${file}: not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
  });

  it('an address not of this machine names --host, a port in use names --port', async () => {
    environment = await createTestEnvironment('responses: []\n');
    // 192.0.2.1 is reserved for documentation (RFC 5737): no machine has it, so listening there fails at once.
    const foreign = await runCli(['serve', '--port', '0', '--host', '192.0.2.1'], { env: environment.env, timeoutMs: 15_000 });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('openvaala: --host 192.0.2.1: cannot listen on 192.0.2.1:0: not an address of this machine (EADDRNOTAVAIL)');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const taken = await runCli(['serve', '--port', String(port)], { env: environment.env, timeoutMs: 15_000 });
      expect(taken.code).toBe(1);
      expect(taken.stderr).toContain(`openvaala: --port ${port}: cannot listen on 127.0.0.1:${port}: already in use`);
      expect(taken.stderr).toContain('EADDRINUSE');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});

/** Every path under `directory` (relative, sorted), or undefined when it does not exist. */
function tree(directory: string): string[] | undefined {
  if (!existsSync(directory)) return undefined;
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).sort();
}

describe('a serve that is refused leaves nothing it created', { timeout: 60_000 }, () => {
  it('a port in use: the new data directory (and the missing parents made for it) is gone', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const parent = path.join(environment.root, 'x');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const taken = await runCli(['serve', '--port', String(port), '--data-dir', path.join(parent, 'new-data')], { env: environment.env, timeoutMs: 15_000 });
      expect(taken.code).toBe(1);
      expect(taken.stderr).toContain(`--port ${port}: cannot listen on 127.0.0.1:${port}: already in use`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    expect(existsSync(parent)).toBe(false);
    expect(existsSync(environment.paths.stateDir)).toBe(false);
  });

  it('an address not of this machine: the new data directory is gone, its existing parent stays', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const parent = path.join(environment.root, 'kept');
    mkdirSync(parent);
    const foreign = await runCli(['serve', '--port', '0', '--host', '192.0.2.1', '--data-dir', path.join(parent, 'new-data')], { env: environment.env, timeoutMs: 15_000 });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('--host 192.0.2.1:');
    expect(tree(parent)).toEqual([]);
  });

  it('an invalid configuration: the new default data directory is gone', async () => {
    environment = await createTestEnvironment('responses: []\n');
    writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), 'no-such-key: 1\n');
    const result = await runCli(['serve', '--port', '0'], { env: environment.env, timeoutMs: 20_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('server.yaml');
    expect(existsSync(path.join(environment.root, 'data'))).toBe(false);
    expect(existsSync(environment.paths.stateDir)).toBe(false);
  });

  it('a failure after the storage opened: what the start added to a data directory that held data is gone, the rest is untouched', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const dataDir = path.join(environment.root, 'old-data');
    mkdirSync(path.join(dataDir, 'conversations', 'ab'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dataDir, 'conversations', 'ab', 'kept.jsonl'), '{}\n');
    writeFileSync(path.join(dataDir, 'notes.txt'), 'kept\n');
    // A file where the staging directory belongs: refused once the storage was opened (its databases made).
    writeFileSync(path.join(dataDir, 'staging'), 'in the way\n');
    const before = tree(dataDir);
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { env: environment.env, timeoutMs: 20_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('staging');
    expect(tree(dataDir)).toEqual(before);
    expect(readFileSync(path.join(dataDir, 'notes.txt'), 'utf8')).toBe('kept\n');
  });

  it('a state directory that is a file: the new data directory is gone, the file is untouched', async () => {
    environment = await createTestEnvironment('responses: []\n');
    mkdirSync(path.dirname(environment.paths.stateDir), { recursive: true });
    writeFileSync(environment.paths.stateDir, 'not a directory\n');
    const result = await runCli(['serve', '--port', '0'], { env: environment.env, timeoutMs: 20_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('runtime-server.yaml');
    expect(existsSync(path.join(environment.root, 'data'))).toBe(false);
    expect(readFileSync(environment.paths.stateDir, 'utf8')).toBe('not a directory\n');
  });

  it('a data directory another server holds: refused, and that server keeps all its files', async () => {
    environment = await createTestEnvironment('responses: []\n');
    serve = await startServe(environment);
    const before = tree(environment.paths.dataDir);
    expect(before).toContain('runtime.lock');
    const second = await runCli(['serve', '--port', '0'], { env: environment.env, timeoutMs: 15_000 });
    expect(second.code).toBe(3);
    expect(tree(environment.paths.dataDir)).toEqual(before);
    expect(readServerInfo(serverInfoFile(environment.paths))?.pid).toBe(serve.child.pid);
  });
});

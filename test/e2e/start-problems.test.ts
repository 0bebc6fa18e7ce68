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

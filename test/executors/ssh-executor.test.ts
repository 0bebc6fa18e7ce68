/**
 * The ssh executor's commands and files against a real OpenSSH server on 127.0.0.1: process
 * groups killed on timeout (descendants that left the group too), background jobs not
 * holding the result, signals, environment, concurrency, SFTP errors and close().
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileWritten, until } from '../helpers/processes.js';
import type { CommandRequest } from '../../src/executors/executor.js';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';

let server: TestSshServer;
let executor: SshExecutor;
let directory: string;
const startedPids = new Set<number>();

beforeAll(async () => {
  server = await startSshServer();
  executor = new SshExecutor({ name: 'box', host: server.host, port: server.port, user: server.user, identityFile: server.identityFile, knownHostsFile: server.knownHostsFile, connectTimeoutMs: 5000 });
  directory = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ssh-executor-')));
}, 30_000);

afterAll(async () => {
  for (const pid of startedPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await executor?.close();
  await server?.dispose();
  await rm(directory, { recursive: true, force: true });
});

function request(command: string, overrides: Partial<CommandRequest> = {}): CommandRequest {
  return { command, cwd: directory, timeoutMs: 10_000, maxOutputBytes: 64 * 1024, ...overrides };
}

/** Alive and not a zombie (the server is on this machine, so /proc tells). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function waitUntilDead(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

async function readPid(file: string): Promise<number> {
  const pid = Number((await readFile(file, 'utf8')).trim());
  expect(Number.isInteger(pid) && pid > 1).toBe(true);
  startedPids.add(pid);
  return pid;
}

/** bash → subshell → bash that writes its pid and becomes `sleep`. */
function grandchildCommand(file: string, prefix = ''): string {
  return `( ${prefix}bash -c 'echo $$ > ${file}; exec sleep 300'; true ) & wait`;
}

describe('SshExecutor commands', () => {
  it('describes itself and reports exit codes, output and duration', async () => {
    expect([executor.kind, executor.name]).toEqual(['ssh', 'box']);
    const result = await executor.run(request('echo before; exit 4'));
    expect(result).toMatchObject({ exitCode: 4, signal: null, output: 'before\n', timedOut: false, aborted: false, truncated: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('passes environment variables literally, closes stdin and streams output while running', async () => {
    const chunks: string[] = [];
    const value = `it's "quoted" $HOME \`x\``;
    // The command goes on only once onOutput has had the line "first": it cannot end otherwise.
    const go = path.join(directory, 'first-streamed');
    const result = await executor.run(
      request(`printf "%s\\n" "$GREETING"; cat; echo first; while [ ! -e ${go} ]; do sleep 0.02; done; echo second`, {
        env: { GREETING: value },
        onOutput: (text) => {
          chunks.push(text);
          if (text.includes('first')) writeFileSync(go, '');
        },
      }),
    );
    expect(result.output).toBe(`${value}\nfirst\nsecond\n`);
    expect(chunks.join('')).toBe(result.output);
    expect(chunks.findIndex((chunk) => chunk.includes('first'))).toBeLessThan(chunks.findIndex((chunk) => chunk.includes('second')));
  });

  it('refuses an environment variable name that is not a shell name', async () => {
    await expect(executor.run(request('true', { env: { 'BAD NAME': 'x' } }))).rejects.toThrow('environment variable name "BAD NAME" is not valid');
  });

  it('returns within a second although a background job holds the output, and leaves it running', async () => {
    const started = Date.now();
    const result = await executor.run(request('sleep 30 & echo $!; echo foreground done'));
    // Well under the background job's 30 s, with room for sshd to start a session on a loaded machine.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.exitCode).toBe(0);
    expect(result.output.endsWith('foreground done\n')).toBe(true);
    const leftover = Number(result.output.split('\n')[0]);
    startedPids.add(leftover);
    expect(isAlive(leftover)).toBe(true);
  });

  it('kills the whole remote process group, grandchild included, on timeout', async () => {
    const file = path.join(directory, 'timeout.pid');
    const started = Date.now();
    // The limit runs from before the SSH channel opens: it leaves a loaded machine time for sshd's
    // session and the grandchild, which writes its pid.
    const result = await executor.run(request(grandchildCommand(file), { timeoutMs: 3000 }));
    expect(Date.now() - started).toBeLessThan(7000);
    expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: null, signal: 'SIGTERM' });
    expect(await waitUntilDead(await readPid(file), 3000)).toBe(true);
  });

  it('kills descendants that left the group with setsid', async () => {
    const file = path.join(directory, 'setsid.pid');
    const result = await executor.run(request(grandchildCommand(file, 'setsid '), { timeoutMs: 3000 }));
    expect(result.timedOut).toBe(true);
    expect(await waitUntilDead(await readPid(file), 3000)).toBe(true);
  });

  it('escalates to KILL when the command ignores TERM', async () => {
    const file = path.join(directory, 'stubborn.pid');
    const started = Date.now();
    const result = await executor.run(request(`trap '' TERM; ${grandchildCommand(file)}`, { timeoutMs: 3000 }));
    const elapsed = Date.now() - started;
    expect(result.timedOut).toBe(true);
    // The limit, then the grace period after TERM (2 s).
    expect(elapsed).toBeGreaterThan(3000 + 1500);
    expect(elapsed).toBeLessThan(11000);
    expect(await waitUntilDead(await readPid(file), 3000)).toBe(true);
  });

  it('kills the group when the signal aborts, and does not start when already aborted', async () => {
    const file = path.join(directory, 'abort.pid');
    const controller = new AbortController();
    const running = executor.run(request(grandchildCommand(file), { signal: controller.signal }));
    // Aborted once the grandchild runs (it wrote its pid).
    await until(() => fileWritten(file), 10_000, 'the grandchild to write its pid');
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGTERM' });
    expect(await waitUntilDead(await readPid(file), 3000)).toBe(true);
    const marker = path.join(directory, 'never');
    expect(await executor.run(request(`touch ${marker}`, { signal: AbortSignal.abort() }))).toMatchObject({ aborted: true, exitCode: null, signal: null });
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
  });

  it('reports the signal that killed the command', async () => {
    expect(await executor.run(request('kill -TERM $$'))).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
    expect(await executor.run(request('kill -KILL $$'))).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
  });

  it('keeps the head and the tail within maxOutputBytes and names what it omitted', async () => {
    const result = await executor.run(request("head -c 100000 /dev/zero | tr '\\0' a", { maxOutputBytes: 1000 }));
    expect(result).toMatchObject({
      output: `${'a'.repeat(500)}\n[… 99000 bytes omitted (bytes 501–99500 of 100000, lines 1–1 of 1) …]\n${'a'.repeat(500)}`,
      truncated: true,
      omittedBytes: 99_000,
      omitted: { fromByte: 501, toByte: 99_500, totalBytes: 100_000, fromLine: 1, toLine: 1, totalLines: 1 },
      exitCode: 0,
    });
  });

  it('rejects a working directory that does not exist, naming it', async () => {
    const missing = path.join(directory, 'no-such-directory');
    await expect(executor.run(request('true', { cwd: missing }))).rejects.toThrow(`cannot run command in "${missing}"`);
  });

  it('runs more commands at once than the server allows sessions per connection (10)', async () => {
    const results = await Promise.all(Array.from({ length: 15 }, (_, index) => executor.run(request(`sleep 0.2; echo ${index}`))));
    expect(results.map((result) => result.output)).toEqual(Array.from({ length: 15 }, (_, index) => `${index}\n`));
  });
});

describe('SshExecutor files over SFTP', () => {
  it('writes, reads, lists, stats and removes files', async () => {
    const root = path.join(directory, 'files');
    await executor.fs.makeDirectory(path.join(root, 'a', 'b'));
    await executor.fs.writeFile(path.join(root, 'a', 'b', 'x.txt'), 'héllo\n');
    await executor.fs.writeFile(path.join(root, 'bytes.bin'), new Uint8Array([0, 1, 2, 255]));
    expect(Buffer.from(await executor.fs.readFile(path.join(root, 'a', 'b', 'x.txt'))).toString()).toBe('héllo\n');
    expect([...(await executor.fs.readFile(path.join(root, 'bytes.bin')))]).toEqual([0, 1, 2, 255]);
    expect(await executor.fs.readDirectory(root)).toEqual([{ name: 'a', kind: 'directory' }, { name: 'bytes.bin', kind: 'file' }]);
    expect(await executor.fs.stat(path.join(root, 'a', 'b', 'x.txt'))).toMatchObject({ kind: 'file', size: 7 });
    expect(await executor.fs.stat(path.join(root, 'nope'))).toBeUndefined();
    expect(await executor.fs.stat(path.join(root, 'bytes.bin', 'below'))).toBeUndefined();
    await executor.fs.removeFile(path.join(root, 'bytes.bin'));
    expect(await executor.fs.stat(path.join(root, 'bytes.bin'))).toBeUndefined();
    expect(await executor.fs.realPath(path.join(root, 'a', '..', 'a', 'b'))).toBe(path.join(root, 'a', 'b'));
  });

  it('keeps the mode of a file it rewrites', async () => {
    const script = path.join(directory, 'script.sh');
    await writeFile(script, '#!/bin/sh\necho one\n', { mode: 0o755 });
    await executor.fs.writeFile(script, '#!/bin/sh\necho two\n');
    expect((await executor.run(request('./script.sh'))).output).toBe('two\n');
  });

  it('names the path and a Node-style code in its errors', async () => {
    const missing = path.join(directory, 'missing.txt');
    await expect(executor.fs.readFile(missing)).rejects.toThrow(`cannot read ${missing}: no such file or directory (ENOENT)`);
    await expect(executor.fs.readFile(directory)).rejects.toThrow(`cannot read ${directory}: is a directory (EISDIR)`);
    await expect(executor.fs.removeFile(directory)).rejects.toThrow(`cannot remove ${directory}: is a directory (EISDIR)`);
    await expect(executor.fs.writeFile(path.join(directory, 'no', 'parent.txt'), 'x')).rejects.toThrow('(ENOENT)');
    await expect(executor.fs.readDirectory(path.join(directory, 'script.sh'))).rejects.toThrow('not a directory (ENOTDIR)');
    await expect(executor.fs.realPath(missing)).rejects.toThrow('(ENOENT)');
    await expect(executor.fs.writeFile('relative.txt', 'x')).rejects.toThrow('path must be absolute, got "relative.txt"');
  });
});

describe('SshExecutor close', () => {
  it('kills running commands and refuses new ones', async () => {
    const own = new SshExecutor({ name: 'closing', host: server.host, port: server.port, user: server.user, identityFile: server.identityFile, knownHostsFile: server.knownHostsFile });
    const file = path.join(directory, 'close.pid');
    const running = own.run(request(grandchildCommand(file)));
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && (await readFile(file, 'utf8').catch(() => '')).trim() === '') await new Promise((resolve) => setTimeout(resolve, 20));
    await own.close();
    expect((await running).signal).toBe('SIGTERM');
    expect(await waitUntilDead(await readPid(file), 3000)).toBe(true);
    await expect(own.run(request('true'))).rejects.toThrow('executor "closing" is closed');
    await expect(own.fs.stat(directory)).rejects.toThrow('executor "closing" is closed');
  });
});

/**
 * The local executor with `sandbox: bwrap`: writable workspace (and configured extra paths),
 * read-only everything else, private /tmp, no network unless allowed, background jobs ending
 * with the command, and clear errors when bubblewrap or a writable path is missing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandRequest } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { execCommandTool } from '../../src/tools/exec-command.js';
import { requireExecutable } from '../helpers/required-commands.js';

let base: string;
let workspaceRoot: string;
/** A directory outside /tmp (which the sandbox replaces), so that writes there hit the read-only bind. */
let outsideRoot: string;
let sandboxed: LocalExecutor;

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'bwrap-sandbox-')));
  workspaceRoot = path.join(base, 'workspace');
  await mkdir(path.join(workspaceRoot, 'sub'), { recursive: true });
  const varTmp = existsSync('/var/tmp') ? '/var/tmp' : os.homedir();
  outsideRoot = await realpath(await mkdtemp(path.join(varTmp, 'bwrap-outside-')));
  sandboxed = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' });
});

afterAll(async () => {
  await sandboxed?.close();
  await rm(base, { recursive: true, force: true });
  if (outsideRoot) await rm(outsideRoot, { recursive: true, force: true });
});

function request(command: string, overrides: Partial<CommandRequest> = {}): CommandRequest {
  return { command, cwd: workspaceRoot, workspaceRoot, timeoutMs: 10_000, maxOutputBytes: 64 * 1024, ...overrides };
}

/** A TCP server on 127.0.0.1 that counts the connections it accepts. */
async function countingServer(): Promise<{ port: number; accepted: () => number; close: () => Promise<void> }> {
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    // The client side (bash's /dev/tcp) closes abruptly.
    socket.on('error', () => undefined);
    socket.end('hello\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const connectCommand = (port: number): string => `if exec 3<>/dev/tcp/127.0.0.1/${port}; then echo connected; else echo refused; fi`;

describe('local executor with sandbox: bwrap', () => {
  it('writes inside the workspace, also from a cwd below it', async () => {
    const result = await sandboxed.run(request('echo made > made.txt && echo below > ../below.txt', { cwd: path.join(workspaceRoot, 'sub') }));
    expect(result).toMatchObject({ exitCode: 0, output: '' });
    expect(await readFile(path.join(workspaceRoot, 'sub', 'made.txt'), 'utf8')).toBe('made\n');
    expect(await readFile(path.join(workspaceRoot, 'below.txt'), 'utf8')).toBe('below\n');
  });

  it('cannot write outside the workspace: the system is read-only', async () => {
    const target = path.join(outsideRoot, 'escaped.txt');
    const result = await sandboxed.run(request(`echo evil > ${target}`));
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('Read-only file system');
    expect(existsSync(target)).toBe(false);
    expect((await sandboxed.run(request('touch /usr/openvaala-escape'))).output).toContain('Read-only file system');
  });

  it('refuses writes into a hidden directory inside the workspace, which would otherwise vanish', async () => {
    const hidden = path.join(workspaceRoot, 'server-data');
    await mkdir(hidden, { recursive: true });
    await writeFile(path.join(hidden, 'token.txt'), 'secret');
    const hiding = new LocalExecutor({ name: 'hiding', sandbox: 'bwrap', hiddenPaths: [hidden] });
    try {
      const listed = await hiding.run(request('ls -A server-data | wc -l'));
      expect(listed.output.trim()).toBe('0');
      const written = await hiding.run(request('echo note > server-data/note.txt && echo wrote'));
      expect(written.exitCode).not.toBe(0);
      expect(written.output).toContain('Read-only file system');
      expect(written.output).not.toContain('wrote');
      expect(existsSync(path.join(hidden, 'note.txt'))).toBe(false);
      // The rest of the workspace stays writable.
      expect((await hiding.run(request('echo ok > beside.txt && cat beside.txt'))).output).toBe('ok\n');
    } finally {
      await hiding.close();
    }
  });

  it('has a private /tmp: what it writes there never reaches the host', async () => {
    const name = `openvaala-private-${process.pid}.txt`;
    const result = await sandboxed.run(request(`echo secret > /tmp/${name} && cat /tmp/${name}`));
    expect(result.output).toBe('secret\n');
    expect(existsSync(path.join('/tmp', name))).toBe(false);
  });

  it('cannot reach a port opened on 127.0.0.1, unless network: true', async () => {
    const server = await countingServer();
    try {
      const isolated = await sandboxed.run(request(connectCommand(server.port)));
      expect(isolated.output).toContain('refused');
      expect(server.accepted()).toBe(0);

      const networked = new LocalExecutor({ name: 'networked', sandbox: 'bwrap', network: true });
      const open = await networked.run(request(connectCommand(server.port)));
      await networked.close();
      expect(open.output).toBe('connected\n');
      expect(server.accepted()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('makes configured extra paths writable', async () => {
    const extra = path.join(outsideRoot, 'cache');
    await mkdir(extra);
    const withCache = new LocalExecutor({ name: 'with-cache', sandbox: 'bwrap', writablePaths: [extra] });
    const result = await withCache.run(request(`echo cached > ${extra}/entry.txt`));
    await withCache.close();
    expect(result.exitCode).toBe(0);
    expect(await readFile(path.join(extra, 'entry.txt'), 'utf8')).toBe('cached\n');
  });

  it('ends background jobs with the command and returns at once', async () => {
    const started = Date.now();
    const result = await sandboxed.run(request('sleep 30 & echo started'));
    // Well under the background job's 30 s, with room for bubblewrap's start on a loaded machine.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.output).toBe('started\n');
    const check = await sandboxed.run(request('ps -e -o comm= | grep -c "^sleep$" || true'));
    expect(check.output).toBe('0\n');
  });

  it('kills the sandbox on timeout', async () => {
    const started = Date.now();
    const result = await sandboxed.run(request('echo waiting; sleep 27.25', { timeoutMs: 1500 }));
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result).toMatchObject({ timedOut: true, output: 'waiting\n' });
    // Nothing of the sandbox survives: no `sleep 27.25` left anywhere on the machine.
    const survivors = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\u000027.25\u0000';
        } catch {
          return false;
        }
      });
    expect(survivors).toEqual([]);
  });

  it('runs the exec_command tool with the workspace writable', async () => {
    const workspace = new Workspace(sandboxed, workspaceRoot);
    const result = await execCommandTool.invoke({ command: 'echo via-tool > tool.txt && cat tool.txt', cwd: 'sub' }, { workspace, signal: new AbortController().signal });
    expect(result.output).toBe('via-tool\n[exit code 0]');
    expect(await readFile(path.join(workspaceRoot, 'sub', 'tool.txt'), 'utf8')).toBe('via-tool\n');
  });
});

describe('the file system of a sandboxed executor', () => {
  it('reads a piece of a file inside the sandbox, fewer bytes at the end, none past it', async () => {
    const file = path.join(workspaceRoot, 'pieces.txt');
    await writeFile(file, '0123456789abcdef');
    const files = sandboxed.fs;
    expect(files.readRange).toBeTypeOf('function');
    expect(Buffer.from(await files.readRange!(file, 4, 6)).toString()).toBe('456789');
    expect(Buffer.from(await files.readRange!(file, 12, 100)).toString()).toBe('cdef');
    expect((await files.readRange!(file, 100, 10)).byteLength).toBe(0);
    await expect(files.readRange!(path.join(workspaceRoot, 'missing.txt'), 0, 10)).rejects.toThrow(/missing\.txt/);
  });
});

describe('sandbox errors', () => {
  it('says plainly when bubblewrap is missing', async () => {
    const missing = new LocalExecutor({ name: 'no-bwrap', sandbox: 'bwrap', bwrapPath: '/nonexistent/bwrap' });
    await expect(missing.run(request('true'))).rejects.toThrow(
      'executor "no-bwrap" is configured with sandbox: bwrap, but bubblewrap (the bwrap command) was not found at /nonexistent/bwrap',
    );
    const exec = await execCommandTool.invoke({ command: 'true' }, { workspace: new Workspace(missing, workspaceRoot), signal: new AbortController().signal });
    expect(exec).toMatchObject({ isError: true });
    expect(exec.output).toContain('apt-get install bubblewrap');
  });

  it('names a writable path that does not exist, and refuses bad options', async () => {
    const missingPath = path.join(outsideRoot, 'not-there');
    const executor = new LocalExecutor({ name: 'bad-path', sandbox: 'bwrap', writablePaths: [missingPath] });
    await expect(executor.run(request('true'))).rejects.toThrow(`executor "bad-path": the writable path ${missingPath} does not exist or is not a directory`);
    expect(() => new LocalExecutor({ name: 'relative', sandbox: 'bwrap', writablePaths: ['cache'] })).toThrow('executor "relative": writable path "cache" must be absolute');
    expect(() => new LocalExecutor({ name: 'plain', network: true })).toThrow('executor "plain": network, writablePaths and readablePaths only apply with sandbox: bwrap');
  });
});

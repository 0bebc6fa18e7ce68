/**
 * The file operations of a sandboxed executor run inside the sandbox: they see what its
 * commands see (hidden server directories and the home are empty, a file outside the
 * sandbox's view reads as missing), write only where its commands may (a workspace told
 * through `Workspace`, `writablePaths`), and replace files atomically keeping their mode.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { requireExecutable } from '../helpers/required-commands.js';

let base: string;
let home: string;
let hidden: string;
let workspaceRoot: string;
let elsewhere: string;
let executor: LocalExecutor;

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  base = await realpath(await mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'sandbox-files-')));
  home = path.join(base, 'home');
  hidden = path.join(base, 'server-data');
  workspaceRoot = path.join(home, 'project');
  elsewhere = path.join(base, 'elsewhere');
  for (const directory of [workspaceRoot, hidden, elsewhere]) await mkdir(directory, { recursive: true });
  await writeFile(path.join(home, 'home-secret.txt'), 'home secret\n');
  await writeFile(path.join(hidden, 'runtime-server.yaml'), 'token: abc\n');
  await mkdir(path.join(workspaceRoot, '.data'));
  await writeFile(path.join(workspaceRoot, '.data', 'inside-hidden.txt'), 'hidden inside the workspace\n');
  executor = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap', homeDirectory: home, hiddenPaths: [hidden, path.join(workspaceRoot, '.data')] });
  new Workspace(executor, workspaceRoot);
});

afterAll(async () => {
  await executor?.close();
  await rm(base, { recursive: true, force: true });
});

describe('the file system of a sandboxed executor', () => {
  it('reads and writes inside the workspace, replacing a file atomically with its mode kept', async () => {
    const file = path.join(workspaceRoot, 'script.sh');
    await writeFile(file, 'old\n');
    await chmod(file, 0o750);
    await executor.fs.writeFile(file, 'new\n');
    expect(await readFile(file, 'utf8')).toBe('new\n');
    expect((await stat(file)).mode & 0o777).toBe(0o750);
    expect(Buffer.from(await executor.fs.readFile(file)).toString()).toBe('new\n');
    // No temporary file is left behind.
    expect((await readdir(workspaceRoot)).sort()).toEqual(['.data', 'script.sh']);
  });

  it('cannot read the hidden directories or the home, not even inside the workspace', async () => {
    await expect(executor.fs.readFile(path.join(hidden, 'runtime-server.yaml'))).rejects.toThrow(/cannot read .*runtime-server\.yaml: no such file or directory \(ENOENT\)/);
    await expect(executor.fs.readFile(path.join(home, 'home-secret.txt'))).rejects.toThrow(/ENOENT/);
    expect(await executor.fs.stat(path.join(workspaceRoot, '.data', 'inside-hidden.txt'))).toBeUndefined();
    expect(await executor.fs.readDirectory(path.join(workspaceRoot, '.data'))).toEqual([]);
  });

  it('cannot write outside the workspace: the write fails and nothing appears', async () => {
    await expect(executor.fs.writeFile(path.join(elsewhere, 'escaped.txt'), 'x')).rejects.toThrow(/cannot write .*escaped\.txt: read-only file system \(EROFS\)/);
    await expect(executor.fs.writeFile(path.join(hidden, 'runtime-server.yaml'), 'token: mine\n')).rejects.toThrow(/EROFS/);
    await expect(executor.fs.writeFile('/tmp/escaped.txt', 'x')).rejects.toThrow(/EROFS/);
    expect(await readdir(elsewhere)).toEqual([]);
    expect(await readFile(path.join(hidden, 'runtime-server.yaml'), 'utf8')).toBe('token: abc\n');
  });

  it('reports errors in the local file system style', async () => {
    await expect(executor.fs.readFile(path.join(workspaceRoot, 'missing.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(executor.fs.readFile(workspaceRoot)).rejects.toThrow(/is a directory \(EISDIR\)/);
    await executor.fs.makeDirectory(path.join(workspaceRoot, 'made', 'deep'));
    await expect(executor.fs.removeFile(path.join(workspaceRoot, 'made'))).rejects.toThrow(/cannot remove .*made: is a directory \(EISDIR\)/);
    await expect(executor.fs.readFile('relative.txt')).rejects.toThrow('path must be absolute, got "relative.txt"');
  });
});

describe('a server whose HOME is not its account\'s home', () => {
  it('hides the account\'s home too: its keys are not readable through commands or file operations', async () => {
    const accountHome = path.join(base, 'account-home');
    await mkdir(path.join(accountHome, '.ssh'), { recursive: true });
    await writeFile(path.join(accountHome, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
    const otherHome = path.join(base, 'other-home');
    await mkdir(otherHome);
    const moved = new LocalExecutor({ name: 'moved-home', sandbox: 'bwrap', homeDirectory: otherHome, accountHomeDirectory: accountHome });
    try {
      new Workspace(moved, workspaceRoot);
      const key = path.join(accountHome, '.ssh', 'id_ed25519');
      const run = (command: string) => moved.run({ command, cwd: workspaceRoot, workspaceRoot, timeoutMs: 10_000, maxOutputBytes: 4096 });
      expect(await run(`ls -A ${accountHome}`)).toMatchObject({ exitCode: 0, output: '' });
      const read = await run(`cat ${key}`);
      expect(read.exitCode).not.toBe(0);
      expect(read.output).not.toContain('PRIVATE KEY');
      await expect(moved.fs.readFile(key)).rejects.toThrow(/ENOENT/);
    } finally {
      await moved.close();
    }
  });

  it('looks the account\'s home up by default when a home is to be emptied, and leaves it alone otherwise', () => {
    const withHome = new LocalExecutor({ name: 'with-home', sandbox: 'bwrap', homeDirectory: home });
    expect(withHome.sandbox?.accountHomeDirectory).toBe(os.userInfo().homedir);
    expect(new LocalExecutor({ name: 'no-home', sandbox: 'bwrap' }).sandbox?.accountHomeDirectory).toBeUndefined();
  });
});

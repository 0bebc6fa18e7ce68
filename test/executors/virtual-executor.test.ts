/**
 * The virtual executor: memory seeded from a directory and inline files, commands in the
 * simulated bash, the file system contract, and that nothing reaches the real disk.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandRequest } from '../../src/executors/executor.js';
import { VirtualExecutor } from '../../src/executors/virtual/virtual-executor.js';

let seed: string;

beforeAll(async () => {
  seed = await mkdtemp(path.join(os.tmpdir(), 'virtual-seed-'));
  await mkdir(path.join(seed, 'src'));
  await writeFile(path.join(seed, 'src', 'main.py'), 'print("hi")\n');
  await writeFile(path.join(seed, 'README.md'), 'seeded\n');
  await symlink('src/main.py', path.join(seed, 'entry.py'));
});
afterAll(async () => {
  await rm(seed, { recursive: true, force: true });
});

function request(command: string, overrides: Partial<CommandRequest> = {}): CommandRequest {
  return { command, cwd: '/workspace', timeoutMs: 10_000, maxOutputBytes: 64 * 1024, ...overrides };
}

/** Every path under a real directory with its size and modification time. */
async function snapshot(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true });
  return Promise.all(entries.sort().map(async (entry) => {
    const info = await stat(path.join(directory, entry)).catch(() => undefined);
    return `${entry} ${info?.size} ${info?.mtimeMs}`;
  }));
}

describe('VirtualExecutor', () => {
  it('seeds /workspace from a directory and inline files, symlinks included', async () => {
    const executor = new VirtualExecutor({ name: 'scratch', seedDirectory: seed, files: { 'notes/todo.txt': 'inline\n', 'README.md': 'overridden\n' } });
    expect([executor.kind, executor.name, executor.root]).toEqual(['virtual', 'scratch', '/workspace']);
    expect(await executor.fs.readDirectory('/workspace')).toEqual([
      { name: 'README.md', kind: 'file' },
      { name: 'entry.py', kind: 'symlink' },
      { name: 'notes', kind: 'directory' },
      { name: 'src', kind: 'directory' },
    ]);
    expect(Buffer.from(await executor.fs.readFile('/workspace/README.md')).toString()).toBe('overridden\n');
    expect(await executor.fs.realPath('/workspace/entry.py')).toBe('/workspace/src/main.py');
    const result = await executor.run(request('cat entry.py notes/todo.txt; ls src'));
    expect(result).toMatchObject({ exitCode: 0, output: 'print("hi")\ninline\nmain.py\n', timedOut: false, aborted: false });
  });

  it('keeps every write in memory: the seed directory and the disk stay untouched', async () => {
    const before = await snapshot(seed);
    const executor = new VirtualExecutor({ name: 'scratch', seedDirectory: seed });
    await executor.fs.writeFile('/workspace/README.md', 'changed in memory\n');
    const result = await executor.run(request(`rm src/main.py; echo new > created.txt; mkdir -p ${seed}/from-shell; echo x > ${seed}/from-shell/x.txt; cat README.md`));
    expect(result.output).toBe('changed in memory\n');
    expect(await executor.fs.stat('/workspace/src/main.py')).toBeUndefined();
    expect(Buffer.from(await executor.fs.readFile(`${seed}/from-shell/x.txt`)).toString()).toBe('x\n');
    expect(await snapshot(seed)).toEqual(before);
    expect(await readFile(path.join(seed, 'README.md'), 'utf8')).toBe('seeded\n');
  });

  it('passes environment variables and reports exit codes', async () => {
    const executor = new VirtualExecutor({ name: 'scratch' });
    const result = await executor.run(request('echo "$GREETING"; exit 7', { env: { GREETING: 'hello there' } }));
    expect(result).toMatchObject({ exitCode: 7, signal: null, output: 'hello there\n' });
  });

  it('returns at once on a timeout even in a busy loop, and can run again afterwards', async () => {
    const executor = new VirtualExecutor({ name: 'scratch' });
    const started = Date.now();
    const result = await executor.run(request('while true; do :; done', { timeoutMs: 200 }));
    expect(Date.now() - started).toBeLessThan(1500);
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect((await executor.run(request('echo alive'))).output).toBe('alive\n');
  });

  it('says plainly that a program is missing because the executor is virtual, naming each once', async () => {
    const executor = new VirtualExecutor({ name: 'scratch' });
    try {
      const python = await executor.run(request('python3 -c "print(1)"'));
      expect(python.exitCode).toBe(127);
      expect(python.output).not.toContain('browser');
      expect(python.output).toContain('bash: python3: command not found\n');
      expect(python.output).toContain('executor "scratch" is virtual');
      const several = await executor.run(request('git status; npm test; git log'));
      expect(several.exitCode).toBe(127);
      expect(several.output.match(/is virtual/g)).toHaveLength(1);
      expect(several.output).toMatch(/git, npm are not among them/);
      // Also when a later command succeeds and the exit code no longer shows it.
      expect((await executor.run(request('python3 run.py; echo carried on'))).output).toMatch(/^carried on\nbash: python3: command not found\n\(executor "scratch" is virtual/);
      // A command that exists and fails keeps its own output untouched.
      const failing = await executor.run(request('cat missing.txt'));
      expect(failing.output).not.toContain('is virtual');
    } finally {
      await executor.close();
    }
  });

  it('rejects a cwd that is not a directory and refuses work after close', async () => {
    const executor = new VirtualExecutor({ name: 'scratch', files: { 'file.txt': 'x' } });
    await expect(executor.run(request('pwd', { cwd: '/workspace/missing' }))).rejects.toThrow('cannot run command in "/workspace/missing": no such directory in virtual executor "scratch"');
    await expect(executor.run(request('pwd', { cwd: '/workspace/file.txt' }))).rejects.toThrow('no such directory');
    await executor.close();
    await expect(executor.run(request('true'))).rejects.toThrow('executor "scratch" is closed');
  });

  it('follows the file system contract, naming paths and codes in errors', async () => {
    const executor = new VirtualExecutor({ name: 'scratch', files: { 'dir/x.txt': 'x' } });
    const fs = executor.fs;
    await expect(fs.readFile('/workspace/missing')).rejects.toThrow('cannot read /workspace/missing: no such file or directory (ENOENT)');
    await expect(fs.readFile('/workspace/dir')).rejects.toThrow('cannot read /workspace/dir: is a directory (EISDIR)');
    await expect(fs.writeFile('/workspace/no/parent.txt', 'x')).rejects.toThrow('cannot write /workspace/no/parent.txt: no such file or directory (ENOENT)');
    await expect(fs.writeFile('/workspace/dir', 'x')).rejects.toThrow('(EISDIR)');
    await expect(fs.removeFile('/workspace/dir')).rejects.toThrow('cannot remove /workspace/dir: is a directory (EISDIR)');
    await expect(fs.removeFile('/workspace/gone')).rejects.toThrow('(ENOENT)');
    await expect(fs.readDirectory('/workspace/dir/x.txt')).rejects.toThrow('(ENOTDIR)');
    await expect(fs.readFile('relative')).rejects.toThrow('path must be absolute, got "relative"');
    expect(await fs.stat('/workspace/dir/x.txt/below')).toBeUndefined();
    await fs.makeDirectory('/workspace/a/b/c');
    await fs.makeDirectory('/workspace/a/b/c');
    expect((await fs.stat('/workspace/a/b/c'))?.kind).toBe('directory');
    await expect(fs.makeDirectory('/workspace/dir/x.txt')).rejects.toThrow('(EEXIST)');
  });

  it('refuses bad options, naming them', () => {
    expect(() => new VirtualExecutor({ name: 'v', root: 'relative' })).toThrow('virtual executor "v": root must be an absolute path, got "relative"');
    expect(() => new VirtualExecutor({ name: 'v', seedDirectory: 'relative' })).toThrow('seedDirectory must be an absolute path');
    expect(() => new VirtualExecutor({ name: 'v', seedDirectory: path.join(seed, 'missing') })).toThrow(`seedDirectory ${path.join(seed, 'missing')} does not exist or is not a directory`);
    expect(() => new VirtualExecutor({ name: 'v', files: { '': 'x' } })).toThrow('files has an empty or invalid path ""');
  });
});

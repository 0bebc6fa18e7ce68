/**
 * `Workspace.resolveSafe`: lexical escapes and escapes through symlinks, refused with clear
 * messages, on the local file system (the shared tool suite covers the other executors).
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';

let base: string;
let root: string;
let outside: string;
let workspace: Workspace;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'workspace-paths-')));
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await writeFile(path.join(root, 'src', 'a.ts'), 'a');
  await symlink(outside, path.join(root, 'out-dir'));
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'out-file'));
  await symlink('../outside/missing.txt', path.join(root, 'dangling'));
  await symlink('src', path.join(root, 'in-dir'));
  await symlink('in-dir', path.join(root, 'chain'));
  await symlink('out-dir', path.join(root, 'chain-out'));
  workspace = new Workspace(new LocalExecutor({ name: 'local' }), root);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('Workspace.resolveSafe', () => {
  it('resolves paths inside, existing or not, keeping the lexical spelling', async () => {
    expect(await workspace.resolveSafe('.')).toBe(root);
    expect(await workspace.resolveSafe('src/a.ts')).toBe(path.join(root, 'src/a.ts'));
    expect(await workspace.resolveSafe('src/new/deeper/file.ts')).toBe(path.join(root, 'src/new/deeper/file.ts'));
    expect(await workspace.resolveSafe(path.join(root, 'src'))).toBe(path.join(root, 'src'));
    expect(await workspace.resolveSafe('chain/a.ts')).toBe(path.join(root, 'chain/a.ts'));
    expect(await workspace.resolveSafe('in-dir/../src/a.ts')).toBe(path.join(root, 'src/a.ts'));
  });

  it.each(['..', '../outside/secret.txt', 'src/../../x', '/etc/passwd', '/'])('refuses %s lexically', async (escape) => {
    await expect(workspace.resolveSafe(escape)).rejects.toThrow(`path "${escape}" is outside the workspace ${root}`);
  });

  it.each(['out-dir', 'out-dir/secret.txt', 'out-dir/new.txt', 'out-file', 'chain-out/secret.txt'])('refuses %s, which leads outside through a symlink', async (escape) => {
    await expect(workspace.resolveSafe(escape)).rejects.toThrow(`path "${escape}" leads outside the workspace ${root} through a symlink (to ${outside}`);
  });

  it('refuses a dangling symlink, which could create a file outside', async () => {
    await expect(workspace.resolveSafe('dangling')).rejects.toThrow('path "dangling" goes through a symlink that cannot be resolved');
  });

  it('lets an entry be acted on itself when only its directory must be inside', async () => {
    expect(await workspace.resolveSafe('out-file', 'entry')).toBe(path.join(root, 'out-file'));
    expect(await workspace.resolveSafe('dangling', 'entry')).toBe(path.join(root, 'dangling'));
    await expect(workspace.resolveSafe('out-dir/secret.txt', 'entry')).rejects.toThrow('leads outside the workspace');
    expect(await workspace.resolveSafe('.', 'entry')).toBe(root);
  });

  it('works when the root itself is reached through a symlink', async () => {
    const alias = path.join(base, 'root-alias');
    await symlink(root, alias);
    const aliased = new Workspace(workspace.executor, alias);
    expect(await aliased.resolveSafe('src/a.ts')).toBe(path.join(alias, 'src/a.ts'));
    await expect(aliased.resolveSafe('out-dir')).rejects.toThrow('leads outside the workspace');
  });

  it('says when the root does not exist, and retries later', async () => {
    const later = path.join(base, 'created-later');
    const pending = new Workspace(workspace.executor, later);
    await expect(pending.resolveSafe('x')).rejects.toThrow(`the workspace root ${later} cannot be resolved`);
    await mkdir(later);
    expect(await pending.resolveSafe('x')).toBe(path.join(later, 'x'));
  });

  it('refuses a relative root and a NUL byte', async () => {
    expect(() => new Workspace(workspace.executor, 'relative')).toThrow('workspace root must be an absolute path, got "relative"');
    await expect(workspace.resolveSafe('a\0b')).rejects.toThrow('contains a NUL byte');
  });
});

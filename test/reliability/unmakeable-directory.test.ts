/**
 * A directory whose parent exists but cannot hold it (anywhere under `/proc`, which answers
 * ENOENT): creating it fails at once, naming it, instead of retrying for ever — in the
 * server's own directories and in the file operations of the agent's tools, plain and
 * sandboxed.
 */
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import { Workspace } from '../../src/executors/workspace.js';
import { makeDirectory, makeDirectorySync, missingAncestor, removeMadeDirectoriesSync } from '../../src/make-directory.js';
import { requireExecutable } from '../helpers/required-commands.js';

const UNDER_PROC = '/proc/openvaala-no-such-directory/inner';
const hasProc = existsSync('/proc/self');

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-make-directory-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('making a directory with its parents', () => {
  it('tells what it would make, and takes what it made away again only while empty', () => {
    const deep = path.join(root, 'a', 'b', 'c');
    expect(missingAncestor(deep)).toBe(path.join(root, 'a'));
    expect(missingAncestor(root)).toBeUndefined();
    const made = makeDirectorySync(deep, 0o700);
    writeFileSync(path.join(root, 'a', 'kept'), 'kept\n');
    expect(removeMadeDirectoriesSync(deep, made)).toBe(false);
    expect(existsSync(path.join(root, 'a', 'b'))).toBe(false);
    expect(existsSync(path.join(root, 'a', 'kept'))).toBe(true);
    rmSync(path.join(root, 'a', 'kept'));
    makeDirectorySync(deep, 0o700);
    expect(removeMadeDirectoriesSync(deep, made)).toBe(true);
    expect(existsSync(path.join(root, 'a'))).toBe(false);
    expect(existsSync(root)).toBe(true);
    // A directory that is not one of the path's is never touched.
    expect(removeMadeDirectoriesSync(deep, os.tmpdir() + '-other')).toBe(false);
  });

  it('makes every missing level with the mode, says the topmost one made, and takes an existing directory or link to one as it is', async () => {
    const deep = path.join(root, 'a', 'b', 'c');
    expect(makeDirectorySync(deep, 0o700)).toBe(path.join(root, 'a'));
    for (const level of ['a', 'a/b', 'a/b/c']) expect(statSync(path.join(root, level)).mode & 0o777).toBe(0o700);
    expect(makeDirectorySync(deep)).toBeUndefined();
    expect(await makeDirectory(path.join(root, 'a', 'd', 'e'), 0o700)).toBe(path.join(root, 'a', 'd'));
    expect(await makeDirectory(deep)).toBeUndefined();
    symlinkSync(deep, path.join(root, 'link'));
    expect(makeDirectorySync(path.join(root, 'link'))).toBeUndefined();
    expect(await makeDirectory(path.join(root, 'link', 'f'))).toBe(path.join(root, 'link', 'f'));
  });

  it('refuses a file in the way and a dangling link, naming the path', async () => {
    const file = path.join(root, 'file');
    writeFileSync(file, '');
    expect(() => makeDirectorySync(file)).toThrow(/EEXIST.*file'/);
    await expect(makeDirectory(file)).rejects.toThrow(/EEXIST.*file'/);
    expect(() => makeDirectorySync(path.join(file, 'below'))).toThrow(/ENOTDIR.*below'/);
    await expect(makeDirectory(path.join(file, 'below'))).rejects.toThrow(/ENOTDIR.*below'/);
    symlinkSync(path.join(root, 'nowhere'), path.join(root, 'dangling'));
    expect(() => makeDirectorySync(path.join(root, 'dangling', 'x'))).toThrow(/ENOENT/);
    await expect(makeDirectory(path.join(root, 'dangling', 'x'))).rejects.toThrow(/ENOENT/);
  });

  it.skipIf(!hasProc)('fails at once where the parent cannot hold it (/proc), naming the directory', async () => {
    expect(() => makeDirectorySync(UNDER_PROC)).toThrow(/ENOENT.*\/proc\/openvaala-no-such-directory'/);
    await expect(makeDirectory(UNDER_PROC)).rejects.toThrow(/ENOENT.*\/proc\/openvaala-no-such-directory'/);
  });
});

describe.skipIf(!hasProc)('the file operations of the agent tools', () => {
  it('a local executor refuses to create a directory under /proc at once', { timeout: 10_000 }, async () => {
    await expect(new LocalFileSystem().makeDirectory(UNDER_PROC)).rejects.toThrow(/create directory.*\/proc\/openvaala-no-such-directory/);
  });

  it('a sandboxed executor refuses it at once too, and still serves the next request', { timeout: 20_000 }, async () => {
    requireExecutable('bwrap', 'bubblewrap');
    const executor = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' });
    try {
      new Workspace(executor, root);
      await expect(executor.fs.makeDirectory(UNDER_PROC)).rejects.toThrow(/ENOENT/);
      await executor.fs.makeDirectory(path.join(root, 'made', 'deep'));
      expect(statSync(path.join(root, 'made', 'deep')).isDirectory()).toBe(true);
    } finally {
      await executor.close();
    }
  });
});

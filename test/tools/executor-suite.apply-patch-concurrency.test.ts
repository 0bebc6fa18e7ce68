/**
 * File-changing tool calls on one executor: `apply_patch` calls on the same file run one after
 * the other (within one workspace and across workspaces, i.e. conversations), a patch whose
 * lines were changed meanwhile fails saying so, and every write replaces the file atomically
 * (a concurrent reader sees the old or the new content), keeping its mode and symlinks.
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import { Workspace } from '../../src/executors/workspace.js';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';
import type { ToolResult } from '../../src/tools/tool.js';
import { createExecutorFixture, EXECUTOR_VARIANTS, type ExecutorFixture } from '../helpers/executor-variants.js';
import { createFileSystemExecutor } from '../helpers/file-system-executor.js';

const SMALL = 'alpha\nbeta\ngamma\ndelta\n';

function replaceLine(file: string, from: string, to: string): string {
  return ['*** Begin Patch', `*** Update File: ${file}`, '@@', `-${from}`, `+${to}`, '*** End Patch'].join('\n');
}

function patchIn(workspace: Workspace, patch: string): Promise<ToolResult> {
  return applyPatchTool.invoke({ patch }, { workspace, signal: new AbortController().signal });
}

async function text(workspace: Workspace, file: string): Promise<string> {
  return Buffer.from(await workspace.executor.fs.readFile(path.posix.join(workspace.root, file))).toString('utf8');
}

describe.each(EXECUTOR_VARIANTS)('concurrent file changes on the %s executor', (variant) => {
  let fixture: ExecutorFixture;
  beforeAll(async () => {
    fixture = await createExecutorFixture(variant);
  }, 60_000);
  afterAll(async () => {
    await fixture?.dispose();
  });

  it('applies both of two simultaneous patches of one file', async () => {
    const workspace = await fixture.newWorkspace({ 'small.txt': SMALL });
    const results = await Promise.all([patchIn(workspace, replaceLine('small.txt', 'alpha', 'ALPHA')), patchIn(workspace, replaceLine('small.txt', 'delta', 'DELTA'))]);
    for (const result of results) expect(result.isError, result.output).toBe(false);
    expect(await text(workspace, 'small.txt')).toBe('ALPHA\nbeta\ngamma\nDELTA\n');
  });

  it('serialises patches from two workspaces (conversations) sharing the executor', async () => {
    const first = await fixture.newWorkspace({ 'small.txt': SMALL });
    const second = new Workspace(first.executor, first.root);
    const results = await Promise.all([patchIn(first, replaceLine('small.txt', 'alpha', 'ALPHA')), patchIn(second, replaceLine('small.txt', 'delta', 'DELTA'))]);
    for (const result of results) expect(result.isError, result.output).toBe(false);
    expect(await text(first, 'small.txt')).toBe('ALPHA\nbeta\ngamma\nDELTA\n');
  });

  it('keeps every one of twenty simultaneous single-line patches', async () => {
    const lines = Array.from({ length: 20 }, (_, index) => `line ${index}`);
    const workspace = await fixture.newWorkspace({ 'many.txt': `${lines.join('\n')}\n` });
    const results = await Promise.all(lines.map((line) => patchIn(workspace, replaceLine('many.txt', line, line.toUpperCase()))));
    for (const result of results) expect(result.isError, result.output).toBe(false);
    expect(await text(workspace, 'many.txt')).toBe(`${lines.map((line) => line.toUpperCase()).join('\n')}\n`);
  });

  it('refuses the later of two patches of the same line, saying the file changed', async () => {
    const workspace = await fixture.newWorkspace({ 'small.txt': SMALL });
    const results = await Promise.all([patchIn(workspace, replaceLine('small.txt', 'alpha', 'ALPHA')), patchIn(workspace, replaceLine('small.txt', 'alpha', 'Alpha'))]);
    // Either may get the file first; the other must fail and say why.
    const winner = results.findIndex((result) => !result.isError);
    const loser = results[1 - winner];
    expect(winner).not.toBe(-1);
    expect(loser?.isError).toBe(true);
    expect(loser?.output).toMatch(/lines were not found[\s\S]*the file was changed by another edit after this patch was sent/);
    expect(await text(workspace, 'small.txt')).toBe(`${['ALPHA', 'Alpha'][winner]}\nbeta\ngamma\ndelta\n`);
  });

  it('lets a concurrent reader see only the old or the new content', async () => {
    const workspace = await fixture.newWorkspace();
    const file = path.posix.join(workspace.root, 'big.txt');
    const versions = ['a', 'b'].map((letter) => `${letter.repeat(1023)}\n`.repeat(2048));
    const fileSystem = workspace.executor.fs;
    await fileSystem.writeFile(file, versions[0]!);
    let writing = true;
    const seen = new Set<string>();
    const reader = (async () => {
      while (writing) {
        const content = Buffer.from(await fileSystem.readFile(file)).toString('utf8');
        seen.add(versions.includes(content) ? 'whole' : `partial (${content.length} of ${versions[0]!.length} characters)`);
      }
    })();
    for (let round = 1; round <= 20; round++) await fileSystem.writeFile(file, versions[round % 2]!);
    writing = false;
    await reader;
    expect([...seen]).toEqual(['whole']);
  });

  it('replaces the target of a symlink and keeps the link', async () => {
    const workspace = await fixture.newWorkspace({ 'real.txt': SMALL });
    await fixture.makeSymlink('real.txt', path.posix.join(workspace.root, 'link.txt'));
    const result = await patchIn(workspace, replaceLine('link.txt', 'beta', 'BETA'));
    expect(result.isError, result.output).toBe(false);
    expect((await workspace.executor.fs.stat(path.posix.join(workspace.root, 'link.txt')))?.kind).toBe('symlink');
    expect(await text(workspace, 'real.txt')).toBe('alpha\nBETA\ngamma\ndelta\n');
  });

  it.skipIf(variant === 'virtual')('writes a new file and renames it over the old one, leaving no temporary file', async () => {
    const workspace = await fixture.newWorkspace({ 'small.txt': SMALL });
    const onDisk = path.join(workspace.root, 'small.txt');
    const before = (await stat(onDisk)).ino;
    const result = await patchIn(workspace, replaceLine('small.txt', 'gamma', 'GAMMA'));
    expect(result.isError, result.output).toBe(false);
    expect((await stat(onDisk)).ino).not.toBe(before);
    expect((await workspace.executor.fs.readDirectory(workspace.root)).map((entry) => entry.name)).toEqual(['small.txt']);
  });

  it.skipIf(variant === 'virtual')('keeps the mode of the file it replaces', async () => {
    const workspace = await fixture.newWorkspace({ 'script.sh': '#!/bin/sh\necho old\n' });
    const onDisk = path.join(workspace.root, 'script.sh');
    await chmod(onDisk, 0o741);
    const result = await patchIn(workspace, replaceLine('script.sh', 'echo old', 'echo new'));
    expect(result.isError, result.output).toBe(false);
    expect((await stat(onDisk)).mode & 0o7777).toBe(0o741);
    expect(await text(workspace, 'script.sh')).toBe('#!/bin/sh\necho new\n');
  });
});

describe('a file changed outside apply_patch while a patch is applied', () => {
  it('is left as the other writer wrote it, and the patch fails saying the file changed', async () => {
    /** Another program writes the file right after the patch has read it. */
    class ConcurrentWriter extends LocalFileSystem {
      override async readFile(filePath: string): Promise<Uint8Array> {
        const bytes = await super.readFile(filePath);
        await writeFile(filePath, `${SMALL}epsilon\n`);
        return bytes;
      }
    }
    const root = await mkdtemp(path.join(tmpdir(), 'openvaala-external-change-'));
    try {
      await writeFile(path.join(root, 'small.txt'), SMALL);
      const workspace = new Workspace(createFileSystemExecutor(new ConcurrentWriter()), root);
      const result = await patchIn(workspace, replaceLine('small.txt', 'alpha', 'ALPHA'));
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(/small\.txt .*the file changed while the patch was being applied/);
      expect(await readFile(path.join(root, 'small.txt'), 'utf8')).toBe(`${SMALL}epsilon\n`);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

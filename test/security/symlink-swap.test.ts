/**
 * Threat model: on a sandboxed executor, file tools cannot read or write outside what the
 * sandbox allows, even when a sandboxed command races them by flipping a workspace symlink
 * between a target inside and one outside the workspace (a check-then-open race). A
 * background command makes 1,000 flips while read_file and apply_patch go through the link
 * again and again; no read may return the outside file and nothing outside may change.
 */
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';
import { readFileTool } from '../../src/tools/read-file.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { requireExecutable } from '../helpers/required-commands.js';

const SWAPS = 1000;
const INSIDE = 'inside content\n';
const OUTSIDE = 'outside secret\n';

let base: string;
let workspaceRoot: string;
let outsideDirectory: string;
let executor: LocalExecutor;
let context: ToolContext;

beforeAll(async () => {
  requireExecutable('bwrap', 'bubblewrap');
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'symlink-swap-')));
  workspaceRoot = path.join(base, 'workspace');
  outsideDirectory = path.join(base, 'outside');
  await mkdir(path.join(workspaceRoot, 'inside'), { recursive: true });
  await mkdir(outsideDirectory);
  await writeFile(path.join(workspaceRoot, 'inside', 'file.txt'), INSIDE);
  await writeFile(path.join(outsideDirectory, 'file.txt'), OUTSIDE);
  executor = new LocalExecutor({ name: 'sandboxed', sandbox: 'bwrap' });
  context = { workspace: new Workspace(executor, workspaceRoot), signal: new AbortController().signal };
});

afterAll(async () => {
  await executor?.close();
  await rm(base, { recursive: true, force: true });
});

describe('a symlink flipped by a sandboxed command while file tools use it', () => {
  it(`never lets read_file or apply_patch reach outside the workspace in ${SWAPS} flips`, { timeout: 120_000 }, async () => {
    // Each flip replaces the link in one step (a fresh link renamed over it), so it always
    // points somewhere; one perl process flips, about every 3 ms, so the flips span seconds.
    const flips = `for my $i (1..${SWAPS}) { my $target = $i % 2 ? q{inside} : q{${outsideDirectory}}; symlink($target, q{next}) or die; rename(q{next}, q{link}) or die; select(undef, undef, undef, 0.003) } print "flipped\\n"`;
    const flipper = executor.spawn({
      command: `perl -e '${flips}'`,
      cwd: workspaceRoot,
      workspaceRoot,
    });
    let flipperOutput = '';
    flipper.onOutput((chunk) => (flipperOutput += chunk));
    let flipping = true;
    flipper.exited.then(
      () => (flipping = false),
      () => (flipping = false),
    );

    let reads = 0;
    let outsideReads = 0;
    let insideReads = 0;
    let patches = 0;
    let round = 0;
    while (flipping || round < 20) {
      round += 1;
      const patch = [
        '*** Begin Patch',
        `*** Add File: link/new-${round}.txt`,
        `+written in round ${round}`,
        '*** Update File: link/file.txt',
        '@@',
        `-${round % 2 === 0 ? 'outside secret' : 'inside content'}`,
        `+${round % 2 === 0 ? 'outside secret' : 'inside content'}`,
        '*** End Patch',
      ].join('\n');
      const [read, patched] = await Promise.all([readFileTool.invoke({ path: 'link/file.txt' }, context), applyPatchTool.invoke({ patch }, context)]);
      reads += 1;
      if (read.output.includes('outside secret')) outsideReads += 1;
      if (read.output.includes('inside content')) insideReads += 1;
      if (!patched.isError) patches += 1;
    }
    expect(await flipper.exited).toEqual({ exitCode: 0, signal: null });
    expect(flipperOutput).toContain('flipped');

    expect(outsideReads).toBe(0);
    expect(await readFile(path.join(outsideDirectory, 'file.txt'), 'utf8')).toBe(OUTSIDE);
    expect(await readdir(outsideDirectory)).toEqual(['file.txt']);
    // The race was real: the tools did get through the link to the inside target.
    expect(reads).toBeGreaterThan(20);
    expect(insideReads + patches).toBeGreaterThan(0);
  });
});

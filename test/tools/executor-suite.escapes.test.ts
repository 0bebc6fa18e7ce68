/**
 * Escape attempts refused by every tool on every executor: `../`, absolute paths outside the
 * workspace, and symlinks inside the workspace that point outside (to a directory, to a file,
 * and dangling). Afterwards the outside directory must be exactly as it was.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workspace } from '../../src/executors/workspace.js';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';
import { execCommandTool } from '../../src/tools/exec-command.js';
import { globTool } from '../../src/tools/glob.js';
import { createGrepTool, grepTool } from '../../src/tools/grep.js';
import { listDirTool } from '../../src/tools/list-dir.js';
import { readFileTool } from '../../src/tools/read-file.js';
import type { Tool } from '../../src/tools/tool.js';
import { readTree } from '../helpers/executor-tree.js';
import { createExecutorFixture, EXECUTOR_VARIANTS, OUTSIDE_SECRET, type ExecutorFixture } from '../helpers/executor-variants.js';

const LEXICAL = /is outside the workspace/;
const THROUGH_LINK = /leads outside the workspace .* through a symlink|goes through a symlink that cannot be resolved/;

describe.each(EXECUTOR_VARIANTS)('escape attempts on the %s executor', (variant) => {
  let fixture: ExecutorFixture;
  let workspace: Workspace;
  let outside: string;

  beforeAll(async () => {
    fixture = await createExecutorFixture(variant);
    outside = fixture.outsideDirectory;
    workspace = await fixture.newWorkspace({ 'inside.txt': 'inside\n', 'dir/file.txt': 'file\n' });
    await fixture.makeSymlink(outside, path.posix.join(workspace.root, 'link-dir'));
    await fixture.makeSymlink(path.posix.join(outside, 'secret.txt'), path.posix.join(workspace.root, 'link-file'));
    await fixture.makeSymlink(path.posix.join(outside, 'created-through-link.txt'), path.posix.join(workspace.root, 'dangling'));
  }, 60_000);
  afterAll(async () => {
    await fixture?.dispose();
  });

  async function refused(tool: Tool<unknown>, args: Record<string, unknown>, reason: RegExp): Promise<void> {
    const result = await tool.invoke(args, { workspace, signal: new AbortController().signal });
    expect(result.isError, `${tool.name} ${JSON.stringify(args)} was not refused: ${result.output}`).toBe(true);
    expect(result.output).toMatch(reason);
    expect(result.output).not.toContain(OUTSIDE_SECRET.trim());
  }

  it('read_file refuses ../, absolute paths outside and symlinks leading out', async () => {
    await refused(readFileTool as Tool<unknown>, { path: '../outside/secret.txt' }, LEXICAL);
    await refused(readFileTool as Tool<unknown>, { path: 'dir/../../x.txt' }, LEXICAL);
    await refused(readFileTool as Tool<unknown>, { path: path.posix.join(outside, 'secret.txt') }, LEXICAL);
    await refused(readFileTool as Tool<unknown>, { path: 'link-dir/secret.txt' }, THROUGH_LINK);
    await refused(readFileTool as Tool<unknown>, { path: 'link-file' }, THROUGH_LINK);
    await refused(readFileTool as Tool<unknown>, { path: 'dangling' }, THROUGH_LINK);
  });

  it('list_dir, glob and grep refuse to look outside', async () => {
    await refused(listDirTool as Tool<unknown>, { path: '..' }, LEXICAL);
    await refused(listDirTool as Tool<unknown>, { path: 'link-dir' }, THROUGH_LINK);
    await refused(globTool as Tool<unknown>, { pattern: '*', path: 'link-dir' }, THROUGH_LINK);
    await refused(globTool as Tool<unknown>, { pattern: '*', path: outside }, LEXICAL);
    for (const grep of [grepTool, createGrepTool({ engine: 'portable' })]) {
      await refused(grep as Tool<unknown>, { pattern: 'secret', path: 'link-dir' }, THROUGH_LINK);
      await refused(grep as Tool<unknown>, { pattern: 'secret', path: 'link-file' }, THROUGH_LINK);
      await refused(grep as Tool<unknown>, { pattern: 'secret', path: '../' }, LEXICAL);
      // Walking the workspace does not follow the links out either.
      const walked = await grep.invoke({ pattern: 'outside secret' }, { workspace, signal: new AbortController().signal });
      expect(walked.output).toBe('No matches for "outside secret" in .');
    }
  });

  it('exec_command refuses a working directory outside', async () => {
    await refused(execCommandTool as Tool<unknown>, { command: 'cat secret.txt', cwd: '..' }, LEXICAL);
    await refused(execCommandTool as Tool<unknown>, { command: 'cat secret.txt', cwd: outside }, LEXICAL);
    await refused(execCommandTool as Tool<unknown>, { command: 'cat secret.txt', cwd: 'link-dir' }, THROUGH_LINK);
  });

  it('apply_patch refuses every section that would write outside, changing nothing', async () => {
    const patch = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
    const attempts = [
      patch('*** Add File: ../evil.txt', '+evil'),
      patch(`*** Add File: ${path.posix.join(outside, 'evil.txt')}`, '+evil'),
      patch('*** Add File: link-dir/evil.txt', '+evil'),
      patch('*** Add File: dangling', '+evil'),
      patch('*** Update File: link-file', '@@', '-outside secret', '+changed'),
      patch('*** Update File: inside.txt', '*** Move to: link-dir/moved.txt', '@@', '-inside', '+moved'),
      patch('*** Delete File: link-dir/secret.txt'),
    ];
    for (const attempt of attempts) {
      const result = await applyPatchTool.invoke({ patch: attempt }, { workspace, signal: new AbortController().signal });
      expect(result.isError, `not refused: ${attempt}`).toBe(true);
      expect(result.output).toMatch(/refusing .*(is outside the workspace|leads outside the workspace|cannot be resolved).*; no file was changed/);
    }
    expect((await readTree(workspace.executor.fs, path.posix.join(workspace.root, 'dir'))).get('file.txt')?.toString()).toBe('file\n');
    expect((await readFileTool.invoke({ path: 'inside.txt' }, { workspace, signal: new AbortController().signal })).output).toBe('     1\tinside');
  });

  it('leaves the outside directory exactly as it was', async () => {
    const tree = await readTree(fixture.outsideFiles, outside);
    expect([...tree.keys()]).toEqual(['secret.txt']);
    expect(tree.get('secret.txt')?.toString()).toBe(OUTSIDE_SECRET);
  });
});

/**
 * `grep` and `glob` honour ignore files as ripgrep does, the same on every executor (local,
 * local inside bubblewrap, SSH, virtual) and with both grep engines (ripgrep where the
 * executor has it, and the portable one): nested `.gitignore` / `.ignore` files, negations,
 * anchored patterns, ignored directories, `node_modules`, `.git` always skipped, hidden files
 * kept, and `include_ignored` to see everything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workspace } from '../../src/executors/workspace.js';
import { globTool } from '../../src/tools/glob.js';
import { createGrepTool, grepTool } from '../../src/tools/grep.js';
import type { Tool, ToolResult } from '../../src/tools/tool.js';
import { createExecutorFixture, EXECUTOR_VARIANTS, type ExecutorFixture } from '../helpers/executor-variants.js';

const FOUND = 'FIND-ME\n';

/** A workspace that is not a git repository (ignore files apply all the same). */
const PROJECT = {
  '.gitignore': '*.log\nbuild/\n!keep.log\n/root-only.txt\n',
  'a.log': FOUND,
  'keep.log': FOUND,
  'build/out.txt': FOUND,
  'root-only.txt': FOUND,
  'src/root-only.txt': FOUND,
  'src/app.txt': FOUND,
  'sub/.gitignore': 'secret.txt\n',
  'sub/secret.txt': FOUND,
  'sub/y.log': FOUND,
  'sub/x.txt': FOUND,
  'sub/deep/.ignore': '!secret.txt\n',
  'sub/deep/secret.txt': FOUND,
  '.hidden.txt': FOUND,
  'node_modules/lib/index.txt': FOUND,
  '.git/config.txt': FOUND,
};

const VISIBLE = ['.hidden.txt', 'keep.log', 'src/app.txt', 'src/root-only.txt', 'sub/deep/secret.txt', 'sub/x.txt'];
const IGNORED = ['a.log', 'build/out.txt', 'node_modules/lib/index.txt', 'root-only.txt', 'sub/secret.txt', 'sub/y.log'];

function call<Args>(tool: Tool<Args>, args: unknown, workspace: Workspace): Promise<ToolResult> {
  return tool.invoke(args, { workspace, signal: new AbortController().signal });
}

/** The files of grep's `path:line:text` lines. */
function filesOf(result: ToolResult): string[] {
  expect(result.isError, result.output).toBe(false);
  return result.output.split('\n').map((line) => line.split(':')[0] as string);
}

describe.each(EXECUTOR_VARIANTS)('ignore files on the %s executor', (variant) => {
  let fixture: ExecutorFixture;
  let workspace: Workspace;

  beforeAll(async () => {
    fixture = await createExecutorFixture(variant);
    workspace = await fixture.newWorkspace(PROJECT);
  }, 60_000);
  afterAll(async () => {
    await fixture?.dispose();
  });

  it('glob skips what ignore files exclude, and lists it with include_ignored (never .git)', async () => {
    const listed = (await call(globTool, { pattern: '*.{txt,log}' }, workspace)).output.split('\n');
    expect(listed).toEqual(VISIBLE);
    const everything = (await call(globTool, { pattern: '*.{txt,log}', include_ignored: true }, workspace)).output.split('\n');
    expect(everything).toEqual([...VISIBLE, ...IGNORED].sort());
  });

  it('glob applies the ignore files of the parent directories when searching below them', async () => {
    expect((await call(globTool, { pattern: '*', path: 'sub' }, workspace)).output.split('\n')).toEqual(['sub/.gitignore', 'sub/deep/.ignore', 'sub/deep/secret.txt', 'sub/x.txt']);
  });

  describe.each(['auto', 'portable'] as const)('grep (%s engine)', (engine) => {
    const grep = engine === 'auto' ? grepTool : createGrepTool({ engine: 'portable' });

    it('skips what ignore files exclude: nested files, negations, anchors, directories, node_modules, .git', async () => {
      expect(filesOf(await call(grep, { pattern: 'FIND-ME' }, workspace))).toEqual(VISIBLE);
    });

    it('searches everything but .git with include_ignored', async () => {
      expect(filesOf(await call(grep, { pattern: 'FIND-ME', include_ignored: true }, workspace))).toEqual([...VISIBLE, ...IGNORED].sort());
    });

    it('applies the ignore files of the parent directories when searching below them', async () => {
      expect(filesOf(await call(grep, { pattern: 'FIND-ME', path: 'sub' }, workspace))).toEqual(['sub/deep/secret.txt', 'sub/x.txt']);
    });

    it('lets a glob select ignored files, but not enter ignored directories', async () => {
      expect(filesOf(await call(grep, { pattern: 'FIND-ME', glob: '*.log' }, workspace))).toEqual(['a.log', 'keep.log', 'sub/y.log']);
      expect((await call(grep, { pattern: 'FIND-ME', glob: 'build/*.txt' }, workspace)).output).toContain('No matches');
    });

    it('searches an ignored file named as the path', async () => {
      expect(filesOf(await call(grep, { pattern: 'FIND-ME', path: 'a.log' }, workspace))).toEqual(['a.log']);
    });
  });
});

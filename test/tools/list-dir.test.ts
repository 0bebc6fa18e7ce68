import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { createListDirTool, listDirTool } from '../../src/tools/list-dir.js';
import type { ToolContext } from '../../src/tools/tool.js';

let root: string;
let context: ToolContext;

/** Creates files (content = name) and directories (names ending in `/`) under the root. */
async function createTree(entries: string[]): Promise<void> {
  for (const entry of entries) {
    const absolute = path.join(root, entry);
    if (entry.endsWith('/')) await mkdir(absolute, { recursive: true });
    else {
      await mkdir(path.dirname(absolute), { recursive: true });
      await writeFile(absolute, entry);
    }
  }
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'list-dir-')));
  context = { workspace: new Workspace(new LocalExecutor({ name: 'local' }), root), signal: new AbortController().signal };
  await createTree([
    'project/README.md',
    'project/src/main.ts',
    'project/src/util/strings.ts',
    'project/src/util/deep/deeper/deepest.txt',
    'project/.git/HEAD',
    'project/.git/objects/',
    'project/node_modules/zod/package.json',
    'project/Zebra.txt',
    'project/empty/',
  ]);
  await symlink('src', path.join(root, 'project', 'source-link'));
  await symlink('README.md', path.join(root, 'project', 'readme-link'));
});

afterAll(async () => {
  await context.workspace.executor.close();
  await rm(root, { recursive: true, force: true });
});

describe('list_dir', () => {
  it('lists one level sorted, directories with "/", symlinks with "@"', async () => {
    const result = await listDirTool.invoke({ path: 'project' }, context);
    expect(result.isError).toBe(false);
    expect(result.output).toBe(
      [
        'project/',
        '  .git/',
        '  README.md',
        '  Zebra.txt',
        '  empty/',
        '  node_modules/',
        '  readme-link@',
        '  source-link@',
        '  src/',
      ].join('\n'),
    );
  });

  it('indents deeper levels, skips .git and node_modules contents and does not follow symlinks', async () => {
    const result = await listDirTool.invoke({ path: 'project', depth: 3 }, context);
    expect(result.output).toBe(
      [
        'project/',
        '  .git/',
        '  README.md',
        '  Zebra.txt',
        '  empty/',
        '  node_modules/',
        '  readme-link@',
        '  source-link@',
        '  src/',
        '    main.ts',
        '    util/',
        '      deep/',
        '      strings.ts',
      ].join('\n'),
    );
  });

  it('stops at depth 5', async () => {
    const five = await listDirTool.invoke({ path: 'project/src', depth: 5 }, context);
    expect(five.output.split('\n')).toContain('        deepest.txt');
    const two = await listDirTool.invoke({ path: 'project/src', depth: 2 }, context);
    expect(two.output).toBe(['project/src/', '  main.ts', '  util/', '    deep/', '    strings.ts'].join('\n'));
  });

  it('lists the contents of node_modules when it is the directory asked for', async () => {
    const result = await listDirTool.invoke({ path: 'project/node_modules', depth: 2 }, context);
    expect(result.output).toBe(['project/node_modules/', '  zod/', '    package.json'].join('\n'));
  });

  it('defaults to the workspace root and says when a directory is empty', async () => {
    const rootListing = await listDirTool.invoke({}, context);
    expect(rootListing.output).toBe('./\n  project/');
    const empty = await listDirTool.invoke({ path: 'project/empty' }, context);
    expect(empty.isError).toBe(false);
    expect(empty.output).toBe('project/empty/\n(empty directory)');
  });

  it('caps the entries shown and says how many more there are', async () => {
    await createTree(Array.from({ length: 25 }, (_, index) => `many/file-${String(index).padStart(2, '0')}.txt`));
    const capped = createListDirTool({ maxEntries: 10 });
    const result = await capped.invoke({ path: 'many' }, context);
    const lines = result.output.split('\n');
    expect(lines).toHaveLength(1 + 10 + 1);
    expect(lines[10]).toBe('  file-09.txt');
    expect(lines.at(-1)).toContain('15 more entries not shown');
  });

  it('caps at 500 entries by default', async () => {
    await createTree(Array.from({ length: 520 }, (_, index) => `crowded/f${String(index).padStart(3, '0')}`));
    const result = await listDirTool.invoke({ path: 'crowded' }, context);
    const lines = result.output.split('\n');
    expect(lines).toHaveLength(1 + 500 + 1);
    expect(lines.at(-1)).toContain('20 more entries not shown');
  });

  it.each([
    [{ path: 3 }, 'path'],
    [{ depth: 0 }, 'depth'],
    [{ depth: 6 }, 'depth'],
    [{ depth: '2' }, 'depth'],
    [{ depth: 1.5 }, 'depth'],
  ])('rejects bad arguments %j naming "%s"', async (args, argument) => {
    const result = await listDirTool.invoke(args, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain(`list_dir: argument "${argument}"`);
  });

  it.each(['..', '../elsewhere', '/etc'])('refuses %s outside the workspace', async (escape) => {
    const result = await listDirTool.invoke({ path: escape }, context);
    expect(result.isError).toBe(true);
    expect(result.output).toContain(`"${escape}" is outside the workspace`);
  });

  it('reports a missing directory and a file by name', async () => {
    const missing = await listDirTool.invoke({ path: 'project/gone' }, context);
    expect(missing.isError).toBe(true);
    expect(missing.output).toContain('"project/gone" does not exist');
    const file = await listDirTool.invoke({ path: 'project/README.md' }, context);
    expect(file.isError).toBe(true);
    expect(file.output).toContain('"project/README.md" is not a directory');
  });
});

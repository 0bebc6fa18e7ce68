/**
 * apply_patch deletes or replaces files it cannot read as text (a dangling link, a link to a
 * directory, a binary file) as it always did: their diff is left out of the details, the
 * change itself is made.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

it('deletes links and replaces a binary file, leaving only their diffs out', async () => {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'apply-patch-unreadable-')));
  roots.push(root);
  symlinkSync(path.join(root, 'nowhere'), path.join(root, 'dangling'));
  mkdirSync(path.join(root, 'folder'));
  symlinkSync(path.join(root, 'folder'), path.join(root, 'dirlink'));
  writeFileSync(path.join(root, 'blob.bin'), Buffer.from([0xff, 0xfe, 0x00, 0x01]));
  writeFileSync(path.join(root, 'notes.txt'), 'old\n');
  const patch = ['*** Begin Patch', '*** Delete File: dangling', '*** Delete File: dirlink', '*** Add File: blob.bin', '+now text', '*** Delete File: notes.txt', '*** End Patch'].join('\n');
  const workspace = new Workspace(new LocalExecutor({ name: 'local' }), root);
  const result = await applyPatchTool.invoke({ patch }, { workspace, signal: new AbortController().signal });
  expect(result.output).toBe('Success. Updated the following files:\nA blob.bin\nD dangling\nD dirlink\nD notes.txt');
  expect(result.isError).toBe(false);
  expect(existsSync(path.join(root, 'dirlink')) || lstatSync(path.join(root, 'dangling'), { throwIfNoEntry: false }) !== undefined).toBe(false);
  expect(existsSync(path.join(root, 'folder'))).toBe(true);
  expect(readFileSync(path.join(root, 'blob.bin'), 'utf8')).toBe('now text\n');
  expect(result.details).toEqual({ kind: 'fileChange', changes: [{ path: 'notes.txt', kind: 'delete', unifiedDiff: '--- a/notes.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-old\n' }] });
});

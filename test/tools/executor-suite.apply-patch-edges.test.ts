/**
 * The byte-preservation table of `apply_patch` (tables/apply-patch-edges.ts) on every
 * executor: the file is seeded and read back through the executor's own file system.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';
import { createExecutorFixture, EXECUTOR_VARIANTS, type ExecutorFixture } from '../helpers/executor-variants.js';
import { EDGE_CASES } from './tables/apply-patch-edges.js';

/** Shows every byte, so a failure names the line breaks that differ. */
function visible(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 80)}…${text.slice(-80)}` : text);
}

describe.each(EXECUTOR_VARIANTS)('apply_patch keeps untouched bytes on the %s executor', (variant) => {
  let fixture: ExecutorFixture;
  beforeAll(async () => {
    fixture = await createExecutorFixture(variant);
  }, 60_000);
  afterAll(async () => {
    await fixture?.dispose();
  });

  it.each(EDGE_CASES)('$name', async (edge) => {
    const workspace = await fixture.newWorkspace({ 'file.txt': edge.input });
    const patch = ['*** Begin Patch', '*** Update File: file.txt', ...edge.patch, '*** End Patch'].join('\n');
    const result = await applyPatchTool.invoke({ patch }, { workspace, signal: new AbortController().signal });
    const after = Buffer.from(await workspace.executor.fs.readFile(`${workspace.root}/file.txt`)).toString('utf8');
    if (edge.rejected !== undefined) {
      expect(result.isError, result.output).toBe(true);
      expect(result.output).toMatch(edge.rejected);
      expect(after === edge.input, `file changed to ${visible(after)}`).toBe(true);
      return;
    }
    expect(result.isError, result.output).toBe(false);
    expect(after === edge.expected, `expected ${visible(edge.expected ?? '')}, got ${visible(after)}`).toBe(true);
  });
});

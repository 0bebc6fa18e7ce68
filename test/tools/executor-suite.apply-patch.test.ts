/**
 * Every scenario of the shared `apply-patch` fixture suite through the `apply_patch` tool on
 * every executor: the input tree is seeded and the result read back through the executor's
 * own file system (SFTP, memory…), and compared byte for byte with the expected tree.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';
import { readTree } from '../helpers/executor-tree.js';
import { createExecutorFixture, EXECUTOR_VARIANTS, type ExecutorFixture } from '../helpers/executor-variants.js';

const fixturesDirectory = fileURLToPath(new URL('../../../shared/fixtures/apply-patch/', import.meta.url));
const scenarios = existsSync(fixturesDirectory)
  ? readdirSync(fixturesDirectory)
      .filter((name) => statSync(path.join(fixturesDirectory, name)).isDirectory())
      .sort()
  : [];
const expectedFailuresFile = path.join(fixturesDirectory, 'EXPECTED_FAILURES.txt');
const expectedFailures = new Set(
  existsSync(expectedFailuresFile)
    ? readFileSync(expectedFailuresFile, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '' && !line.startsWith('#'))
    : [],
);

/** The files of a scenario's directory on the real disk, relative path → bytes. */
async function diskTree(root: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  if (!existsSync(root)) return files;
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(path.relative(root, full).split(path.sep).join('/'), await readFile(full));
  }
  return files;
}

it('finds the shared apply-patch scenarios', () => {
  expect(scenarios.length, `no scenarios in ${fixturesDirectory}`).toBeGreaterThan(0);
});

describe.each(EXECUTOR_VARIANTS)('apply_patch fixture scenarios on the %s executor', (variant) => {
  let fixture: ExecutorFixture;
  beforeAll(async () => {
    fixture = await createExecutorFixture(variant);
  }, 60_000);
  afterAll(async () => {
    await fixture?.dispose();
  });

  it.each(scenarios)('%s', async (scenario) => {
    const scenarioDirectory = path.join(fixturesDirectory, scenario);
    const input = Object.fromEntries(await diskTree(path.join(scenarioDirectory, 'input')));
    const workspace = await fixture.newWorkspace(input);
    const result = await applyPatchTool.invoke(
      { patch: await readFile(path.join(scenarioDirectory, 'patch.txt'), 'utf8') },
      { workspace, signal: new AbortController().signal },
    );
    if (expectedFailures.has(scenario)) {
      expect(result.isError, `scenario should be rejected, got: ${result.output}`).toBe(true);
      expect(result.output).toMatch(/^apply_patch: /);
    } else {
      expect(result.isError, result.output).toBe(false);
      expect(result.output).toMatch(/^Success\. Updated the following files:\n[AMD] /);
    }
    const actual = await readTree(workspace.executor.fs, workspace.root);
    const expected = await diskTree(path.join(scenarioDirectory, 'expected'));
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [file, bytes] of expected) {
      expect(actual.get(file)?.toString('latin1'), `content of ${file}`).toBe(bytes.toString('latin1'));
    }
  });
});

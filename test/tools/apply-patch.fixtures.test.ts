/**
 * Runs every scenario of the shared `apply-patch` fixture suite (taken from Codex's own
 * `apply_patch` tests) through the `apply_patch` tool on the local file system, and compares
 * the resulting tree byte for byte with the scenario's `expected/` tree.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cp, lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import { Workspace } from '../../src/executors/workspace.js';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';
import { createFileSystemExecutor } from '../helpers/file-system-executor.js';
import { runCli } from '../helpers/environment.js';

const fixturesDirectory = fileURLToPath(new URL('../../../shared/fixtures/apply-patch/', import.meta.url));
const fixturesPresent = existsSync(fixturesDirectory);
const scenarios = fixturesPresent
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

/** Every regular file under `root`, keyed by its relative POSIX path. */
async function readTree(root: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  if (!existsSync(root)) return files;
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) files.set(path.relative(root, full).split(path.sep).join('/'), await readFile(full));
      else throw new Error(`unexpected non-regular entry ${full} (${(await lstat(full)).mode.toString(8)})`);
    }
  };
  await walk(root);
  return files;
}

const temporaryDirectories: string[] = [];
afterEach(async () => {
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

describe('apply_patch fixture scenarios', () => {
  it('finds the shared fixture folder with its scenarios and expected failures', () => {
    expect(fixturesPresent, `fixture folder missing: ${fixturesDirectory}`).toBe(true);
    expect(scenarios.length).toBeGreaterThan(0);
    expect(existsSync(expectedFailuresFile), `missing ${expectedFailuresFile}`).toBe(true);
    expect(expectedFailures.size).toBeGreaterThan(0);
    for (const name of expectedFailures) expect(scenarios, `EXPECTED_FAILURES.txt names unknown scenario ${name}`).toContain(name);
  });

  it.each(scenarios)('%s', async (scenario) => {
    const scenarioDirectory = path.join(fixturesDirectory, scenario);
    const patchFile = path.join(scenarioDirectory, 'patch.txt');
    expect(existsSync(patchFile), `missing ${patchFile}`).toBe(true);
    expect(existsSync(path.join(scenarioDirectory, 'expected')), `missing expected/ in ${scenario}`).toBe(true);

    const root = await mkdtemp(path.join(tmpdir(), 'openvaala-apply-patch-'));
    temporaryDirectories.push(root);
    const input = path.join(scenarioDirectory, 'input');
    if (existsSync(input)) await cp(input, root, { recursive: true });

    const workspace = new Workspace(createFileSystemExecutor(new LocalFileSystem()), root);
    const result = await applyPatchTool.invoke(
      { patch: await readFile(patchFile, 'utf8') },
      { workspace, signal: new AbortController().signal },
    );

    if (expectedFailures.has(scenario)) {
      expect(result.isError, `scenario should be rejected, got: ${result.output}`).toBe(true);
      expect(result.output).toMatch(/^apply_patch: /);
    } else {
      expect(result.isError, result.output).toBe(false);
      expect(result.output).toMatch(/^Success\. Updated the following files:\n[AMD] /);
    }

    const actual = await readTree(root);
    const expected = await readTree(path.join(scenarioDirectory, 'expected'));
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [file, bytes] of expected) {
      expect(actual.get(file)?.toString('latin1'), `content of ${file}`).toBe(bytes.toString('latin1'));
    }
  });
});

describe('apply_patch fixture scenarios through `openvaala dev apply-patch`', () => {
  it.each(scenarios)('%s', async (scenario) => {
    const scenarioDirectory = path.join(fixturesDirectory, scenario);
    const root = await mkdtemp(path.join(tmpdir(), 'openvaala-apply-patch-cli-'));
    temporaryDirectories.push(root);
    const input = path.join(scenarioDirectory, 'input');
    if (existsSync(input)) await cp(input, root, { recursive: true });

    const result = await runCli(['dev', 'apply-patch', '--cwd', root], { env: process.env, input: await readFile(path.join(scenarioDirectory, 'patch.txt'), 'utf8') });
    if (expectedFailures.has(scenario)) {
      expect(result.code, `scenario should be rejected, stdout: ${result.stdout}`).not.toBe(0);
      expect(result.stderr.trim().length).toBeGreaterThan(0);
    } else {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^Success\./);
    }
    const actual = await readTree(root);
    const expected = await readTree(path.join(scenarioDirectory, 'expected'));
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [file, bytes] of expected) {
      expect(actual.get(file)?.toString('latin1'), `content of ${file}`).toBe(bytes.toString('latin1'));
    }
  });
});

/**
 * What the real `openvaala exec` client (the bundled command line) loads for a one-reply turn
 * against a running server. Its peak memory (issue target: at most 60 MiB, docs/performance.md
 * "Start-up") depends on it: one value import from the protocol's index once brought in every
 * protocol schema and zod with it (about 330 KB of code, 9 MiB of peak memory).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { moduleRecorderArguments, packageOf, recordedFiles, totalBytes } from '../helpers/module-recorder.js';

/** Packages the client may hold: the WebSocket client, `runtime-server.yaml`'s reader, the command table, terminal cleaning. */
const CLIENT_PACKAGES = ['ws', 'yaml', 'commander', 'strip-ansi', 'ansi-regex'];

/**
 * Code of the bundled command line the client loads, at most (bytes): about 610 KB at the time
 * of writing, of which yaml 230 KB, commander 137 KB and ws 117 KB.
 */
const CLIENT_CODE_BUDGET_BYTES = 700_000;

/** Packages whose code a bundled chunk carries, from the bundler's `// node_modules/<package>/…` region comments. */
function bundledPackages(address: string): string[] {
  const names = readFileSync(fileURLToPath(address), 'utf8').match(/^\/\/ node_modules\/(?:@[^/\n]+\/)?[^/\n]+/gm) ?? [];
  return names.map((comment) => comment.slice('// node_modules/'.length));
}

describe('openvaala exec client modules', () => {
  let environment: TestEnvironment;
  let server: ServeProcess;
  beforeEach(async () => {
    environment = await createTestEnvironment('responses:\n  - text: "ok"\n');
    server = await startServe(environment);
  });
  afterEach(async () => {
    await server.stop();
    await environment.dispose();
  });

  it('runs a turn without zod, the protocol schemas or any server package, within its code budget', async () => {
    const child = spawn(process.execPath, [...moduleRecorderArguments(environment.root), CLI_EXECUTABLE, 'exec', '--json', 'say ok'], { env: environment.env, cwd: environment.workDir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('"turn/completed"');

    const loaded = recordedFiles(stderr.split('\n'));
    const bundled = loaded.filter((address) => address.includes('/dist/cli/'));
    expect(bundled.length).toBeGreaterThan(0);
    const packages = new Set([...loaded.map(packageOf).filter((name) => name !== undefined), ...bundled.flatMap(bundledPackages)]);
    expect([...packages].filter((name) => !CLIENT_PACKAGES.includes(name)).sort()).toEqual([]);
    expect(packages.has('ws')).toBe(true);
    expect(totalBytes(bundled)).toBeLessThanOrEqual(CLIENT_CODE_BUDGET_BYTES);
  });
});

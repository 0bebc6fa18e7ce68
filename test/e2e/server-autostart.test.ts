/**
 * The server a client command starts when none runs: several commands started at the same
 * moment on a fresh data directory all use the one server that wins the data directory's lock
 * (the others' servers exit with the lock's exit code and their commands wait for the winner),
 * and a zombie (a process that exited but was not reaped) holds no lock.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processExists } from '../../src/server/data-dir-lock.js';
import { createTestEnvironment, runCli, stopBackgroundServer, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';

let environment: TestEnvironment | undefined;
afterEach(async () => {
  if (environment) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
  environment = undefined;
});

describe('client commands that start the server', { timeout: 120_000 }, () => {
  it('run together on a fresh data directory: every one of them completes on the one server that started', async () => {
    environment = await createTestEnvironment('responses:\n  - text: "one"\n  - text: "two"\n  - text: "three"\n  - text: "four"\n');
    const env = environment;
    const results = await Promise.all([1, 2, 3, 4].map((n) => runCli(['exec', `prompt ${n}`], { env: env.env, cwd: env.workDir })));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(results.map((result) => result.stdout.trim()).sort()).toEqual(['four', 'one', 'three', 'two']);
    const status = await runCli(['server', 'status'], { env: env.env });
    expect(status.stdout).toMatch(/pid \d+/);
  });
});

describe('a server that cannot start', { timeout: 120_000 }, () => {
  it('is reported with every problem it names, not only the last line of its log', async () => {
    environment = await createTestEnvironment('responses:\n  - text: "never"\n');
    writeFileSync(path.join(environment.paths.configDir, 'providers.yaml'), 'providers:\n  mock: { kind: openai\n');
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  coder:\n    maxSteps: "lots"\n');
    const result = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the runtime server did not start');
    expect(result.stderr).toContain('providers.yaml');
    expect(result.stderr).toContain('agents.yaml');
    expect(result.stderr).toContain('maxSteps');
  });
});

describe('processExists', () => {
  it('takes a zombie (exited, not reaped) for gone', async () => {
    // sh starts a child that exits a moment later, after sh has become `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let output = '';
    parent.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await until(() => /^\d+\n/.test(output), 5_000, 'the child pid');
      const zombie = Number(output.trim());
      await until(() => readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z '), 5_000, 'the child to become a zombie');
      expect(processExists(zombie)).toBe(false);
      expect(processExists(parent.pid as number)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

/**
 * What `openvaala exec` shows while a turn runs (live tool output, retries, reasoning) and how
 * it answers Ctrl-C: SIGINT sent to the real exec process, and a real terminal (node-pty) for
 * the approval question.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { createTestEnvironment, runCli, spawnCli, startServe, stopBackgroundServer, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;

afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  if (environment) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
  environment = undefined;
});

async function lastTurnStatus(env: NodeJS.ProcessEnv): Promise<string | null | undefined> {
  const listed = await runCli(['conversations', '--json'], { env });
  return (JSON.parse(listed.stdout) as { lastTurnStatus: string | null }[])[0]?.lastTurnStatus;
}

describe('exec progress', { timeout: 120_000 }, () => {
  it('shows tool output while the command still runs, and the tail of long output', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo first-line; while [ ! -e go ]; do sleep 0.05; done; echo after-the-wait" } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "for i in $(seq 1 40); do echo line-$i; done" } }]
  - text: "done"
`);
    serve = await startServe(environment);
    const exec = spawnCli(['exec', 'run things'], { env: environment.env, cwd: environment.workDir });
    await until(() => exec.stdout().includes('│ first-line'), 30_000, 'the first line of output');
    // The command waits for the file written below: its later output and its end are not there yet.
    expect(exec.stdout()).not.toContain('│ after-the-wait');
    expect(exec.stdout()).not.toContain('✓ exec_command');
    writeFileSync(path.join(environment.workDir, 'go'), '');
    const result = await exec.done;
    expect(result.stdout).toContain('│ after-the-wait');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('│ line-1\n');
    expect(result.stdout).toContain('│ line-12\n');
    expect(result.stdout).not.toContain('│ line-20\n');
    expect(result.stdout).toMatch(/│ … \d+ lines not shown/);
    expect(result.stdout).toContain('│ line-40\n');
  });

  it('says when and why a model call is retried, and shows reasoning summaries', async () => {
    environment = await createTestEnvironment(`
responses:
  - error: { status: 429, message: "slow down please", retryAfterSeconds: 1 }
  - reasoning: "Considering the options carefully."
    text: "Answer after the retry."
`);
    serve = await startServe(environment);
    const result = await runCli(['exec', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('retrying in 1 s: HTTP 429 slow down please (retry 1 of 4)');
    expect(result.stdout).toContain('∴ Considering the options carefully.\nAnswer after the retry.');
  });
});

describe('Ctrl-C in exec', { timeout: 120_000 }, () => {
  it('the first interrupts the turn, records it and says how to resume; the killed call is not a success', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo started; sleep 60" } }]
  - text: "never"
`);
    serve = await startServe(environment);
    const exec = spawnCli(['exec', 'wait a minute'], { env: environment.env, cwd: environment.workDir });
    await until(() => exec.stdout().includes('│ started'), 30_000, 'the command to start');
    exec.child.kill('SIGINT');
    const result = await exec.done;
    expect(result.code).toBe(2);
    expect(result.stdout).not.toContain('✓ exec_command');
    expect(result.stdout).toMatch(/■ exec_command .*interrupted/);
    expect(result.stderr).toContain('turn interrupted');
    expect(result.stderr).toMatch(/openvaala exec --resume conv_\w+ /);
    expect(await lastTurnStatus(environment.env)).toBe('interrupted');
  });

  it('SIGTERM (what `timeout` sends) interrupts the turn as Ctrl-C does, and says how to resume', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo started; sleep 60" } }]
  - text: "never"
`);
    serve = await startServe(environment);
    const exec = spawnCli(['exec', 'wait a minute'], { env: environment.env, cwd: environment.workDir });
    await until(() => exec.stdout().includes('│ started'), 30_000, 'the command to start');
    exec.child.kill('SIGTERM');
    const result = await exec.done;
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('interrupting the turn');
    expect(result.stderr).toMatch(/openvaala exec --resume conv_\w+ /);
    expect(await lastTurnStatus(environment.env)).toBe('interrupted');
  });

  it('a second leaves at once', async () => {
    // The command ignores SIGTERM, so the interruption lasts until the executor's SIGKILL.
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "trap '' TERM; echo started; sleep 60" } }]
  - text: "never"
`);
    serve = await startServe(environment);
    const exec = spawnCli(['exec', 'wait a minute'], { env: environment.env, cwd: environment.workDir });
    await until(() => exec.stdout().includes('│ started'), 30_000, 'the command to start');
    exec.child.kill('SIGINT');
    await until(() => exec.stderr().includes('interrupting the turn'), 10_000, 'the first Ctrl-C to be taken');
    expect(exec.child.exitCode).toBeNull();
    exec.child.kill('SIGINT');
    const result = await exec.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('left at once');
    expect(result.stderr).toMatch(/--resume conv_\w+/);
    // The server still ends the turn as interrupted.
    let status: string | null | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (status = await lastTurnStatus(environment.env)) !== 'interrupted') await new Promise((resolve) => setTimeout(resolve, 200));
    expect(status).toBe('interrupted');
  });

  it('at an approval question on a terminal, denies the call and interrupts the turn', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch asked.txt" } }]
  - text: "should not be asked for"
`);
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: ask } }\n');
    serve = await startServe(environment);
    const terminal = spawnPty(process.execPath, [CLI_EXECUTABLE, 'exec', 'make a file'], { cwd: environment.workDir, env: environment.env as Record<string, string>, cols: 200, rows: 40 });
    let screen = '';
    terminal.onData((data) => (screen += data));
    const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
    await until(() => screen.includes('[n]o'), 30_000, 'the approval question');
    expect(screen).toContain('[p]refix: commands starting with "touch"');
    process.kill(terminal.pid, 'SIGINT');
    expect(await exited).toBe(2);
    expect(screen).toContain('turn interrupted');
    expect(screen).not.toContain('✓ exec_command');
    expect(existsSync(path.join(environment.workDir, 'asked.txt'))).toBe(false);
    expect(environment.mock.requests).toHaveLength(1);
  });
});

/**
 * What `openvaala exec` sends as its prompt when stdin is piped, a terminal, empty, or an open
 * pipe nothing is written to: real processes against a real server and the mock provider. The
 * prompt sent is read from `--json`'s `user_message` item, exactly as it was stored.
 */
import { spawn } from 'node:child_process';
import { spawn as spawnPty } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { createTestEnvironment, runCli, startServe, stopBackgroundServer, type CliResult, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';

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

/** The text of the `user_message` item a `--json` run printed. @throws Error when there is none */
function sentPrompt(stdout: string): string {
  for (const line of stdout.trim().split('\n')) {
    const event = JSON.parse(line) as { method: string; params: { item?: { kind: string; content: { type: string; text?: string }[] } } };
    if (event.method === 'item/completed' && event.params.item?.kind === 'user_message') return event.params.item.content.map((part) => part.text ?? '').join('');
  }
  throw new Error(`no user_message in:\n${stdout}`);
}

const NOTHING_ON_STDIN = 'nothing came on stdin within 3 s';

async function answering(count: number): Promise<TestEnvironment> {
  const created = await createTestEnvironment(`responses:\n${'  - text: "answered"\n'.repeat(count)}`);
  environment = created;
  serve = await startServe(created);
  return created;
}

describe('exec with a prompt argument and stdin', { timeout: 60_000 }, () => {
  it('appends piped stdin to the prompt in a <stdin> block, as `git diff | openvaala exec "review this"` expects', async () => {
    const env = await answering(2);
    const diff = await runCli(['exec', '--json', 'review this'], { env: env.env, cwd: env.workDir, input: 'diff --git a/x b/x\n+added line\n' });
    expect(diff.stderr).not.toContain(NOTHING_ON_STDIN);
    expect(diff.code).toBe(0);
    expect(sentPrompt(diff.stdout)).toBe('review this\n\n<stdin>\ndiff --git a/x b/x\n+added line\n</stdin>');
    // Input without a final newline still gets its closing tag on a line of its own.
    const noNewline = await runCli(['exec', '--json', 'summarise'], { env: env.env, cwd: env.workDir, input: 'one line' });
    expect(noNewline.code).toBe(0);
    expect(sentPrompt(noNewline.stdout)).toBe('summarise\n\n<stdin>\none line\n</stdin>');
  });

  it('sends the prompt alone when stdin is empty or only blank, without waiting or a warning', async () => {
    const env = await answering(2);
    for (const input of ['', ' \n\n']) {
      const result = await runCli(['exec', '--json', 'just the prompt'], { env: env.env, cwd: env.workDir, input });
      expect(result.code, JSON.stringify(input)).toBe(0);
      expect(sentPrompt(result.stdout)).toBe('just the prompt');
      expect(result.stderr).not.toContain(NOTHING_ON_STDIN);
    }
  });

  it('does not hang on a stdin pipe that stays open with nothing written: after 3 s it goes on with the prompt alone and says so', async () => {
    const env = await answering(1);
    const child = spawn(process.execPath, [CLI_EXECUTABLE, 'exec', '--json', 'no input coming'], { env: env.env, cwd: env.workDir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = Date.now();
    // stdin is never written to nor closed while exec runs: the writer of a pipe that never ends.
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`exec still running after 30 s with stdin open\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, 30_000);
      child.once('close', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    child.stdin.destroy();
    expect(stderr).toContain(`openvaala: exec: ${NOTHING_ON_STDIN}; going on with the prompt alone (redirect stdin from /dev/null to skip the wait)`);
    expect(code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(sentPrompt(stdout)).toBe('no input coming');
  });

  it('does not read a terminal: the prompt alone is sent at once', async () => {
    const env = await answering(1);
    const terminal = spawnPty(process.execPath, [CLI_EXECUTABLE, 'exec', 'from a terminal'], { cwd: env.workDir, env: env.env as Record<string, string>, cols: 200, rows: 40 });
    let screen = '';
    terminal.onData((data) => (screen += data));
    const exitCode = await new Promise<number>((resolve) => terminal.onExit(({ exitCode: code }) => resolve(code)));
    expect(screen).toContain('answered');
    expect(screen).not.toContain(NOTHING_ON_STDIN);
    expect(exitCode).toBe(0);
    const listed = await runCli(['conversations', 'show', 'last', '--json'], { env: env.env });
    expect(listed.stdout).toContain('"text":"from a terminal"');
    expect(listed.stdout).not.toContain('<stdin>');
  });
});

describe('exec with - as the prompt', { timeout: 60_000 }, () => {
  it('reads the whole prompt from stdin, as with no prompt argument', async () => {
    const env = await answering(2);
    const dash = await runCli(['exec', '--json', '-'], { env: env.env, cwd: env.workDir, input: 'the prompt from stdin\n' });
    expect(dash.code).toBe(0);
    expect(sentPrompt(dash.stdout)).toBe('the prompt from stdin\n');
    const none = await runCli(['exec', '--json'], { env: env.env, cwd: env.workDir, input: 'no argument at all' });
    expect(none.code).toBe(0);
    expect(sentPrompt(none.stdout)).toBe('no argument at all');
  });

  it('refuses an empty stdin with a usage error', async () => {
    environment = await createTestEnvironment(`responses: []\n`);
    const results: CliResult[] = [await runCli(['exec', '-'], { env: environment.env, cwd: environment.workDir, input: '' }), await runCli(['exec', '-'], { env: environment.env, cwd: environment.workDir, input: '  \n' })];
    for (const result of results) {
      expect(result.code).toBe(64);
      expect(result.stderr).toContain('openvaala: exec: give a prompt as an argument or on stdin');
    }
  });
});

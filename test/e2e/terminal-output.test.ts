/**
 * What a person reads from the command line never carries escape sequences or control
 * characters from elsewhere: a model's answer, a command's output and a conversation's title may
 * hold sequences that set the terminal's title, clear the screen or hide a line behind a carriage
 * return. `exec`, `conversations` and `conversations show` print their text without them (the
 * text itself stays); `--json` output is JSON, whose escapes are text; a value quoted in an error
 * is shown escaped.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { createTestEnvironment, runCli, stopBackgroundServer, type TestEnvironment } from '../helpers/environment.js';

/** ESC, BEL, CR, and the one-character CSI of the C1 range. */
// Control characters are what this pattern looks for.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u001b\u0007\r\u009b]/;

let environment: TestEnvironment | undefined;
afterEach(async () => {
  if (environment) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
  environment = undefined;
});

describe('text from elsewhere on the terminal', { timeout: 120_000 }, () => {
  it('is printed by exec, conversations and conversations show without its escape sequences', async () => {
    environment = await createTestEnvironment(
      [
        'responses:',
        '  - text: "running it"',
        '    toolCalls:',
        `      - { name: exec_command, arguments: { command: "printf 'out\\\\033]0;pwned\\\\007put\\\\033[2J hidden\\\\rshown\\\\n'" } }`,
        '  - text: "Answer \\e]0;HACKED\\a with \\e[2J\\e[Hclear and \\x9b31mred\\rvisible"',
      ].join('\n') + '\n',
    );
    const prompt = 'title \u001b]0;T\u0007 with escape';
    const run = await runCli(['exec', prompt], { env: environment.env, cwd: environment.workDir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain('Answer ');
    expect(run.stdout).toContain('visible');
    expect(run.stdout).toContain('output');
    expect(run.stdout).toContain('shown');

    const listed = await runCli(['conversations'], { env: environment.env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('title');
    expect(listed.stdout).not.toMatch(RAW_CONTROL);

    const shown = await runCli(['conversations', 'show', 'last'], { env: environment.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('visible');
    expect(shown.stdout).not.toMatch(RAW_CONTROL);

    // JSON keeps the text whole: its escapes are text, which a program reads back as it was.
    const json = await runCli(['conversations', 'show', 'last', '--json'], { env: environment.env });
    // Control characters are what this pattern looks for.
    // eslint-disable-next-line no-control-regex
    expect(json.stdout).not.toMatch(/[\u001b\u0007\r]/);
    expect(json.stdout).toContain('\\u001b]0;HACKED\\u0007');

    // The reader goes away before the output is written (`… | head -c 10`): the command ends
    // quietly as a command killed by SIGPIPE does (141), not with a stack trace for EPIPE.
    const child = spawn(process.execPath, [CLI_EXECUTABLE, 'conversations', 'show', 'last'], { env: environment.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(141);
  });

  it('shows a value quoted in an error with its control characters escaped', async () => {
    environment = await createTestEnvironment('responses: []\n');
    const result = await runCli(['exec', '--model', 'evil\u001b]0;X\u0007/m', 'hi'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).not.toMatch(RAW_CONTROL);
    expect(result.stderr).toContain('evil\\u001b]0;X\\u0007');
  });
});

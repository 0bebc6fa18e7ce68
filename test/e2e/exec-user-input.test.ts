/**
 * `openvaala exec` answering the agent's questions on a real terminal (node-pty):
 * `request_user_input` with numbered choices, the approval question's "no, and interrupt"
 * answer with the command and its directory shown, the approvals of one step asked one at a
 * time with the turn's output kept out of them, and a run without a terminal, where the tool
 * result tells the model that no user can answer.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { createTestEnvironment, runCli, startServe, stopBackgroundServer, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
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

const QUESTION = `
responses:
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which database?", choices: ["sqlite", "postgres"], allow_free_text: false } }]
  - text: "going with the answer"
`;

function onTerminal(args: string[], env: TestEnvironment) {
  const terminal = spawnPty(process.execPath, [CLI_EXECUTABLE, ...args], { cwd: env.workDir, env: env.env as Record<string, string>, cols: 200, rows: 40 });
  let screen = '';
  terminal.onData((data) => (screen += data));
  const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
  return { terminal, screen: () => screen, exited };
}

describe('exec asks the user', { timeout: 120_000 }, () => {
  it('shows numbered choices on a terminal, asks again after a wrong answer, and sends the chosen one', async () => {
    environment = await createTestEnvironment(QUESTION);
    serve = await startServe(environment);
    const run = onTerminal(['exec', 'set up storage'], environment);
    await until(() => run.screen().includes('a number: '), 30_000, 'the question');
    expect(run.screen()).toContain('Which database?');
    expect(run.screen()).toContain('1. sqlite');
    expect(run.screen()).toContain('2. postgres');
    run.terminal.write('mysql\r');
    await until(() => run.screen().includes('answer with a number from 1 to 2'), 10_000, 'the question asked again');
    run.terminal.write('2\r');
    expect(await run.exited).toBe(0);
    const sentBack = JSON.stringify(environment.mock.requests[1]?.body);
    // The answer is the tool result, as the model reads it.
    expect(sentBack).toContain('"type":"function_call_output","call_id":"call_1_0","output":"postgres"');
  });

  it('without a terminal, tells the model that no user can answer', async () => {
    environment = await createTestEnvironment(QUESTION);
    serve = await startServe(environment);
    const result = await runCli(['exec', 'set up storage'], { env: environment.env, cwd: environment.workDir });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('question from the agent: Which database?');
    expect(JSON.stringify(environment.mock.requests[1]?.body)).toContain('no user can answer (exec runs without a terminal, so no user can answer)');
  });

  it('at an approval question, shows the command and its directory, and "x" denies the call and interrupts the turn', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch asked.txt # \\e]0;pwned\\a" } }]
  - text: "should not be asked for"
`);
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: ask } }\n');
    serve = await startServe(environment);
    const run = onTerminal(['exec', 'make a file'], environment);
    await until(() => run.screen().includes('[x] no, and interrupt the turn'), 30_000, 'the approval question');
    expect(run.screen()).toContain('$ touch asked.txt');
    expect(run.screen()).toContain('(a letter, then Enter)');
    // The command's text reaches the terminal without its escape sequence.
    expect(run.screen()).not.toContain('\u001b]0;pwned');
    expect(run.screen()).toMatch(/in \/\S+/);
    run.terminal.write('x\r');
    expect(await run.exited).toBe(2);
    expect(run.screen()).toContain('turn interrupted');
    expect(existsSync(path.join(environment.workDir, 'asked.txt'))).toBe(false);
    expect(environment.mock.requests).toHaveLength(1);
  });

  it('asks the approvals of one step one at a time: one answer answers one question, and nothing is written into a question', async () => {
    environment = await createTestEnvironment(`
responses:
  - text: "I will make two files"
    toolCalls:
      - { name: exec_command, arguments: { command: "touch one.txt" } }
      - { name: exec_command, arguments: { command: "touch two.txt" } }
  - text: "done"
`);
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: ask } }\n');
    serve = await startServe(environment);
    const run = onTerminal(['exec', 'make two files'], environment);
    const questions = () => run.screen().split('Allow exec_command').length - 1;
    await until(() => questions() === 1, 30_000, 'the first approval question');
    // The second call's question waits for the first answer instead of being asked over it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(questions()).toBe(1);
    expect(run.screen()).not.toContain('"touch two.txt"}');
    run.terminal.write('y\r');
    await until(() => questions() === 2, 30_000, 'the second approval question');
    // Nothing was written between the first question and the answer typed to it (the output
    // that came meanwhile waited), and the second call's header is on a line of its own.
    // eslint-disable-next-line no-control-regex
    expect(run.screen()).toMatch(/\(a letter, then Enter\): (\u001b\[\d+G)?y\r/);
    expect(run.screen()).toMatch(/(^|\n)▸ exec_command touch two\.txt\r\n/);
    run.terminal.write('n\r');
    expect(await run.exited).toBe(0);
    expect(existsSync(path.join(environment.workDir, 'one.txt'))).toBe(true);
    expect(existsSync(path.join(environment.workDir, 'two.txt'))).toBe(false);
  });
});

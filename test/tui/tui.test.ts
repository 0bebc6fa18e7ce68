/**
 * The terminal UI in a real pseudo-terminal (tmux) against a real runtime server and the mock
 * provider: prompting and streaming, a command's output after an approval, queueing and
 * steering while a turn runs (with a protocol client steering too and watching the same
 * conversation), interrupting, leaving while a turn runs and reattaching to it from the
 * conversation picker, forking, and answering a question of the agent in place; 80×24
 * without colours and a resize.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { TmuxTerminal } from '../helpers/tmux.js';
import { saveTerminalScreenshot } from '../helpers/terminal-screenshot.js';

let harness: InProcessServer | undefined;
const terminals: TmuxTerminal[] = [];

afterEach(async () => {
  for (const terminal of terminals.splice(0)) await terminal.kill();
  await harness?.stop();
  harness = undefined;
});

/** A server with the mock scripted by `script`, and a protocol client named `web-test` (as a web page would be). */
async function setUp(script: string): Promise<InProcessServer> {
  harness = await startInProcessServer(script, {
    clientName: 'web-test',
    // exec_command asks; the other tools run without asking.
    beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: allow, rules: [{ tool: exec_command, decision: ask }] } }\n'),
  });
  return harness;
}

async function openTui(env: TestEnvironment, args: string[] = [], size = { columns: 100, rows: 30 }, extraEnv: NodeJS.ProcessEnv = { NO_COLOR: '' }): Promise<TmuxTerminal> {
  const terminal = await TmuxTerminal.start([process.execPath, CLI_EXECUTABLE, ...args], { env: { ...env.env, TERM: 'tmux-256color', ...extraEnv }, cwd: env.workDir, ...size });
  terminals.push(terminal);
  await terminal.waitFor('Ask for anything');
  return terminal;
}

describe('terminal UI', { timeout: 60_000 }, () => {
  it('streams an answer, runs an approved command, queues and steers, shows a web client steer, interrupts', async () => {
    const { environment: env, client: web, events } = await setUp(`
responses:
  - reasoningDeltas: ["Reading the request.\\nThen answering it."]
    deltas: ["Streaming ", "**answer** ", "with code:\\n\\n\`\`\`ts\\nconst answer = 42;\\n\`\`\`\\n"]
    holds: [{ afterDeltas: 3, gate: first-answer }]
  - toolCalls: [{ name: exec_command, arguments: { command: "echo tui-command-output" } }]
  - text: "The command printed its line."
  - deltas: ["Working ", "on it."]
    toolCalls: [{ name: list_dir, arguments: { path: "." } }]
    holds: [{ afterDeltas: 1, gate: working }]
  - text: "Steered answer."
  - text: "Queued prompt answered."
  - deltas: ["Long ", "answer that never ends"]
    holds: [{ afterDeltas: 1, gate: never }]
`);
    const tui = await openTui(env);
    await tui.type('explain the answer');
    await tui.keys('Enter');
    // Streamed text shows while the model's stream is held in the middle.
    await tui.waitFor('Streaming answer');
    expect(await tui.capture()).not.toContain('const answer');
    expect(await tui.capture()).toContain('∴ Reading the request.');
    env.mock.release('first-answer');
    const answered = await tui.waitFor('turn completed');
    expect(answered).toContain('const answer = 42;');
    expect(answered).toContain('Streaming answer with code:');

    // The web client subscribes to the same conversation.
    const [summary] = (await web.request('conversation/list', {})).conversations;
    const conversationId = summary?.id as string;
    await web.request('conversation/subscribe', { conversationId });

    await tui.type('run the command');
    await tui.keys('Enter');
    const approval = await tui.waitFor('Approval needed');
    expect(approval).toContain('$ echo tui-command-output');
    expect(approval).toContain('1. Allow once');
    expect(approval).toContain('Deny and interrupt the turn');
    await tui.keys('1');
    const ran = await tui.waitFor('The command printed its line.');
    expect(ran).toContain('│ tui-command-output');
    expect(ran).toMatch(/exec_command: allow once \(client:openvaala-tui\)/);
    await saveTerminalScreenshot(await tui.capture(true));

    // While a turn runs: Enter queues, Ctrl+S steers; the web client steers too.
    await tui.type('start working');
    await tui.keys('Enter');
    await tui.waitFor('Working');
    await tui.type('queued prompt');
    await tui.keys('Enter');
    await tui.waitFor('⧗ queued: queued prompt');
    // Text and Ctrl+S in one write, as a terminal over a slow link sends what was typed meanwhile.
    await tui.keys('steer this way', 'C-s');
    await tui.waitFor('steering: the running turn reads it');
    await web.request('session/input', { conversationId, input: 'steer from the web client', mode: 'steer' });
    env.mock.release('working');
    const steered = await tui.waitFor('Queued prompt answered.');
    expect(steered).toContain('steer › steer this way');
    expect(steered).toContain('steer › steer from the web client');
    expect(steered).toContain('from web-test');
    expect(steered).toContain('Steered answer.');
    expect(steered.indexOf('Steered answer.')).toBeLessThan(steered.indexOf('› queued prompt'));
    // The web client saw the TUI's steer and the answers live.
    const completed = events.flatMap((event) => (event.method === 'item/completed' ? [event.params.item] : []));
    expect(completed.some((item) => item.kind === 'user_message' && item.mode === 'steer' && item.author?.clientName === 'openvaala-tui')).toBe(true);
    expect(completed.some((item) => item.kind === 'assistant_message' && item.text === 'Queued prompt answered.')).toBe(true);

    // Esc interrupts the running turn.
    await tui.type('go on forever');
    await tui.keys('Enter');
    await tui.waitFor('Long');
    await tui.keys('Escape');
    await tui.waitFor('turn interrupted');
    // The notice of the interruption in progress never comes after the turn's end.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await tui.capture();
    if (after.includes('interrupting the turn')) expect(after.lastIndexOf('interrupting the turn')).toBeLessThan(after.lastIndexOf('turn interrupted'));
    const turns = (await web.request('conversation/get', { conversationId })).turns;
    expect(turns.at(-1)?.status).toBe('interrupted');
  });

  it('leaving keeps the turn running; the picker reattaches to it live; fork continues in a copy; a question is answered in place', async () => {
    const { environment: env, client: web } = await setUp(`
responses:
  - deltas: ["Still ", "streaming ", "after you left."]
    holds: [{ afterDeltas: 1, gate: left }]
  - text: "Answer in the fork."
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which colour should the button be?", choices: ["red", "blue"] } }]
  - text: "Blue it is."
`);
    // 80×24 without colours, then resized.
    const first = await openTui(env, [], { columns: 80, rows: 24 }, { NO_COLOR: '1' });
    await first.type('a long job');
    await first.keys('Enter');
    const small = await first.waitFor('Still');
    expect(small.split('\n').every((line) => line.length <= 80)).toBe(true);
    // eslint-disable-next-line no-control-regex
    expect(await first.capture(true)).not.toMatch(/\u001b\[[0-9;]*(3[0-7]|9[0-7]|38;)/);
    await first.resize(120, 40);
    await first.waitFor((screen) => screen.split('\n').length >= 40 && /Enter queue · Ctrl\+S steer/.test(screen.split('\n').slice(-4).join('\n')));
    await first.keys('C-c');
    await first.waitFor('[exited 0]');
    const [summary] = (await web.request('conversation/list', {})).conversations;
    expect(summary?.running).toBe(true);

    const second = await openTui(env, ['tui']);
    await second.type('/resume');
    await second.keys('Enter');
    const picker = await second.waitFor('● running');
    expect(picker).toContain('a long job');
    await second.keys('Enter');
    await second.waitFor('› a long job');
    env.mock.release('left');
    await second.waitFor('Still streaming after you left.');
    await second.waitFor('turn completed');

    await second.type('/fork');
    await second.keys('Enter');
    const forked = await second.waitFor(/forked conv_\w+ into conv_\w+/);
    const forkId = /into (conv_\w+)/.exec(forked)?.[1] as string;
    await second.type('continue here');
    await second.keys('Enter');
    await second.waitFor('Answer in the fork.');
    const fork = await web.request('conversation/get', { conversationId: forkId });
    expect(fork.conversation.forkedFrom?.conversationId).toBe(summary?.id);
    expect(fork.turns.at(-1)?.status).toBe('completed');
    // A question of the agent is answered in place.
    await second.type('pick a colour');
    await second.keys('Enter');
    // The call's own line quotes the question as soon as it starts; the question itself comes after, with its choices.
    const question = await second.waitFor('2. blue');
    expect(question).toContain('Which colour should the button be?');
    await second.keys('2', 'Enter');
    await second.waitFor('Blue it is.');
    const answered = (await web.request('items/list', { conversationId: forkId })).items.find((stored) => stored.item.kind === 'tool_call' && stored.item.toolName === 'request_user_input');
    expect(answered?.item.kind === 'tool_call' && answered.item.output).toContain('blue');
    // The source conversation did not get the prompt sent in the fork.
    const source = await web.request('items/list', { conversationId: summary?.id as string });
    expect(source.items.some((stored) => stored.item.kind === 'user_message' && JSON.stringify(stored.item.content).includes('continue here'))).toBe(false);
  });
});

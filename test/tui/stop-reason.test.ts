/**
 * The terminal UI's line at a turn's end says when the answer may be incomplete: cut at the
 * model's output limit (`max_tokens`) or stopped by the provider's content filter (`refusal`).
 * A normal finish says nothing more. In a real pseudo-terminal (tmux) against a real server and
 * the mock provider.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { TmuxTerminal } from '../helpers/tmux.js';

let harness: InProcessServer | undefined;
let terminal: TmuxTerminal | undefined;

afterEach(async () => {
  await terminal?.kill();
  terminal = undefined;
  await harness?.stop();
  harness = undefined;
});

const CUT = "the answer was cut at the model's output limit (max_tokens) and may be incomplete";
const FILTERED = "the provider's content filter stopped the answer (refusal); it may be incomplete";

describe('terminal UI: a turn that ended other than by a normal finish', { timeout: 60_000 }, () => {
  it("says under the turn's end line why the answer may be incomplete", async () => {
    harness = await startInProcessServer(`responses:
  - text: "The report starts here and"
    incompleteReason: max_output_tokens
  - text: "A whole answer."
  - text: "I cannot"
    incompleteReason: content_filter
`);
    const env = harness.environment;
    terminal = await TmuxTerminal.start([process.execPath, CLI_EXECUTABLE], { env: { ...env.env, TERM: 'tmux-256color', NO_COLOR: '' }, cwd: env.workDir, columns: 140, rows: 40 });
    await terminal.waitFor('Ask for anything', 30_000);

    await terminal.type('write the long report');
    await terminal.keys('Enter');
    const cut = await terminal.waitFor(CUT, 30_000);
    const lines = cut.split('\n').map((line) => line.trim());
    expect(lines[lines.indexOf(CUT) - 1]).toMatch(/^turn completed · 1 model call · /);

    await terminal.type('say it whole');
    await terminal.keys('Enter');
    // A normal finish: its end line is followed by nothing more.
    const whole = await terminal.waitFor((screen) => screen.includes('A whole answer.') && screen.match(/turn completed/g)?.length === 2, 30_000);
    const after = whole.split('\n').map((line) => line.trim());
    const secondEnd = after.findLastIndex((line) => line.startsWith('turn completed · '));
    expect(after[secondEnd + 1]).toBe('');
    expect(whole.split(CUT)).toHaveLength(2);

    await terminal.type('tell me');
    await terminal.keys('Enter');
    await terminal.waitFor(FILTERED, 30_000);
  });
});

/**
 * The terminal UI in a real pseudo-terminal (tmux) against a real server and the mock
 * provider, where the transcript changes under the reader: `/rewind` leaves exactly the kept
 * turn on screen (no line of the dropped turn, its command or its end), and a failed command
 * is marked failed with its exit code.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { TmuxTerminal } from '../helpers/tmux.js';

let harness: InProcessServer | undefined;
const terminals: TmuxTerminal[] = [];

afterEach(async () => {
  for (const terminal of terminals.splice(0)) await terminal.kill();
  await harness?.stop();
  harness = undefined;
});

describe('terminal UI: history changes', { timeout: 60_000 }, () => {
  it('shows only the kept turn after /rewind; a command not found is marked failed', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "FIRST-ANSWER here."
  - toolCalls: [{ name: exec_command, arguments: { command: "echo SECOND-OUTPUT; no-such-command-4c1e" } }]
  - text: "SECOND-ANSWER here."
`,
      { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  open: { default: true, approvals: { default: allow } }\n') },
    );
    const env = harness.environment;
    const tui = await TmuxTerminal.start([process.execPath, CLI_EXECUTABLE], { env: { ...env.env, TERM: 'tmux-256color', NO_COLOR: '1' }, cwd: env.workDir, columns: 100, rows: 30 });
    terminals.push(tui);
    await tui.waitFor('Ask for anything');
    await tui.type('first prompt');
    await tui.keys('Enter');
    await tui.waitFor('FIRST-ANSWER here.');
    await tui.type('second prompt');
    await tui.keys('Enter');
    const second = await tui.waitFor((screen) => screen.includes('SECOND-ANSWER here.') && screen.match(/turn completed/g)?.length === 2);
    expect(second).toMatch(/✗ failed · exit 127 · /);
    expect(second).not.toMatch(/✓ exit 127/);

    await tui.type('/rewind');
    await tui.keys('Enter');
    await tui.waitFor('Rewind to before');
    await tui.keys('Enter');
    const rewound = await tui.waitFor('rewound: 3 items dropped');
    // The rewound prompt is back in the composer (cleared here, so only the transcript can show it).
    expect(rewound.match(/› second prompt/g)).toHaveLength(1);
    await tui.keys('C-u');
    const after = await tui.waitFor((screen) => !screen.includes('second prompt'));
    for (const gone of ['SECOND-OUTPUT', 'exit 127', 'SECOND-ANSWER']) expect(after).not.toContain(gone);
    expect(after).toContain('› first prompt');
    expect(after).toContain('FIRST-ANSWER here.');
    expect(after.match(/turn completed/g)).toHaveLength(1);
  });
});

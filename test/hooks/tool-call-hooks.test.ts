/**
 * `pre_tool_use` and `post_tool_use` hooks around several calls of one step, in a real
 * in-process server with real hook scripts: every way a `pre_tool_use` hook blocks (exit 2,
 * `decision: "block"`, `decision: "deny"`) keeps the call from running and tells the model
 * why, as docs/hooks-skills-instructions.md says; and each `hook_run` names the call it ran
 * for, so exec and `conversations show` can say which call a hook blocked when several run.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTranscript } from '../../src/cli/conversations.js';
import { HumanRenderer } from '../../src/cli/exec-output.js';
import type { ItemOf } from '../../src/protocol/index.js';
import { capturedStreams } from '../cli/exec-harness.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const GUARD = `input=$(cat)
case "$input" in
  *'rm -rf'*) echo "rm -rf is not allowed" >&2; exit 2 ;;
  *curl*) printf '%s' '{"decision":"block","reason":"no network here"}' ;;
  *sudo*) printf '%s' '{"decision":"deny","reason":"no root here"}' ;;
esac
exit 0`;

describe('pre_tool_use hooks around several calls of one step', { timeout: 30_000 }, () => {
  it('keep a call from running by exit 2, decision block or decision deny; each run names its call, and exec and conversations show say which', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: "rm -rf victim" } }
      - { name: exec_command, arguments: { command: "touch curl-ran # curl" } }
      - { name: exec_command, arguments: { command: "touch sudo-ran # sudo" } }
      - { name: exec_command, arguments: { command: "touch echo-ran" } }
  - text: "understood"
`,
      {
        beforeStart: (environment) => {
          const guard = path.join(environment.root, 'guard.sh');
          writeFileSync(guard, `#!/usr/bin/env bash\n${GUARD}\n`);
          chmodSync(guard, 0o755);
          writeFileSync(path.join(environment.paths.configDir, 'hooks.yaml'), `hooks:\n  pre_tool_use:\n    - command: ${guard}\n  post_tool_use:\n    - command: cat > /dev/null\n`);
          mkdirSync(path.join(environment.workDir, 'victim'));
        },
      },
    );
    const { workDir } = harness.environment;
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'clean up' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');

    // What the documentation promises: none of the three runs, and the model reads each reason.
    expect(existsSync(path.join(workDir, 'victim'))).toBe(true);
    expect(['curl-ran', 'sudo-ran'].filter((file) => existsSync(path.join(workDir, file)))).toEqual([]);
    expect(existsSync(path.join(workDir, 'echo-ran'))).toBe(true);
    const items = harness.completedItems();
    const calls = items.filter((item): item is ItemOf<'tool_call'> => item.kind === 'tool_call');
    const byCommand = new Map(calls.map((call) => [(call.arguments as { command: string }).command, call]));
    expect(byCommand.get('rm -rf victim')).toMatchObject({ status: 'failed', isError: true, output: 'exec_command: not run: blocked by a pre_tool_use hook: rm -rf is not allowed' });
    expect(byCommand.get('touch curl-ran # curl')).toMatchObject({ status: 'failed', isError: true, output: 'exec_command: not run: blocked by a pre_tool_use hook: no network here' });
    expect(byCommand.get('touch sudo-ran # sudo')).toMatchObject({ status: 'failed', isError: true, output: 'exec_command: not run: blocked by a pre_tool_use hook: no root here' });
    expect(byCommand.get('touch echo-ran')).toMatchObject({ status: 'completed', isError: false });
    const request = JSON.stringify(harness.environment.mock.requests[1]?.body);
    for (const reason of ['rm -rf is not allowed', 'no network here', 'no root here']) expect(request).toContain(`blocked by a pre_tool_use hook: ${reason}`);

    // Each run names the call it ran for; only the call that ran has a post_tool_use run.
    const runs = items.filter((item): item is ItemOf<'hook_run'> => item.kind === 'hook_run');
    const decisionOf = (command: string, event: string) => runs.filter((run) => run.event === event && run.callId === byCommand.get(command)?.callId).map((run) => [run.toolName, run.decision]);
    expect(decisionOf('rm -rf victim', 'pre_tool_use')).toEqual([['exec_command', 'block']]);
    expect(decisionOf('touch curl-ran # curl', 'pre_tool_use')).toEqual([['exec_command', 'block']]);
    expect(decisionOf('touch sudo-ran # sudo', 'pre_tool_use')).toEqual([['exec_command', 'deny']]);
    expect(decisionOf('touch echo-ran', 'pre_tool_use')).toEqual([['exec_command', 'continue']]);
    expect(decisionOf('touch echo-ran', 'post_tool_use')).toEqual([['exec_command', 'continue']]);
    expect(runs).toHaveLength(5);

    // exec: each block line names the call, as its header did, though four calls ran at once.
    const output = capturedStreams();
    const renderer = new HumanRenderer(output.streams, { sessionId: turn!.sessionId });
    for (const event of harness.events) renderer.render(event);
    renderer.endLine();
    const guard = path.join(harness.environment.root, 'guard.sh');
    const hookLines = output.stdout().split('\n').filter((line) => line.includes('hook pre_tool_use'));
    expect(hookLines.sort()).toEqual(
      [
        `  hook pre_tool_use "${guard}" on exec_command rm -rf victim: blocked the call`,
        `  hook pre_tool_use "${guard}" on exec_command touch curl-ran # curl: blocked the call`,
        `  hook pre_tool_use "${guard}" on exec_command touch sudo-ran # sudo: denied the call`,
      ].sort(),
    );

    // conversations show: every run, with its call.
    const transcript = formatTranscript(items.filter((item) => item.sessionId === turn!.sessionId));
    expect(transcript).toContain(`hook pre_tool_use on exec_command rm -rf victim: ${guard} exit 2 (block)`);
    expect(transcript).toContain(`hook pre_tool_use on exec_command touch sudo-ran # sudo: ${guard} exit 0 (deny)`);
    expect(transcript).toContain('hook post_tool_use on exec_command touch echo-ran: cat > /dev/null exit 0 (continue)');
  });
});

/**
 * What plain `openvaala exec` prints of a turn, run in the test process against a real
 * in-process server and the scripted mock model: only assistant answers read as the answer, a
 * turn that ends failed or interrupted says why, hook runs that failed or changed something
 * leave a line, and a tool call shows the arguments that ran.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { execAgainst, occurrences, writeHooks } from './exec-harness.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await harness?.stop();
  harness = undefined;
});

// 20,000-token window, compaction at 80 %: a 60,000-character tool result crosses it mid-turn.
const smallWindow = (baseURL: string) =>
  `providers:\n  mock:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { mock-model: { contextWindow: 20000 } }\ndefaultModel: mock/mock-model\n`;

describe('exec: only answers read as the answer', () => {
  it('shows a compaction as its one-line notice, never the summary text', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "head -c 60000 /dev/zero | tr '\\\\0' 'x'" } }]
    usage: { inputTokens: 3000, outputTokens: 10 }
  - text: "SUMMARY-7f3: the user wants the size of the big output."
    usage: { inputTokens: 18000, outputTokens: 40 }
  - text: "The output was 60000 characters."
    usage: { inputTokens: 3600, outputTokens: 10 }
`,
      { providersYaml: smallWindow },
    );
    const run = await execAgainst(harness, 'how big is the output?');
    expect(run.code, run.stderr).toBe(0);
    const conversationId = /conversation (conv_\w+)/.exec(run.stderr)?.[1] ?? '';
    const { items } = await harness.client.request('items/list', { conversationId });
    expect(items.map((stored) => stored.item.kind)).toContain('context_summary');
    expect(run.stdout + run.stderr).not.toContain('SUMMARY-7f3');
    expect(run.stdout).toMatch(/^⋯ earlier context compacted into a summary\b.*$/m);
    expect(run.stdout).toContain('The output was 60000 characters.');
  });
});

describe('exec: why a turn ended failed or interrupted', () => {
  it('prints the reason a user_prompt_submit hook refused the prompt, once, and does not offer to re-send it as it was', async () => {
    harness = await startInProcessServer(`responses:\n  - text: "never asked"\n`, {
      beforeStart: (environment) =>
        writeHooks(environment, 'hooks:\n  user_prompt_submit:\n    - command: $HOOKS/refuse.sh\n', {
          'refuse.sh': 'if grep -q FORBIDDEN; then echo "prompt contains FORBIDDEN" >&2; exit 2; fi\nexit 0',
        }),
    });
    const run = await execAgainst(harness, 'do the FORBIDDEN thing');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('turn failed');
    expect(run.stderr).toMatch(/the prompt was refused by the user_prompt_submit hook "[^"]*refuse\.sh": prompt contains FORBIDDEN/);
    expect(occurrences(run.stdout + run.stderr, 'prompt contains FORBIDDEN')).toBe(1);
    expect(run.stderr).not.toContain('continue it with');
    expect(run.stderr).toMatch(/not run.*another prompt.*openvaala exec --resume conv_\w+ "…"/);
    expect(harness.environment.mock.requests).toHaveLength(0);
  });

  it('prints a model error once', async () => {
    harness = await startInProcessServer(`responses:\n  - error: { status: 500, message: "the upstream model is on fire", retryAfterSeconds: 0 }\n    repeat: 5\n`);
    const run = await execAgainst(harness, 'hello');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: model mock/mock-model (HTTP 500): the upstream model is on fire');
    // Retries name the message too; the error itself is said once.
    expect(run.stderr.split('\n').filter((line) => line.includes('the upstream model is on fire') && !line.startsWith('retrying'))).toHaveLength(1);
    expect(run.stderr).toMatch(/continue it with: openvaala exec --resume conv_\w+ "…"/);
  });

  it('prints why a turn stopped at the step limit', async () => {
    harness = await startInProcessServer(`responses:\n  - toolCalls: [{ name: exec_command, arguments: { command: "echo hi" } }]\n  - text: "never"\n`, { limits: { maxStepsPerTurn: 1 } });
    const run = await execAgainst(harness, 'go');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('turn interrupted');
    expect(occurrences(run.stderr, 'step limit of 1 reached')).toBe(1);
  });
});

describe('exec: hook runs', () => {
  it('says when a hook timed out or failed, and nothing for one that ran and changed nothing', async () => {
    harness = await startInProcessServer(`responses:\n  - toolCalls: [{ name: exec_command, arguments: { command: "echo ran" } }]\n  - text: "done"\n`, {
      beforeStart: (environment) =>
        writeHooks(environment, 'hooks:\n  pre_tool_use:\n    - command: sleep 5\n      timeoutMs: 300\n    - command: "echo broken >&2; exit 1"\n    - command: "cat > /dev/null; echo QUIET-HOOK-OK"\n'),
    });
    const run = await execAgainst(harness, 'go');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^warning: hook pre_tool_use "sleep 5" on exec_command echo ran: timed out after 300 ms; not blocking$/m);
    expect(run.stderr).toMatch(/^warning: hook pre_tool_use "echo broken >&2; exit 1" on exec_command echo ran: exit code 1; not blocking \(stderr: broken\)$/m);
    expect(run.stdout + run.stderr).not.toContain('QUIET-HOOK-OK');
    expect(run.stdout + run.stderr).not.toContain('cat > /dev/null');
  });

  it('says when a hook blocked a call', async () => {
    harness = await startInProcessServer(`responses:\n  - toolCalls: [{ name: exec_command, arguments: { command: "rm -rf victim" } }]\n  - text: "understood"\n`, {
      beforeStart: (environment) =>
        writeHooks(environment, 'hooks:\n  pre_tool_use:\n    - command: $HOOKS/guard.sh\n', {
          'guard.sh': 'case "$(cat)" in *"rm -rf"*) echo "GUARD-17: not here" >&2; exit 2 ;; esac\nexit 0',
        }),
    });
    const run = await execAgainst(harness, 'clean up');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^ {2}hook pre_tool_use ".*guard\.sh" on exec_command rm -rf victim: blocked the call$/m);
    expect(run.stdout).toContain('GUARD-17: not here');
  });
});

describe('exec: a call whose arguments a hook rewrote', () => {
  it('shows the command that ran, and that a hook rewrote it', async () => {
    harness = await startInProcessServer(`responses:\n  - toolCalls: [{ name: exec_command, arguments: { command: "echo rewrite me" } }]\n  - text: "done"\n`, {
      beforeStart: (environment) =>
        writeHooks(environment, `hooks:\n  pre_tool_use:\n    - command: $HOOKS/rewrite.sh\n`, {
          'rewrite.sh': `cat > /dev/null; printf '%s' '{"updatedArguments":{"command":"echo rewritten"}}'`,
        }),
    });
    const run = await execAgainst(harness, 'go');
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    // What the model asked for comes first, then the hook's change, before the output of what ran.
    const asked = lines.indexOf('▸ exec_command echo rewrite me');
    const rewrote = lines.findIndex((line) => /^ {2}hook pre_tool_use ".*rewrite\.sh" on exec_command echo rewrite me: rewrote the call: echo rewritten$/.test(line));
    const output = lines.indexOf('  │ rewritten');
    const closing = lines.findIndex((line) => /^ {2}✓ exec_command echo rewritten exit 0 \(\d+ ms\)$/.test(line));
    expect(asked).toBeGreaterThanOrEqual(0);
    expect(rewrote).toBeGreaterThan(asked);
    expect(output).toBeGreaterThan(rewrote);
    expect(closing).toBeGreaterThan(output);
    expect(lines.filter((line) => line.includes('✓') && line.includes('rewrite me'))).toEqual([]);
  });
});

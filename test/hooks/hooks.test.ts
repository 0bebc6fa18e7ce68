/**
 * Hooks (`hooks.yaml`) in a real in-process server with the scripted mock model: real hook
 * scripts run as processes on the local executor, and what they decide is checked in the
 * recorded items, on disk and in the next request the model receives.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Item, ItemOf } from '../../src/protocol/index.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** Writes executable hook scripts under `<root>/hooks/` and `hooks.yaml` (where `$HOOKS` stands for that folder). */
function writeHooks(environment: TestEnvironment, hooksYaml: string, scripts: Record<string, string>): void {
  const folder = path.join(environment.root, 'hooks');
  mkdirSync(folder, { recursive: true });
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(path.join(folder, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(path.join(folder, name), 0o755);
  }
  writeFileSync(path.join(environment.paths.configDir, 'hooks.yaml'), hooksYaml.replaceAll('$HOOKS', folder));
}

async function start(script: string, hooksYaml: string, scripts: Record<string, string> = {}): Promise<InProcessServer> {
  harness = await startInProcessServer(script, { beforeStart: (environment) => writeHooks(environment, hooksYaml, scripts) });
  return harness;
}

function itemsOf<K extends Item['kind']>(kind: K): ItemOf<K>[] {
  return harness!.completedItems().filter((item): item is ItemOf<K> => item.kind === kind);
}

function requestBody(index: number): string {
  return JSON.stringify(harness!.environment.mock.requests[index]?.body ?? null);
}

describe('pre_tool_use hooks', () => {
  it('blocks an rm -rf command with exit 2; the call does not run and the model reads the reason', async () => {
    const { workDir, root } = (
      await start(
        `
responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: "rm -rf victim" } }
      - { name: exec_command, arguments: { command: "echo harmless > kept.txt" } }
  - text: "understood"
`,
        'hooks:\n  pre_tool_use:\n    - matcher: exec_command\n      command: $HOOKS/guard.sh\n',
        {
          'guard.sh': `input=$(cat)
printf '%s' "$input" > "$(dirname "$0")/input-$(date +%s%N).json"
case "$input" in
  *'rm -rf'*) echo "GUARD-17: rm -rf is not allowed in this workspace" >&2; exit 2 ;;
esac
exit 0`,
        },
      )
    ).environment;
    mkdirSync(path.join(workDir, 'victim'));
    writeFileSync(path.join(workDir, 'victim', 'precious.txt'), 'keep me\n');
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'clean up' });
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn?.status).toBe('completed');

    expect(existsSync(path.join(workDir, 'victim', 'precious.txt'))).toBe(true);
    expect(readFileSync(path.join(workDir, 'kept.txt'), 'utf8')).toBe('harmless\n');
    const calls = itemsOf('tool_call');
    expect(calls.map((call) => call.status)).toEqual(['failed', 'completed']);
    expect(calls[0]?.output).toContain('GUARD-17: rm -rf is not allowed');
    const runs = itemsOf('hook_run');
    expect(runs).toHaveLength(2);
    expect(runs.find((run) => run.decision === 'block')).toMatchObject({ event: 'pre_tool_use', exitCode: 2, command: expect.stringContaining('guard.sh') });
    expect(runs.find((run) => run.decision === 'continue')).toMatchObject({ exitCode: 0 });
    expect(requestBody(1)).toContain('blocked by a pre_tool_use hook: GUARD-17: rm -rf is not allowed in this workspace');

    // The hook read its input as JSON on stdin.
    const inputs = (await import('node:fs')).readdirSync(path.join(root, 'hooks')).filter((name) => name.startsWith('input-'));
    const parsed = inputs.map((name) => JSON.parse(readFileSync(path.join(root, 'hooks', name), 'utf8')) as Record<string, unknown>);
    const blocked = parsed.find((input) => (input.arguments as { command: string }).command === 'rm -rf victim');
    expect(blocked).toMatchObject({ event: 'pre_tool_use', conversationId, cwd: workDir, toolName: 'exec_command', executor: 'local', turnId: turn?.id, sessionId: turn?.sessionId });
  });

  it('runs the tool with updatedArguments, and records the arguments that ran', async () => {
    const { workDir } = (
      await start(
        `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch original.txt" } }]
  - text: "done"
`,
        `hooks:\n  pre_tool_use:\n    - matcher: "exec_*"\n      command: >-\n        cat > /dev/null; printf '%s' '{"decision":"allow","updatedArguments":{"command":"touch rewritten.txt"}}'\n`,
      )
    ).environment;
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'make a file' });
    await harness!.turnsCompleted(1);
    expect(existsSync(path.join(workDir, 'rewritten.txt'))).toBe(true);
    expect(existsSync(path.join(workDir, 'original.txt'))).toBe(false);
    expect(itemsOf('tool_call')[0]).toMatchObject({ status: 'completed', arguments: { command: 'touch rewritten.txt' } });
    expect(itemsOf('hook_run')[0]).toMatchObject({ decision: 'allow', exitCode: 0 });
    expect(requestBody(1)).toContain('touch rewritten.txt');
  });

  it('records a hook that times out or fails, and does not block the call', async () => {
    const { workDir } = (
      await start(
        `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch ran.txt" } }]
  - text: "done"
`,
        'hooks:\n  pre_tool_use:\n    - command: sleep 5\n      timeoutMs: 300\n    - command: "echo broken >&2; exit 1"\n',
      )
    ).environment;
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'go' });
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(existsSync(path.join(workDir, 'ran.txt'))).toBe(true);
    const [timedOut, failed] = itemsOf('hook_run');
    expect(timedOut).toMatchObject({ event: 'pre_tool_use', command: 'sleep 5', decision: 'timeout', exitCode: null, status: 'failed' });
    expect(timedOut?.output).toContain('timed out after 300 ms');
    expect(failed).toMatchObject({ decision: 'error', exitCode: 1, status: 'failed' });
    expect(failed?.output).toContain('broken');
    expect(itemsOf('tool_call')[0]?.status).toBe('completed');
  });

  it('asks a person when a hook answers "ask", even though no policy asks', async () => {
    const { workDir } = (
      await start(
        `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch asked.txt" } }]
  - text: "ok"
`,
        `hooks:\n  pre_tool_use:\n    - command: >-\n        printf '{"decision":"ask","reason":"touching files needs a look"}'\n`,
      )
    ).environment;
    const conversationId = await harness!.conversation();
    const asked: string[] = [];
    harness!.client.handleServerRequest('approval/request', async (request) => {
      asked.push(request.reason ?? '');
      return { decision: 'deny', message: 'not now' };
    });
    await harness!.client.request('session/input', { conversationId, input: 'go' });
    await harness!.turnsCompleted(1);
    expect(asked).toEqual(['asked by a pre_tool_use hook']);
    expect(existsSync(path.join(workDir, 'asked.txt'))).toBe(false);
    expect(requestBody(1)).toContain('the user denied this call: not now');
  });
});

describe('post_tool_use hooks', () => {
  it('adds its additionalContext to the tool result the model reads next', async () => {
    await start(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo hello-from-tool" } }]
  - text: "noted"
`,
      'hooks:\n  post_tool_use:\n    - matcher: "exec_command|apply_patch"\n      command: $HOOKS/review.sh\n    - matcher: read_file\n      command: $HOOKS/never.sh\n',
      {
        'review.sh': `input=$(cat)
case "$input" in
  *hello-from-tool*) printf '{"additionalContext":"POST-CONTEXT-81: the output was checked"}' ;;
  *) printf '{"additionalContext":"POST-CONTEXT-81 missing the result"}' ;;
esac`,
        'never.sh': 'echo "must not run for exec_command" >&2; exit 2',
      },
    );
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'say hello' });
    await harness!.turnsCompleted(1);
    const runs = itemsOf('hook_run');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ event: 'post_tool_use', decision: 'continue', exitCode: 0 });
    expect(itemsOf('tool_call')[0]?.output).toContain('[post_tool_use hook]\nPOST-CONTEXT-81: the output was checked');
    expect(requestBody(1)).toContain('POST-CONTEXT-81: the output was checked');
    expect(requestBody(0)).not.toContain('POST-CONTEXT-81');
  });
});

describe('prompt, session, stop and compaction hooks', () => {
  it('refuses a prompt when a user_prompt_submit hook exits 2, and the model never sees it', async () => {
    await start(
      `
responses:
  - text: "hello to you"
`,
      'hooks:\n  user_prompt_submit:\n    - command: $HOOKS/screen.sh\n',
      {
        'screen.sh': `input=$(cat)
case "$input" in
  *TOP-SECRET*) echo "prompts about secrets are refused here" >&2; exit 2 ;;
esac`,
      },
    );
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'tell me the TOP-SECRET plan' });
    const [refused] = await harness!.turnsCompleted(1);
    expect(refused).toMatchObject({ status: 'failed', steps: 0, stopReason: 'hook_refused' });
    expect(refused?.error).toContain('prompts about secrets are refused here');
    expect(harness!.environment.mock.requests).toHaveLength(0);
    expect(refused?.error).toMatch(/^the prompt was refused by the user_prompt_submit hook "[^"]*screen\.sh": /);
    // The refused prompt is not recorded (refused-prompt.test.ts follows it everywhere else).
    expect(itemsOf('user_message')).toEqual([]);
    expect(itemsOf('hook_run')[0]).toMatchObject({ event: 'user_prompt_submit', decision: 'block', exitCode: 2 });

    await harness!.client.request('session/input', { conversationId, input: 'just say hello' });
    const turns = await harness!.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    expect(requestBody(0)).toContain('just say hello');
    expect(requestBody(0)).not.toContain('TOP-SECRET');
  });

  it('adds session_start context on the first turn and makes the model go on when a stop hook blocks', async () => {
    await start(
      `
responses:
  - text: "all done"
  - text: "tests ran and pass"
`,
      [
        'hooks:',
        '  session_start:',
        `    - command: 'echo "SESSION-NOTE-5: the main branch is protected"'`,
        '  stop:',
        '    - command: $HOOKS/stop.sh',
        '  user_prompt_submit:',
        `    - command: printf '{"additionalContext":"PROMPT-NOTE-3"}'`,
        '',
      ].join('\n'),
      {
        'stop.sh': `input=$(cat)
case "$input" in
  *'"stopHookActive":false'*) echo "STOP-REASON-9: run the tests before you finish" >&2; exit 2 ;;
esac`,
      },
    );
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'fix it' });
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn).toMatchObject({ status: 'completed', steps: 2 });
    expect(itemsOf('instruction').map((item) => [item.source, item.name])).toEqual([
      ['agent', 'hook:session_start'],
      ['agent', 'hook:user_prompt_submit'],
      ['agent', 'hook:stop'],
    ]);
    expect(requestBody(0)).toContain('SESSION-NOTE-5: the main branch is protected');
    expect(requestBody(0)).toContain('PROMPT-NOTE-3');
    expect(requestBody(1)).toContain('STOP-REASON-9: run the tests before you finish');
    expect(itemsOf('hook_run').filter((run) => run.event === 'stop').map((run) => run.decision)).toEqual(['block', 'continue']);
  });

  it('runs pre_compact hooks before a summary, whose request carries their context', async () => {
    await start(
      `
responses:
  - text: "first answer"
  - text: "SUMMARY: a short one"
`,
      `hooks:\n  pre_compact:\n    - command: >-\n        input=$(cat); case "$input" in *'"trigger":"manual"'*) printf '{"additionalContext":"COMPACT-NOTE-4: keep the file list"}';; esac\n`,
    );
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'hello' });
    await harness!.turnsCompleted(1);
    await harness!.client.request('session/compact', { conversationId });
    const turns = await harness!.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    expect(itemsOf('hook_run')[0]).toMatchObject({ event: 'pre_compact', decision: 'continue' });
    expect(requestBody(1)).toContain('COMPACT-NOTE-4: keep the file list');
    expect(itemsOf('context_summary')).toHaveLength(1);
  });
});

/**
 * The hook runner on real executors: the JSON input arrives byte-exact on stdin whatever it
 * holds, stdout and stderr are told apart, exit codes and answers are read by the rules, and
 * a hook on an SSH executor runs on the remote side of the connection.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HooksFileSchema, type HookEvent } from '../../src/config/hooks.js';
import type { Executor } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { SshExecutor } from '../../src/executors/ssh/ssh-executor.js';
import { VirtualExecutor } from '../../src/executors/virtual/virtual-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import type { Item, ItemOf } from '../../src/protocol/index.js';
import { capHookInput, HOOK_INPUT_LIMIT_BYTES } from '../../src/runtime/hooks/hook-process.js';
import { HookRunner, type HookEventDetails } from '../../src/runtime/hooks/hook-runner.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';

let directory: string;
const local = new LocalExecutor({ name: 'local' });
beforeAll(async () => {
  directory = await realpath(await mkdtemp(path.join(os.tmpdir(), 'openvaala-hooks-')));
});
afterAll(async () => {
  await local.close();
  await rm(directory, { recursive: true, force: true });
});

/** Runs the hooks of `hooksYaml`-like data for one event on `executor`, returning the outcome and the recorded items. */
async function runHooks(executor: Executor, root: string, event: HookEvent, hooks: unknown[], details: HookEventDetails = {}) {
  const runner = new HookRunner(HooksFileSchema.parse({ hooks: { [event]: hooks } }));
  const recorded: Item[] = [];
  const outcome = await runner.run(
    event,
    { conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', workspace: new Workspace(executor, root), signal: new AbortController().signal, record: async (item) => void recorded.push(item) },
    details,
  );
  return { outcome, runs: recorded as ItemOf<'hook_run'>[] };
}

describe('hook runner (local executor)', () => {
  it('passes the input byte-exact on stdin, whatever quotes, dollars, backticks and newlines it holds', async () => {
    const tricky = `it's "quoted" $HOME \`whoami\` $(id) \\ back\nslash; rm -rf / # ünïcode ✓`;
    const { runs } = await runHooks(local, directory, 'pre_tool_use', [{ command: 'cat' }], { toolName: 'exec_command', arguments: { command: tricky } });
    const input = JSON.parse(runs[0]?.output ?? '') as Record<string, unknown>;
    expect(input).toEqual({ event: 'pre_tool_use', conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', cwd: directory, executor: 'local', toolName: 'exec_command', arguments: { command: tricky } });
  });

  it('tells stdout from stderr: exit 2 blocks with stderr only, as the reason', async () => {
    const { outcome, runs } = await runHooks(local, directory, 'pre_tool_use', [{ command: 'echo on-stdout; echo "the reason" >&2; exit 2' }, { command: 'touch must-not-run' }], { toolName: 'x' });
    expect(outcome.block).toBe('the reason');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ decision: 'block', exitCode: 2, output: 'on-stdout\n[stderr]\nthe reason' });
  });

  it('records a command line that does not parse as an error, not as a block (bash exits 2 on syntax errors)', async () => {
    const { outcome, runs } = await runHooks(local, directory, 'pre_tool_use', [{ command: 'echo "unbalanced )"; )' }], { toolName: 'x' });
    expect(outcome.block).toBeUndefined();
    expect(runs[0]).toMatchObject({ decision: 'error', status: 'failed', exitCode: null });
    expect(runs[0]?.output).toContain('syntax error');
  });

  it('ignores an answer that does not validate, naming the field, and keeps nothing of it', async () => {
    const { outcome, runs } = await runHooks(local, directory, 'pre_tool_use', [{ command: `printf '{"decision":"maybe","additionalContext":"x"}'` }], { toolName: 'x' });
    expect(outcome).toEqual({ additionalContext: [] });
    expect(runs[0]?.decision).toBe('error');
    expect(runs[0]?.output).toContain('stdout JSON: decision');
  });

  it('rejects decisions and updatedArguments on events they do not apply to', async () => {
    const { outcome, runs } = await runHooks(local, directory, 'post_tool_use', [{ command: `printf '{"decision":"allow","updatedArguments":{"a":1}}'` }], { toolName: 'x' });
    expect(outcome.permission).toBeUndefined();
    expect(outcome.updatedArguments).toBeUndefined();
    expect(runs[0]?.output).toContain('updatedArguments only applies to pre_tool_use');
    const started = await runHooks(local, directory, 'session_start', [{ command: 'echo no >&2; exit 2' }]);
    expect(started.outcome.block).toBeUndefined();
    expect(started.runs[0]?.output).toContain('exit code 2 cannot block session_start');
  });

  it('chains updatedArguments from one hook to the next and lets "ask" win over "allow"', async () => {
    const { outcome } = await runHooks(
      local,
      directory,
      'pre_tool_use',
      [
        { command: `printf '{"decision":"ask","updatedArguments":{"command":"echo first"}}'` },
        { command: `input=$(cat); case "$input" in *'echo first'*) printf '{"decision":"allow","updatedArguments":{"command":"echo second"}}';; esac` },
      ],
      { toolName: 'exec_command', arguments: { command: 'echo original' } },
    );
    expect(outcome).toMatchObject({ permission: 'ask', updatedArguments: { command: 'echo second' } });
  });

  it('only runs tool hooks whose matcher takes the tool name (glob or regular expression)', async () => {
    const hooks = [{ matcher: 'mcp__*', command: 'echo glob' }, { matcher: '(read|list)_.*', command: 'echo regex' }, { command: 'echo all' }];
    const forRead = await runHooks(local, directory, 'post_tool_use', hooks, { toolName: 'read_file' });
    expect(forRead.runs.map((run) => run.output)).toEqual(['regex', 'all']);
    const forMcp = await runHooks(local, directory, 'post_tool_use', hooks, { toolName: 'mcp__github__search' });
    expect(forMcp.runs.map((run) => run.output)).toEqual(['glob', 'all']);
  });

  it('cuts long strings of a large input so it stays within the limit', () => {
    const text = capHookInput({ event: 'post_tool_use', result: { output: 'x'.repeat(500_000) }, arguments: { patch: 'y'.repeat(200_000) } });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(HOOK_INPUT_LIMIT_BYTES);
    const parsed = JSON.parse(text) as { result: { output: string } };
    expect(parsed.result.output).toMatch(/^x+\[… \d+ bytes left out of the hook input …\]$/);
  });
});

describe('hook runner (virtual executor)', () => {
  it('runs a hook in the simulated shell with stdin, stdout and stderr apart', async () => {
    const executor = new VirtualExecutor({ name: 'scratch', root: '/sandbox' });
    const { outcome, runs } = await runHooks(executor, '/sandbox', 'pre_tool_use', [{ command: 'cat > /sandbox/input.json; echo visible; echo "virtual says no" >&2; exit 2' }], { toolName: 'x' });
    expect(outcome.block).toBe('virtual says no');
    expect(runs[0]?.output).toBe('visible\n[stderr]\nvirtual says no');
    const input = JSON.parse(Buffer.from(await executor.fs.readFile('/sandbox/input.json')).toString('utf8')) as Record<string, unknown>;
    expect(input).toMatchObject({ event: 'pre_tool_use', cwd: '/sandbox', executor: 'scratch' });
    await executor.close();
  });
});

describe('hook runner (SSH executor)', () => {
  let server: TestSshServer;
  let executor: SshExecutor;
  beforeAll(async () => {
    server = await startSshServer();
    executor = new SshExecutor({ name: 'build-box', host: server.host, port: server.port, user: server.user, identityFile: server.identityFile, knownHostsFile: server.knownHostsFile, connectTimeoutMs: 5000 });
  });
  afterAll(async () => {
    await executor?.close();
    await server?.dispose();
  });

  it('runs the hook on the remote side of the connection, with its input and its block', async () => {
    // SSH_CONNECTION is set only in a session sshd started: proof the command ran there.
    const { outcome, runs } = await runHooks(
      executor,
      directory,
      'pre_tool_use',
      [{ command: 'cat > ssh-input.json; printf "%s" "$SSH_CONNECTION" > ssh-connection.txt; echo "remote guard refuses" >&2; exit 2' }],
      { toolName: 'exec_command', arguments: { command: 'rm -rf build' } },
    );
    expect(outcome.block).toBe('remote guard refuses');
    expect(runs[0]).toMatchObject({ exitCode: 2, decision: 'block' });
    const connection = Buffer.from(await executor.fs.readFile(path.join(directory, 'ssh-connection.txt'))).toString('utf8');
    expect(connection).toMatch(/^127\.0\.0\.1 \d+ 127\.0\.0\.1 \d+$/);
    const input = JSON.parse(Buffer.from(await executor.fs.readFile(path.join(directory, 'ssh-input.json'))).toString('utf8')) as Record<string, unknown>;
    expect(input).toMatchObject({ event: 'pre_tool_use', executor: 'build-box', cwd: directory, arguments: { command: 'rm -rf build' } });
  });
});

/**
 * A tool call that failed reads as failed wherever a person reads it: a command that ran and
 * exited non-zero or was killed by a signal (a normal result for the model, `isError: false`),
 * a tool error, a refused or denied call, a timeout, an MCP tool's error, a background
 * command read to a failed end. Checked in exec's human output (fed by hand, and end to end
 * against a real server with `--json` too) and in the transcript form of `conversations show`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HumanRenderer } from '../../src/cli/exec-output.js';
import { formatItem } from '../../src/cli/exec-item-formats.js';
import type { AnyNotification, Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { capturedStreams, execAgainst } from './exec-harness.js';

type ToolCall = Extract<Item, { kind: 'tool_call' }>;

/** A finished tool call of the root session; `fields` override the successful defaults. */
function toolCall(fields: Partial<ToolCall>): ToolCall {
  return { id: 'i', sessionId: 's', turnId: 't', createdAt: 1, completedAt: 2, status: 'completed', kind: 'tool_call', callId: 'c', toolName: 'exec_command', arguments: { command: 'x' }, output: '', isError: false, durationMs: 5, ...fields };
}

const command = (exitCode: number | null, signal: string | null = null) => ({ kind: 'command' as const, command: 'x', cwd: '/w', exitCode, signal, durationMs: 5, output: '' });

/** The closing line exec prints for `item`. */
function closingLine(item: ToolCall): string {
  const output = capturedStreams();
  const renderer = new HumanRenderer(output.streams, { sessionId: 's' });
  renderer.render({ method: 'item/completed', params: { conversationId: 'c', sessionId: 's', seq: 1, item } } as AnyNotification);
  return output.stdout().trimEnd().split('\n').at(-1) ?? '';
}

const failures: [string, Partial<ToolCall>, string][] = [
  ['a command not found (exit 127)', { output: 'sh: nope: not found\n[exit code 127]', exitCode: 127, details: command(127) }, '✗ exec_command exit 127'],
  ['a command that exited 1', { exitCode: 1, details: command(1) }, '✗ exec_command exit 1'],
  ['a command killed by a signal', { exitCode: null, details: command(null, 'SIGSEGV') }, '✗ exec_command killed by SIGSEGV'],
  ['a command that timed out', { isError: true, status: 'failed', exitCode: null, structured: { timedOut: true }, details: command(null, 'SIGKILL') }, '✗ exec_command timed out'],
  ['a denied call', { isError: true, status: 'failed', output: 'exec_command: not run: denied' }, '✗ exec_command'],
  ['a patch that did not apply', { toolName: 'apply_patch', isError: true, status: 'failed', output: 'apply_patch: no such file' }, '✗ apply_patch'],
  ['a read of a missing file', { toolName: 'read_file', isError: true, status: 'failed', output: 'read_file: no such file' }, '✗ read_file'],
  ['an MCP tool error', { toolName: 'mcp__srv__tool', isError: true, status: 'failed', details: { kind: 'mcp', server: 'srv', tool: 'tool', result: { isError: true } } }, '✗ mcp__srv__tool'],
  ['a background command read to a failed end', { toolName: 'write_stdin', exitCode: 2, details: command(2) }, '✗ write_stdin exit 2'],
];

describe('exec: a failed tool call is never shown as a success', () => {
  it.each(failures)('%s', (_name, fields, expected) => {
    const line = closingLine(toolCall(fields));
    expect(line).toBe(`  ${expected} (5 ms)`);
  });

  it.each(failures)('%s, in the transcript of conversations show', (_name, fields) => {
    const text = formatItem(toolCall(fields)) ?? '';
    expect(text.split('\n').at(-1)).toMatch(/^ {2}✗/);
  });

  it('still marks successes, interruptions and a kill that stopped its command as they are', () => {
    expect(closingLine(toolCall({ exitCode: 0, details: command(0) }))).toBe('  ✓ exec_command exit 0 (5 ms)');
    expect(closingLine(toolCall({ toolName: 'read_file' }))).toBe('  ✓ read_file (5 ms)');
    expect(closingLine(toolCall({ toolName: 'write_stdin', details: command(null) }))).toBe('  ✓ write_stdin (5 ms)');
    expect(closingLine(toolCall({ toolName: 'kill_command', exitCode: null, details: command(null, 'SIGTERM') }))).toBe('  ✓ kill_command killed by SIGTERM (5 ms)');
    expect(closingLine(toolCall({ status: 'interrupted', exitCode: null, details: command(null, 'SIGTERM') }))).toBe('  ■ exec_command interrupted: killed by SIGTERM (5 ms)');
  });
});

describe('exec end to end: a command that is not found', { timeout: 30_000 }, () => {
  let harness: InProcessServer | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await harness?.stop();
    harness = undefined;
  });

  const script = `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "no-such-command-4c1e" } }]
  - text: "It is not installed."
  - toolCalls: [{ name: exec_command, arguments: { command: "no-such-command-4c1e" } }]
  - text: "Still not installed."
`;

  it('is shown failed with its exit code, and --json carries the exit code', async () => {
    harness = await startInProcessServer(script);
    const run = await execAgainst(harness, 'run it');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^ {2}✗ exec_command exit 127 \(\d+ ms\)$/m);
    expect(run.stdout).not.toMatch(/✓ exec_command/);

    const json = await execAgainst(harness, 'run it again', { json: true });
    const completed = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AnyNotification)
      .flatMap((event) => (event.method === 'item/completed' && event.params.item.kind === 'tool_call' ? [event.params.item] : []));
    expect(completed).toHaveLength(1);
    expect(completed[0]?.exitCode).toBe(127);
    expect(completed[0]?.details).toMatchObject({ kind: 'command', exitCode: 127 });
  });
});

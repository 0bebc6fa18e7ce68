/**
 * The terminal UI marks a failed tool call as failed, in red: a command that exited non-zero
 * or was killed by a signal (a normal result for the model), a tool error, a refused or
 * denied call, a timeout, an MCP tool's error, a background command read to a failed end.
 */
import { describe, expect, it } from 'vitest';
import { entryLines } from '../../src/tui/entry-lines.js';
import { plainText, type StyledLine } from '../../src/tui/styled-text.js';
import type { Item } from '../../src/protocol/index.js';

type ToolCall = Extract<Item, { kind: 'tool_call' }>;

function toolCall(fields: Partial<ToolCall>): ToolCall {
  return { id: 'i', sessionId: 's', turnId: 't', createdAt: 1, completedAt: 2, status: 'completed', kind: 'tool_call', callId: 'c', toolName: 'exec_command', arguments: { command: 'x' }, output: '', isError: false, durationMs: 5, ...fields };
}

const command = (exitCode: number | null, signal: string | null = null) => ({ kind: 'command' as const, command: 'x', cwd: '/w', exitCode, signal, durationMs: 5, output: '' });

/** The styled lines of `item` as the transcript shows it (without the separating blank line). */
function lines(item: ToolCall): StyledLine[] {
  return entryLines({ key: item.id, sessionId: 's', seq: 1, item, version: 0 }, 80, { reasoning: false, output: false }, 's').slice(0, -1);
}

describe('terminal UI: how a tool call ended', () => {
  it.each<[string, Partial<ToolCall>, string]>([
    ['a command not found (exit 127)', { output: 'sh: nope: not found\n[exit code 127]', exitCode: 127, details: command(127) }, '  ✗ failed · exit 127 · 5 ms'],
    ['a command killed by a signal', { exitCode: null, details: command(null, 'SIGSEGV') }, '  ✗ failed · killed by SIGSEGV · 5 ms'],
    ['a command that timed out', { isError: true, status: 'failed', exitCode: null, structured: { timedOut: true }, details: command(null, 'SIGKILL') }, '  ✗ failed · timed out · 5 ms'],
    ['a denied call', { isError: true, status: 'failed', output: 'exec_command: not run: denied' }, '  ✗ failed · 5 ms'],
    ['an MCP tool error', { toolName: 'mcp__srv__tool', isError: true, status: 'failed', details: { kind: 'mcp', server: 'srv', tool: 'tool' } }, '  ✗ failed · 5 ms'],
    ['a background command read to a failed end', { toolName: 'write_stdin', exitCode: 2, details: command(2) }, '  ✗ failed · exit 2 · 5 ms'],
  ])('%s is marked failed, in red', (_name, fields, expected) => {
    const shown = lines(toolCall(fields));
    const end = shown.at(-1) ?? [];
    expect(plainText(end)).toBe(expected);
    expect(end.every((span) => span.style?.color === 'red')).toBe(true);
    expect(shown[0]?.[0]?.style?.color).toBe('red');
  });

  it('marks a success, with its exit code, and an interruption as they are', () => {
    const success = lines(toolCall({ exitCode: 0, details: command(0) }));
    expect(plainText(success.at(-1) ?? [])).toBe('  ✓ exit 0 · 5 ms');
    expect(success[0]?.[0]?.style?.color).toBe('green');
    const interrupted = lines(toolCall({ status: 'interrupted', exitCode: null, details: command(null, 'SIGTERM') }));
    expect(plainText(interrupted.at(-1) ?? [])).toBe('  ■ interrupted · killed by SIGTERM · 5 ms');
  });
});

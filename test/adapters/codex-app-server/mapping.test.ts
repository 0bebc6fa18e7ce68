/**
 * The item and approval mapping of the Codex adapter for the kinds the recorded sessions do not
 * show (MCP tools, subagents, other tools, reasoning, plans, compaction, a denied call), each
 * checked against the `ThreadItem` / server request definitions of the schema bundle; and the
 * Codex approval decisions, a malformed one included.
 */
import { describe, expect, it } from 'vitest';
import { codexApprovalRequestOf, decisionOf } from '../../../src/adapters/codex-app-server/approvals.js';
import { codexDiffOf, startedThreadItemOf, threadItemOf } from '../../../src/adapters/codex-app-server/items.js';
import { toCodexId } from '../../../src/protocol/codex-ids.js';
import type { ApprovalRequest, Item, ItemOf } from '../../../src/protocol/index.js';
import { CodexSchema } from './codex-schema.js';

const schema = new CodexSchema();
const ITEM = 'codex#/definitions/v2/ThreadItem';
const ids = { id: 'item_01jd6k8g3mzx4y0q2w7e5r9t1b', sessionId: 'sess_01jd6k8g3mzx4y0q2w7e5r9t1c', turnId: 'turn_01jd6k8g3mzx4y0q2w7e5r9t1d', createdAt: 1_000, completedAt: 2_000, status: 'completed' as const };
const place = { sessionThreadId: toCodexId(ids.sessionId), cwd: '/home/dev/project' };

function toolCall(fields: Partial<ItemOf<'tool_call'>>): Item {
  return { ...ids, kind: 'tool_call', callId: 'call_1', toolName: 'tool', arguments: {}, output: 'out', isError: false, durationMs: 12.4, ...fields };
}

describe('Codex ThreadItems of OpenVaala items', () => {
  it('maps each kind to a valid ThreadItem of the right type', () => {
    const cases: [Item, string][] = [
      [toolCall({ toolName: 'mcp__docs__search', arguments: { q: 'x' }, details: { kind: 'mcp', server: 'docs', tool: 'search', result: { content: [{ type: 'text', text: 'hit' }] } } }), 'mcpToolCall'],
      [toolCall({ toolName: 'spawn_agent', details: { kind: 'subagent', sessionIds: ['sess_01jd6k8g3mzx4y0q2w7e5r9t1e'] } }), 'collabAgentToolCall'],
      [toolCall({ toolName: 'grep', details: { kind: 'search', tool: 'grep', pattern: 'x', path: '/w', matches: 2 } }), 'dynamicToolCall'],
      [toolCall({ toolName: 'exec_command', status: 'failed', isError: true, output: 'exec_command: not run: denied by the user', details: { kind: 'command', command: 'rm -rf x', cwd: '/w' } }), 'commandExecution'],
      [{ ...ids, kind: 'reasoning', summary: 'a\n\nb', summaryParts: ['a', 'b'] }, 'reasoning'],
      [{ ...ids, kind: 'plan', explanation: 'why', steps: [{ step: 'one', status: 'completed' }, { step: 'two', status: 'in_progress' }] }, 'plan'],
      [{ ...ids, kind: 'context_summary', text: 'summary', lastItemId: ids.id }, 'contextCompaction'],
      [{ ...ids, kind: 'user_message', mode: 'input', content: [{ type: 'text', text: 'hi' }, { type: 'image', url: 'https://x/y.png' }, { type: 'file', path: 'src/a.ts' }] }, 'userMessage'],
    ];
    for (const [item, type] of cases) {
      const codexItem = threadItemOf(item, place);
      expect(codexItem?.type, item.kind).toBe(type);
      expect(schema.errorsAgainst(ITEM, codexItem)).toEqual([]);
    }
    // A call the person denied did not run: Codex says declined.
    expect(threadItemOf(cases[3]![0], place)).toMatchObject({ status: 'declined', command: "bash -c 'rm -rf x'", commandActions: [{ type: 'unknown', command: 'rm -rf x' }] });
    expect(threadItemOf(cases[5]![0], place)).toMatchObject({ text: 'why\n[x] one\n[~] two' });
  });

  it('says failed, as Codex does, for a command that ran and exited non-zero or was killed, and for an MCP tool error', () => {
    const command = (fields: Partial<ItemOf<'tool_call'>>, details: Record<string, unknown> = {}) =>
      threadItemOf(toolCall({ toolName: 'exec_command', details: { kind: 'command', command: 'make test', cwd: '/w', ...details }, ...fields }), place);
    expect(command({ exitCode: 0 }, { exitCode: 0 })).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(command({ exitCode: 127 }, { exitCode: 127 })).toMatchObject({ status: 'failed', exitCode: 127 });
    expect(command({}, { exitCode: null, signal: 'SIGKILL' })).toMatchObject({ status: 'failed' });
    const mcpError = threadItemOf(toolCall({ toolName: 'mcp__docs__search', isError: true, output: 'no index', details: { kind: 'mcp', server: 'docs', tool: 'search' } }), place);
    expect(mcpError).toMatchObject({ status: 'failed', error: { message: 'no index' } });
    for (const item of [command({ exitCode: 127 }, { exitCode: 127 }), mcpError]) expect(schema.errorsAgainst(ITEM, item)).toEqual([]);
  });

  it('drops the kinds Codex has no item for', () => {
    expect(threadItemOf({ ...ids, kind: 'approval', callId: 'c', toolName: 't', decision: 'allow_once', decidedBy: 'client:x' }, place)).toBeUndefined();
    expect(threadItemOf({ ...ids, kind: 'model_change', from: 'a/b', to: 'c/d' }, place)).toBeUndefined();
    expect(startedThreadItemOf(ids.id, 'user_message', {}, place)).toBeUndefined();
  });

  it('announces tool calls in progress as valid items', () => {
    const started = startedThreadItemOf(ids.id, 'tool_call', { toolName: 'apply_patch', details: { kind: 'fileChange', changes: [{ path: 'a.txt', kind: 'move', movePath: 'b.txt', unifiedDiff: '--- a/a.txt\n+++ b/b.txt\n' }] } }, place);
    expect(started).toMatchObject({ type: 'fileChange', status: 'inProgress', changes: [{ path: '/home/dev/project/a.txt', kind: { type: 'update', move_path: '/home/dev/project/b.txt' } }] });
    expect(schema.errorsAgainst(ITEM, started)).toEqual([]);
  });
});

describe('Codex file change diffs', () => {
  it('gives the content of an added or deleted file and the hunks of an update, as Codex does', () => {
    expect(codexDiffOf('add', '--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n')).toBe('hello\nworld\n');
    expect(codexDiffOf('add', '--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+no newline\n\\ No newline at end of file\n')).toBe('no newline');
    expect(codexDiffOf('delete', '--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n')).toBe('gone\n');
    expect(codexDiffOf('update', '--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n')).toBe('@@ -1 +1 @@\n-a\n+b\n');
  });
});

describe('Codex approvals of OpenVaala approval requests', () => {
  const request: ApprovalRequest = {
    approvalId: 'appr_1',
    conversationId: 'conv_01jd6k8g3mzx4y0q2w7e5r9t1b',
    sessionId: ids.sessionId,
    turnId: ids.turnId,
    callId: 'call_1',
    itemId: ids.id,
    toolName: 'mcp__docs__search',
    arguments: { q: 'x' },
    options: [],
    reason: 'policy asks',
    requestedAt: 5_000,
  };

  it('asks for a tool that is neither a command nor a file change as a command naming the tool', () => {
    const asked = codexApprovalRequestOf(request);
    expect(asked.method).toBe('item/commandExecution/requestApproval');
    expect(asked.params.command).toBe('mcp__docs__search {"q":"x"}');
    expect(schema.errorsAgainst('codex#/definitions/ServerRequest', { id: 0, ...asked })).toEqual([]);
  });

  it('maps every Codex decision and refuses one that is none, naming what it got', () => {
    expect(decisionOf({ decision: 'accept' })).toEqual({ decision: 'allow_once' });
    expect(decisionOf({ decision: 'acceptForSession' })).toEqual({ decision: 'allow_session' });
    expect(decisionOf({ decision: 'decline' })).toEqual({ decision: 'deny' });
    expect(decisionOf({ decision: 'cancel' })).toEqual({ decision: 'deny_interrupt' });
    expect(decisionOf({ decision: { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['npm', 'test'] } } })).toEqual({ decision: 'allow_prefix', prefix: ['npm', 'test'] });
    expect(() => decisionOf({ decision: 'maybe' })).toThrow(/result\.decision must be .* got "maybe"/);
    expect(() => decisionOf(undefined)).toThrow(/got undefined/);
  });
});

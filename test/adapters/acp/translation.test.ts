/**
 * The translations of the ACP adapter that the end-to-end tests cannot reach with the mock
 * provider: every stop reason, diffs of added and deleted files, tool kinds, the editor's
 * answers to permission requests, and the MCP servers and prompt blocks it refuses.
 */
import { describe, expect, it } from 'vitest';
import { promptParts, contentBlock } from '../../../src/adapters/acp/content.js';
import { conversationMcpServers } from '../../../src/adapters/acp/mcp-servers.js';
import { approvalAnswer, permissionOptions } from '../../../src/adapters/acp/permissions.js';
import { eventUpdates, itemUpdates, type UpdateContext } from '../../../src/adapters/acp/session-updates.js';
import { stopReason } from '../../../src/adapters/acp/stop-reason.js';
import { diffTexts, toolKind } from '../../../src/adapters/acp/tool-calls.js';
import { approvalOptions, type AnyNotification, type ApprovalRequest, type Item, type Turn } from '../../../src/protocol/index.js';

const turn = (status: Turn['status'], reason?: Turn['stopReason']): Turn => ({
  id: 'turn_1',
  sessionId: 'sess_1',
  conversationId: 'conv_1',
  status,
  steps: 1,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  startedAt: 0,
  completedAt: 1,
  ...(reason ? { stopReason: reason } : {}),
});

describe('ACP translation', () => {
  it('maps how a turn ended to the stop reason, and a failed turn to none (an error)', () => {
    expect(stopReason(turn('completed', 'end_turn'))).toBe('end_turn');
    expect(stopReason(turn('completed', 'max_tokens'))).toBe('max_tokens');
    expect(stopReason(turn('completed', 'refusal'))).toBe('refusal');
    // The step limit ends a turn as interrupted, but it is not the user's cancel.
    expect(stopReason(turn('interrupted', 'step_limit'))).toBe('max_turn_requests');
    expect(stopReason(turn('interrupted', 'shutdown'))).toBe('cancelled');
    expect(stopReason(turn('interrupted'))).toBe('cancelled');
    expect(stopReason(turn('interrupted', 'user_interrupt'))).toBe('cancelled');
    expect(stopReason(turn('failed', 'model_error'))).toBeUndefined();
    expect(stopReason(turn('failed', 'hook_refused'))).toBeUndefined();
  });

  it('turns unified diffs into old and new text, with none for an added file and empty for a deleted one', () => {
    expect(diffTexts({ path: 'a.txt', kind: 'add', unifiedDiff: '--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n' })).toEqual({ oldText: null, newText: 'one\ntwo' });
    expect(diffTexts({ path: 'a.txt', kind: 'delete', unifiedDiff: '--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n' })).toEqual({ oldText: 'gone', newText: '' });
    expect(diffTexts({ path: 'a.txt', kind: 'update', unifiedDiff: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n\\ No newline at end of file\n' })).toEqual({ oldText: 'keep\nold', newText: 'keep\nnew' });
  });

  it('gives each tool its ACP kind, from details first', () => {
    expect(toolKind({ toolName: 'exec_command', arguments: {} })).toBe('execute');
    expect(toolKind({ toolName: 'anything', arguments: {}, details: { kind: 'search', tool: 'grep', pattern: 'x', path: '/w' } })).toBe('search');
    expect(toolKind({ toolName: 'apply_patch', arguments: {}, details: { kind: 'fileChange', changes: [{ path: 'a', kind: 'delete', unifiedDiff: '' }] } })).toBe('delete');
    expect(toolKind({ toolName: 'update_plan', arguments: {} })).toBe('think');
    expect(toolKind({ toolName: 'mcp__docs__search', arguments: {}, details: { kind: 'mcp', server: 'docs', tool: 'search' } })).toBe('other');
  });

  it('offers the server options as permission options and sends back the decision chosen, with its prefix', () => {
    const approval = { approvalId: 'appr_1', itemId: 'item_1', options: approvalOptions(['git', 'status']) } as ApprovalRequest;
    expect(permissionOptions(approval.options).map((option) => option.kind)).toEqual(['allow_once', 'allow_always', 'allow_always', 'reject_once', 'reject_once']);
    expect(approvalAnswer(approval, { outcome: { outcome: 'selected', optionId: 'allow_prefix' } })).toEqual({ decision: 'allow_prefix', prefix: ['git', 'status'] });
    expect(approvalAnswer(approval, { outcome: { outcome: 'cancelled' } }).decision).toBe('deny');
    expect(() => approvalAnswer(approval, { outcome: { outcome: 'selected', optionId: 'allow_forever' } })).toThrow('the editor selected option "allow_forever", which was not offered');
  });

  it('maps the editor MCP servers to mcp.yaml entries and refuses duplicates', () => {
    expect(conversationMcpServers([])).toBeUndefined();
    expect(
      conversationMcpServers([
        { name: 'files', command: 'mcp-files', args: ['--root', '/w'], env: [{ name: 'TOKEN', value: 'x' }] },
        { type: 'http', name: 'tracker', url: 'https://tracker.example/mcp', headers: [{ name: 'Authorization', value: 'Bearer y' }] },
      ]),
    ).toEqual({
      files: { transport: 'stdio', command: 'mcp-files', args: ['--root', '/w'], env: { TOKEN: 'x' } },
      tracker: { transport: 'http', url: 'https://tracker.example/mcp', headers: { Authorization: 'Bearer y' } },
    });
    expect(() => conversationMcpServers([{ name: 'a', command: 'x', args: [], env: [] }, { name: 'a', command: 'y', args: [], env: [] }])).toThrow('mcpServers[1]: a second server named "a"');
  });

  it('refuses binary embedded resources that are not images, and keeps parts round-trippable', () => {
    expect(() => promptParts([{ type: 'text', text: 'x' }, { type: 'resource', resource: { uri: 'file:///w/a.bin', blob: 'AAAA', mimeType: 'application/zip' } }])).toThrow('prompt[1]: embedded resource file:///w/a.bin is binary data of type application/zip');
    expect(promptParts([{ type: 'resource_link', name: 'page', uri: 'https://example.org/page' }])).toEqual([{ type: 'text', text: '[linked resource page: https://example.org/page]' }]);
    expect(contentBlock({ type: 'image', url: 'data:image/png;base64,AAAA', mediaType: 'image/png' })).toEqual({ type: 'image', mimeType: 'image/png', data: 'AAAA' });
    expect(contentBlock({ type: 'file', path: '/w/main.ts', name: 'main.ts' })).toEqual({ type: 'resource_link', name: 'main.ts', uri: 'file:///w/main.ts' });
  });

  it('ends an answer the provider cut off with a mark, live and in a replay, so the retried answer does not run on from it', () => {
    const context: UpdateContext = { root: '/w', isOwnInput: () => false, streamed: new Set(), outputs: new Map(), notices: false };
    const answer = (id: string, status: Item['status'], text: string): Item => ({ id, sessionId: 's', turnId: 't', createdAt: 1, completedAt: 2, status, kind: 'assistant_message', text, model: 'm' });
    const live = (event: object) => eventUpdates(event as AnyNotification, context);
    const texts = [
      ...live({ method: 'item/delta', params: { conversationId: 'c', sessionId: 's', turnId: 't', itemId: 'a1', kind: 'assistant_message', delta: { text: 'The answer is' } } }),
      ...live({ method: 'item/completed', params: { conversationId: 'c', sessionId: 's', seq: 1, item: answer('a1', 'failed', 'The answer is') } }),
      ...live({ method: 'item/delta', params: { conversationId: 'c', sessionId: 's', turnId: 't', itemId: 'a2', kind: 'assistant_message', delta: { text: 'The answer is 42.' } } }),
      ...live({ method: 'item/completed', params: { conversationId: 'c', sessionId: 's', seq: 2, item: answer('a2', 'completed', 'The answer is 42.') } }),
    ].map((update) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : ''));
    expect(texts.join('')).toBe('The answer is [cut off]\n\nThe answer is 42.');
    const replayed = itemUpdates(answer('a1', 'failed', 'The answer is'), context, true);
    expect(replayed.map((update) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : '')).join('')).toBe('The answer is [cut off]\n\n');
    expect(itemUpdates(answer('a3', 'interrupted', 'stopp'), context, true)).toHaveLength(1);
  });
});

/**
 * Codex app-server thread items that are tool calls keep what they produced: an MCP call's
 * result (its images as placeholders) or its error, a client tool's output, a web search and
 * an image view, instead of a call with no output.
 */
import { describe, expect, it } from 'vitest';
import { itemCompleted, type CodexItem } from '../../../src/runtime/external-agents/codex-items.js';
import type { ExternalTurnItems } from '../../../src/runtime/external-agents/turn-items.js';
import type { TurnContext } from '../../../src/runtime/turn-runner.js';

/** Records the tool calls finished, by item id. */
function recorder(): { items: ExternalTurnItems; finished: Map<string, { toolName: string; status: string; output?: string }> } {
  const started = new Map<string, string>();
  const finished = new Map<string, { toolName: string; status: string; output?: string }>();
  const items = {
    startToolCall: (key: string, call: { toolName: string }) => started.set(key, call.toolName),
    finishToolCall: async (key: string, result: { status: string; output?: string }) => {
      finished.set(key, { toolName: started.get(key) ?? '?', status: result.status, ...(result.output !== undefined ? { output: result.output } : {}) });
    },
    appendText: () => undefined,
    finishText: async () => undefined,
  } as unknown as ExternalTurnItems;
  return { items, finished };
}

const context = { cwd: '/home/user/project' } as TurnContext;

describe('Codex tool items, completed', () => {
  it('keep the output each produced', async () => {
    const { items, finished } = recorder();
    const completed: CodexItem[] = [
      { type: 'mcpToolCall', id: 'mcp_ok', server: 'docs', tool: 'search', arguments: { q: 'x' }, status: 'completed', result: { content: [{ type: 'text', text: 'found 2 pages' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }] } },
      { type: 'mcpToolCall', id: 'mcp_failed', server: 'docs', tool: 'search', arguments: {}, status: 'failed', error: { message: 'the server timed out' } },
      { type: 'dynamicToolCall', id: 'dynamic', tool: 'lookup', namespace: 'editor', arguments: {}, status: 'completed', success: false, contentItems: [{ type: 'inputText', text: 'no such symbol' }, { type: 'inputImage', imageUrl: 'data:image/jpeg;base64,AAAA' }] },
      { type: 'webSearch', id: 'search', query: 'node 20 release' },
      { type: 'imageView', id: 'view', path: '/home/user/project/shot.png' },
    ];
    for (const item of completed) await itemCompleted(item, items, context);
    expect(Object.fromEntries(finished)).toEqual({
      mcp_ok: { toolName: 'mcp__docs__search', status: 'completed', output: 'found 2 pages\n[image image/png, 3 bytes]' },
      mcp_failed: { toolName: 'mcp__docs__search', status: 'failed', output: 'the server timed out' },
      dynamic: { toolName: 'editor__lookup', status: 'failed', output: 'no such symbol\n[image image/jpeg]' },
      search: { toolName: 'web_search', status: 'completed', output: 'searched the web for: node 20 release' },
      view: { toolName: 'view_image', status: 'completed', output: 'viewed the image /home/user/project/shot.png' },
    });
  });
});

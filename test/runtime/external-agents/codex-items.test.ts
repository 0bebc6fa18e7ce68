/**
 * Codex app-server thread items that are tool calls keep what they produced: an MCP call's
 * result (its images as placeholders) or its error, a client tool's output, a web search and
 * an image view, instead of a call with no output. Reasoning keeps its summary parts and the
 * raw reasoning text.
 */
import { describe, expect, it } from 'vitest';
import type { Item } from '../../../src/protocol/index.js';
import { applyDelta, itemCompleted, type CodexItem } from '../../../src/runtime/external-agents/codex-items.js';
import { ExternalTurnItems } from '../../../src/runtime/external-agents/turn-items.js';
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

describe('Codex reasoning items', () => {
  /** A real ExternalTurnItems over a context that records what reaches the session. */
  function session() {
    const recorded: Item[] = [];
    const deltas: unknown[] = [];
    const turnContext = {
      cwd: '/home/user/project',
      sessionId: 'sess_1',
      turnId: 'turn_1',
      itemStarted: () => undefined,
      itemDelta: (_itemId: string, delta: unknown) => deltas.push(delta),
      record: async (item: Item) => void recorded.push(item),
    } as unknown as TurnContext;
    return { items: new ExternalTurnItems(turnContext, 'codex/test'), recorded, deltas, turnContext };
  }

  it('keep the summary in its parts and the raw reasoning, streamed and completed', async () => {
    const { items, recorded, deltas, turnContext } = session();
    expect(applyDelta('item/reasoning/summaryTextDelta', { itemId: 'rs_1', delta: 'Reading.', summaryIndex: 0 }, items)).toBe(true);
    expect(applyDelta('item/reasoning/summaryTextDelta', { itemId: 'rs_1', delta: 'Planning.', summaryIndex: 1 }, items)).toBe(true);
    expect(applyDelta('item/reasoning/textDelta', { itemId: 'rs_1', delta: 'the user wants a plan' }, items)).toBe(true);
    expect(deltas).toEqual([{ reasoning: 'Reading.', partIndex: 0 }, { reasoning: 'Planning.', partIndex: 1 }, { reasoningRaw: 'the user wants a plan' }]);
    await itemCompleted({ type: 'reasoning', id: 'rs_1', summary: ['Reading.', 'Planning.'], content: ['the user wants a plan', 'then write it'] }, items, turnContext);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ kind: 'reasoning', summary: 'Reading.\n\nPlanning.', summaryParts: ['Reading.', 'Planning.'], rawText: 'the user wants a plan\n\nthen write it' });
  });

  it('keep the raw reasoning streamed when the turn ends before the item completes, and store nothing for an empty one', async () => {
    const { items, recorded } = session();
    applyDelta('item/reasoning/textDelta', { itemId: 'rs_2', delta: 'half a thought' }, items);
    await items.finishTexts('interrupted');
    expect(recorded[0]).toMatchObject({ kind: 'reasoning', status: 'interrupted', rawText: 'half a thought' });
    await itemCompleted({ type: 'reasoning', id: 'rs_3', summary: [], content: [] }, items, context);
    expect(recorded).toHaveLength(1);
  });
});

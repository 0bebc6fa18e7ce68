/**
 * The web UI's pure state rules: unified diffs parsed into numbered lines and side-by-side
 * rows, review comments as one input, and the conversation state's handling of replays,
 * rewinds and items in progress (docs/protocol.md, "Reconnecting with afterSeq").
 */
import { describe, expect, it } from 'vitest';
import type { AnyNotification, Item, Session } from '../../src/protocol/index.js';
import { parseUnifiedDiff, splitRows } from '../../src/www/components/diff-parse.js';
import { ConversationState, type ConversationRequester } from '../../src/www/state/conversation-state.js';
import { reviewText } from '../../src/www/state/review.js';

const DIFF = ['--- a/src/sum.js', '+++ b/src/sum.js', '@@ -1,3 +1,3 @@', ' export function sum(a, b) {', '-  return a - b;', '+  return a + b;', ' }', '\\ No newline at end of file'].join('\n');

function session(overrides: Partial<Session> = {}): Session {
  return { id: 'sess_1', conversationId: 'conv_1', parentSessionId: null, agent: 'default', model: 'mock/m', status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], createdAt: 1, updatedAt: 1, ...overrides };
}

function message(id: string, text: string): Item {
  return { id, sessionId: 'sess_1', turnId: 'turn_1', createdAt: 1, completedAt: 1, status: 'completed', kind: 'assistant_message', text, model: 'mock/m' };
}

function completed(seq: number, item: Item): AnyNotification {
  return { method: 'item/completed', params: { conversationId: 'conv_1', sessionId: 'sess_1', seq, item } };
}

/** A server double that records each subscription's params and answers with `sessions`. */
function requester(sessions: () => Session[]): ConversationRequester & { calls: unknown[] } {
  const calls: unknown[] = [];
  const request = async (method: string, params: unknown): Promise<unknown> => {
    if (method === 'items/list') return { items: [] };
    calls.push(params);
    return { conversation: { id: 'conv_1', title: 't', workLocation: [{ executor: 'local', cwd: '/w' }], rootSessionId: 'sess_1', createdAt: 1, updatedAt: 1 }, sessions: sessions(), turns: [], heads: {}, metadataSeq: 0 };
  };
  return { calls, request: request as ConversationRequester['request'] };
}

describe('unified diff parsing', () => {
  it('numbers old and new lines from the hunk header and pairs removals with additions side by side', () => {
    const lines = parseUnifiedDiff(DIFF);
    expect(lines.map((line) => [line.type, line.oldNumber, line.newNumber])).toEqual([
      ['hunk', undefined, undefined],
      ['context', 1, 1],
      ['del', 2, undefined],
      ['add', undefined, 2],
      ['context', 3, 3],
      ['meta', undefined, undefined],
    ]);
    const rows = splitRows(lines);
    expect(rows[2]).toEqual({ left: lines[2], right: lines[3] });
    expect(rows).toHaveLength(5);
  });

  it('turns review comments into one input quoting each line', () => {
    const text = reviewText([
      { path: 'src/sum.js', line: 2, side: 'new', code: '  return a + b;', text: 'add a test' },
      { path: 'src/sum.js', line: 2, side: 'old', code: '  return a - b;', text: ' why was this here? ' },
    ]);
    expect(text).toBe('Review comments on your changes:\n\nsrc/sum.js:2\n>   return a + b;\nadd a test\n\nsrc/sum.js:2 (removed line)\n>   return a - b;\nwhy was this here?');
  });
});

describe('conversation state', () => {
  it('ignores stored items it holds already, and resubscribes with afterSeq and dropped items in progress', async () => {
    const server = requester(() => [session()]);
    const state = new ConversationState(server, 'conv_1');
    await state.subscribe();
    // Opened the first time: nothing stored replayed, the newest items read with items/list.
    expect(server.calls[0]).toEqual({ conversationId: 'conv_1', afterSeq: 'head' });
    state.handle(completed(1, message('item_a', 'one')));
    state.handle(completed(2, message('item_b', 'two')));
    state.handle(completed(2, message('item_b', 'two')));
    state.handle({ method: 'item/started', params: { conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', itemId: 'item_c', kind: 'assistant_message', seq: 2, partial: {} } });
    state.handle({ method: 'item/delta', params: { conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', itemId: 'item_c', kind: 'assistant_message', seq: 2, delta: { text: 'thr' } } });
    expect(state.itemsOf('sess_1').map((stored) => stored.item.id)).toEqual(['item_a', 'item_b']);
    expect(state.live.get('item_c')?.text).toBe('thr');
    // Another conversation's events change nothing.
    state.handle({ ...completed(3, message('item_x', 'other')), params: { ...(completed(3, message('item_x', 'other')).params as object), conversationId: 'conv_2' } } as AnyNotification);
    expect(state.itemsOf('sess_1')).toHaveLength(2);

    await state.subscribe();
    expect(server.calls[1]).toEqual({ conversationId: 'conv_1', afterSeq: { sess_1: 2 } });
    expect(state.live.size).toBe(0);
  });

  it('drops what a rewind removed, live or while away, and sends the epoch on the next subscription', async () => {
    let current = [session()];
    const server = requester(() => current);
    const state = new ConversationState(server, 'conv_1');
    await state.subscribe();
    for (const [seq, id] of [[1, 'item_a'], [2, 'item_b'], [3, 'item_c']] as const) state.handle(completed(seq, message(id, id)));
    state.handle({ method: 'session/rewound', params: { conversationId: 'conv_1', sessionId: 'sess_1', afterSeq: 1, historyEpoch: 1, rewoundTurnIds: [] } });
    expect(state.itemsOf('sess_1').map((stored) => stored.item.id)).toEqual(['item_a']);
    // The next item reuses seq 2 with another item.
    state.handle(completed(2, message('item_d', 'd')));
    expect(state.itemsOf('sess_1').map((stored) => stored.item.id)).toEqual(['item_a', 'item_d']);

    // While away, a second rewind to seq 0: the subscription answer's session says so.
    current = [session({ historyEpoch: 2, rewoundAfterSeq: 0 })];
    await state.subscribe();
    expect(server.calls[1]).toEqual({ conversationId: 'conv_1', afterSeq: { sess_1: 2 }, historyEpoch: { sess_1: 1 } });
    expect(state.itemsOf('sess_1')).toEqual([]);
  });

  it('shows approvals from the session until one is resolved anywhere', async () => {
    const approval = { approvalId: 'appr_1', conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', callId: 'call_1', itemId: 'item_t', toolName: 'exec_command', arguments: {}, options: [], reason: 'rule 1', requestedAt: 1 };
    const state = new ConversationState(requester(() => [session({ pendingApprovals: [approval] })]), 'conv_1');
    await state.subscribe();
    expect([...state.approvals.keys()]).toEqual(['appr_1']);
    state.handle({ method: 'approval/resolved', params: { conversationId: 'conv_1', approvalId: 'appr_1', sessionId: 'sess_1', turnId: 'turn_1', callId: 'call_1', itemId: 'item_t', decision: 'allow_once', decidedBy: 'client:other-tab' } });
    expect(state.approvals.size).toBe(0);
  });

  it('keeps the warnings of the latest turn until the next turn starts', async () => {
    const state = new ConversationState(requester(() => [session()]), 'conv_1');
    await state.subscribe();
    const warning = { conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', source: 'mcp_server' as const, name: 'files', message: 'MCP server "files" could not be started: command "x" was not found' };
    state.handle({ method: 'turn/warning', params: warning });
    expect(state.warnings).toEqual([warning]);
    const turn = { id: 'turn_2', conversationId: 'conv_1', sessionId: 'sess_1', status: 'running' as const, steps: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, startedAt: 2 };
    state.handle({ method: 'turn/completed', params: { conversationId: 'conv_1', turn: { ...turn, id: 'turn_1', status: 'completed', completedAt: 3 } } } as never);
    expect(state.warnings).toEqual([warning]);
    state.handle({ method: 'turn/started', params: { conversationId: 'conv_1', turn } } as never);
    expect(state.warnings).toEqual([]);
  });
});

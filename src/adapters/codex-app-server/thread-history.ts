/**
 * A thread's history for Codex: the root session's stored items grouped into Codex turns
 * (`thread/read` with `includeTurns`, `thread/resume`, `thread/rollback`), read page by page
 * with `items/list`.
 */
import type { RuntimeClient } from '../../client/runtime-client.js';
import { toCodexId } from '../../protocol/codex-ids.js';
import type { Conversation, Item, Turn } from '../../protocol/index.js';
import { turnOf } from './entities.js';
import { threadItemOf } from './items.js';

/** Items fetched per `items/list` page. */
const PAGE = 500;

/** Every stored item of a session, oldest first. */
export async function sessionItems(runtime: RuntimeClient, conversationId: string, sessionId: string): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: number | undefined;
  for (;;) {
    const page = await runtime.request('items/list', { conversationId, sessionId, direction: 'forward', limit: PAGE, ...(cursor !== undefined ? { cursor } : {}) });
    items.push(...page.items.map((stored) => stored.item));
    if (page.nextCursor === undefined || page.items.length === 0) return items;
    cursor = page.nextCursor;
  }
}

/** The root session's turns that still count (not rewound), oldest first. */
export function liveTurns(turns: readonly Turn[], rootSessionId: string): Turn[] {
  return turns.filter((turn) => turn.sessionId === rootSessionId && turn.rewound !== true).sort((a, b) => a.startedAt - b.startedAt);
}

/** The root session's live turns as Codex turns, each with its items. */
export async function codexTurns(runtime: RuntimeClient, conversation: Conversation, turns: readonly Turn[]): Promise<object[]> {
  const rootSessionId = conversation.rootSessionId;
  const items = await sessionItems(runtime, conversation.id, rootSessionId);
  const byTurn = new Map<string, object[]>();
  const place = { sessionThreadId: toCodexId(rootSessionId), cwd: conversation.workLocation[0]?.cwd ?? '/' };
  for (const item of items) {
    const codexItem = threadItemOf(item, place);
    if (!codexItem) continue;
    const list = byTurn.get(item.turnId) ?? [];
    list.push(codexItem);
    byTurn.set(item.turnId, list);
  }
  return liveTurns(turns, rootSessionId).map((turn) => turnOf(turn, byTurn.get(turn.id) ?? []));
}

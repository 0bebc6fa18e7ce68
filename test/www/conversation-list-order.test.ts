/**
 * The web UI's conversation list keeps the server's order as notifications arrive: newest
 * update first, and conversations updated in the same millisecond by id, newest first
 * (`ORDER BY updated_at DESC, conversation_id DESC` of the index).
 */
import { expect, it } from 'vitest';
import type { AnyNotification, ConversationSummary } from '../../src/protocol/index.js';
import { ConversationListState } from '../../src/www/state/conversation-list-state.js';

function summary(id: string, updatedAt: number): ConversationSummary {
  return { id, title: id, cwd: '/work', createdAt: 1, updatedAt, archived: false, status: 'idle', itemCount: 0 } as unknown as ConversationSummary;
}

it('orders conversations updated in the same millisecond by id, newest first, whatever order they arrive in', () => {
  const list = new ConversationListState({ request: () => Promise.reject(new Error('not used')) } as never);
  const created = (entry: ConversationSummary) => ({ method: 'conversation/created', params: { summary: entry } }) as unknown as AnyNotification;
  list.handle(created(summary('conv_01b', 500)));
  list.handle(created(summary('conv_01a', 500)));
  list.handle(created(summary('conv_01c', 500)));
  list.handle(created(summary('conv_01d', 400)));
  expect(list.conversations.map((entry) => entry.id)).toEqual(['conv_01c', 'conv_01b', 'conv_01a', 'conv_01d']);
});

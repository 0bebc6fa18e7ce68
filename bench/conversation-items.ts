/**
 * The conversation content the UI benchmarks (`web-paint.ts`, `tui-render.ts`) open: items
 * written straight into a conversation's log, without model calls, and the conversations
 * that hold them.
 */
import type { RuntimeClient } from '../src/client/runtime-client.js';
import type { Item } from '../src/protocol/index.js';
import type { RunningServer } from '../src/server/runtime-server.js';

/** Items per turn in {@link makeConversationItems}. */
export const ITEMS_PER_TURN = 5;

/**
 * `count` completed items of a realistic mix for session `sessionId`, in turns of
 * {@link ITEMS_PER_TURN}: a user message, reasoning, a Markdown answer with a code block, a
 * command with output, and a closing answer. Ids and turn ids are zero-padded sequence
 * numbers, so items sort in creation order; every item is stamped with the current time (ms).
 */
export function makeConversationItems(sessionId: string, count: number): Item[] {
  const now = Date.now();
  const base = (index: number) => ({ id: `item_${String(index).padStart(26, '0')}`, sessionId, turnId: `turn_${String(Math.floor(index / ITEMS_PER_TURN)).padStart(26, '0')}`, createdAt: now, completedAt: now, status: 'completed' as const });
  return Array.from({ length: count }, (_, index): Item => {
    switch (index % ITEMS_PER_TURN) {
      case 0:
        return { ...base(index), kind: 'user_message', content: [{ type: 'text', text: `Question ${index}: why does the test on line ${index % 97} fail?` }], mode: 'input' };
      case 1:
        return { ...base(index), kind: 'reasoning', summary: `Looking at the failing assertion of question ${index}.` };
      case 2:
        return { ...base(index), kind: 'assistant_message', model: 'mock/mock-model', text: `The **sum** is wrong in step ${index}:\n\n\`\`\`ts\nexport function sum(a: number, b: number): number {\n  return a + b; // was a - b\n}\n\`\`\`\n\n- first point\n- second point` };
      case 3:
        return {
          ...base(index),
          kind: 'tool_call',
          callId: `call_${index}`,
          toolName: 'exec_command',
          arguments: { command: 'npm test' },
          output: `ok ${index}\n`,
          isError: false,
          exitCode: 0,
          durationMs: 120,
          details: { kind: 'command', command: 'npm test', cwd: '/work', exitCode: 0, signal: null, durationMs: 120, output: `> test\nok ${index}\n` },
        };
      default:
        return { ...base(index), kind: 'assistant_message', model: 'mock/mock-model', text: `Fixed; the tests pass (${index}).` };
    }
  });
}

/**
 * Creates a conversation titled `<count> items` in `cwd`, runs one turn so it is stored (a
 * new conversation is only staged until its first input; the mock provider behind `server`
 * must answer that turn), then appends {@link makeConversationItems} of `count` items to its
 * log directly through the server's store. The client stays subscribed to the conversation.
 * @returns the conversation's id and the items appended, oldest first
 */
export async function createConversationWithItems(client: RuntimeClient, server: RunningServer, cwd: string, count: number): Promise<{ conversationId: string; items: Item[] }> {
  const { conversation, session } = await client.request('conversation/create', { cwd, title: `${count} items` });
  await client.request('conversation/subscribe', { conversationId: conversation.id, afterSeq: 'head' });
  const ended = new Promise<void>((resolve) => {
    const stop = client.onNotification((event) => {
      if (event.method === 'turn/completed' && event.params.conversationId === conversation.id) {
        stop();
        resolve();
      }
    });
  });
  await client.request('session/input', { conversationId: conversation.id, input: 'start' });
  await ended;
  const items = makeConversationItems(session.id, count);
  await server.runtime.store.appendItems(conversation.id, session.id, items);
  return { conversationId: conversation.id, items };
}

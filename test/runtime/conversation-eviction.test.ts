/**
 * Idle conversations are closed (their items leave memory, their MCP servers stop) and opened
 * again from storage on next use, without anyone noticing: never one with a client attached,
 * a turn running or queued, or a write pending.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';

let harness: InProcessServer | undefined;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** Runs one answered turn in each of `count` new conversations, in order; `unsubscribe` detaches the client from each after its turn. */
async function answeredConversations(running: InProcessServer, count: number, unsubscribe: boolean): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const conversationId = await running.conversation();
    await running.client.request('session/input', { conversationId, input: `question ${index}` });
    await running.turnsCompleted(index + 1);
    if (unsubscribe) await running.client.request('conversation/unsubscribe', { conversationId });
    ids.push(conversationId);
  }
  return ids;
}

/** Far enough in the future that every conversation is past the grace given to a conversation just used. */
const later = () => Date.now() + 30_000;

describe('idle conversation eviction', () => {
  it('closes the oldest idle conversation beyond the number bound within about a second of another becoming idle, on its own', async () => {
    harness = await startInProcessServer('responses:\n  - text: "one"\n  - text: "two"\n', { limits: { maxIdleOpenConversations: 1, idleConversationMs: 3_600_000 } });
    const { client, server } = harness;
    const ids = await answeredConversations(harness, 2, false);
    // Both stay open while a client watches them.
    expect(server.runtime.openConversationCount).toBe(2);
    const [older, newer] = ids as [string, string];
    await client.request('conversation/unsubscribe', { conversationId: older });
    // Past the older one's grace (5 s): one idle conversation is allowed, so it stays.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    expect(server.runtime.openConversationCount).toBe(2);
    const idleAt = Date.now();
    await client.request('conversation/unsubscribe', { conversationId: newer });
    // The newer one, just used, is in its grace (5 s) but counts: the older one closes at the
    // next check (each second), well before the newer one's grace ends; the margin is for a busy machine.
    await until(() => server.runtime.openConversationCount === 1, 4_500, 'the older idle conversation to close');
    expect(Date.now() - idleAt).toBeLessThan(4_500);
    const reopened = await client.request('items/list', { conversationId: older });
    expect(reopened.items.map((entry) => entry.item.kind)).toEqual(['user_message', 'assistant_message']);
  });

  it('closes the least recently used idle conversations beyond the limit, and reopens them from storage intact', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "first answer"
  - text: "second answer"
  - text: "third answer"
  - text: "again"
`,
      { limits: { maxIdleOpenConversations: 1, idleConversationMs: 3_600_000 } },
    );
    const { client, server } = harness;
    const ids = await answeredConversations(harness, 3, true);
    const before = await Promise.all(ids.map((conversationId) => client.request('conversation/get', { conversationId })));
    const evicted = await server.runtime.evictIdleConversations(later());
    // conversation/get above used them in order, so the first two are the least recently used.
    expect(evicted).toEqual(ids.slice(0, 2));
    const after = await Promise.all(ids.map((conversationId) => client.request('conversation/get', { conversationId })));
    expect(after).toEqual(before);
    const [first] = ids as [string];
    const itemsBefore = (await client.request('items/list', { conversationId: first })).items;
    expect(itemsBefore.map((entry) => entry.item.kind)).toEqual(['user_message', 'assistant_message']);
    // A reopened conversation runs turns as before.
    await client.request('conversation/subscribe', { conversationId: first });
    await client.request('session/input', { conversationId: first, input: 'and again' });
    await harness.turnsCompleted(4);
    const itemsAfter = (await client.request('items/list', { conversationId: first })).items;
    expect(itemsAfter.map((entry) => entry.item.kind)).toEqual(['user_message', 'assistant_message', 'user_message', 'assistant_message']);
  });

  it('keeps a conversation with a client attached or a turn running, and closes one unused for the idle time', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "quick"
  - deltas: ["slow ", "answer"]
    holds: [{ afterDeltas: 1, gate: slow }]
`,
      { limits: { maxIdleOpenConversations: 0, idleConversationMs: 60_000 } },
    );
    const { client, server, environment } = harness;
    const attached = await harness.conversation();
    await client.request('session/input', { conversationId: attached, input: 'hi' });
    await harness.turnsCompleted(1);
    const running = await harness.conversation();
    await client.request('conversation/unsubscribe', { conversationId: running });
    await client.request('session/input', { conversationId: running, input: 'take your time' });
    await environment.mock.waitForHold('slow', 10_000);
    expect(await server.runtime.evictIdleConversations(later())).toEqual([]);
    environment.mock.release('slow');
    const live = await server.runtime.getConversation(running);
    await until(() => live.isEvictable, 10_000, 'the running turn to end');
    await client.request('conversation/unsubscribe', { conversationId: attached });
    // Both idle now; with no room for idle conversations, both go once past the grace.
    expect((await server.runtime.evictIdleConversations(later())).sort()).toEqual([attached, running].sort());
    expect(await server.runtime.evictIdleConversations(later())).toEqual([]);
  });

  it('closes an idle conversation whose history holds more text than the bound, keeps a short one, and reopens the long one intact', async () => {
    harness = await startInProcessServer(
      `
responses:
  - generatedText: { deltas: 2000, deltaLength: 8 }
  - text: "short answer"
`,
      { limits: { maxIdleOpenConversations: 16, maxIdleHistoryChars: 5_000, idleConversationMs: 3_600_000 } },
    );
    const { client, server } = harness;
    const long = await harness.conversation();
    await client.request('session/input', { conversationId: long, input: 'a long answer' });
    await harness.turnsCompleted(1);
    await client.request('conversation/unsubscribe', { conversationId: long });
    const short = await harness.conversation();
    await client.request('session/input', { conversationId: short, input: 'a short answer' });
    await harness.turnsCompleted(2);
    await client.request('conversation/unsubscribe', { conversationId: short });
    const answerOf = async (conversationId: string) => {
      const { items } = await client.request('items/list', { conversationId });
      const answer = items.map((entry) => entry.item).find((item) => item.kind === 'assistant_message');
      return answer?.kind === 'assistant_message' ? answer.text : undefined;
    };
    const before = await answerOf(long);
    expect(before).toHaveLength(16_000);
    // The long one was used last (items/list) and the short one holds little: only the long one goes.
    expect(await server.runtime.evictIdleConversations(later())).toEqual([long]);
    expect(await answerOf(long)).toBe(before);
    expect(await answerOf(short)).toBe('short answer');
  });
});


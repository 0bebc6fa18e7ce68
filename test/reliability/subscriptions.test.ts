/**
 * Subscription state is registered before the replay and removed on every way out: an
 * unsubscribe sent right after subscribe is never lost, and clients that disconnect during
 * the replay leave no listener behind.
 */
import { afterEach, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';
import { checkReceivedMessage } from '../setup/protocol-validation.js';

let server: InProcessServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A conversation nobody follows yet, with `count` stored items in its root session. */
async function conversationWithItems(running: InProcessServer, count: number): Promise<{ conversationId: string; sessionId: string }> {
  const { conversation, session } = await running.client.request('conversation/create', { cwd: running.environment.workDir });
  const now = Date.now();
  const items: Item[] = Array.from({ length: count }, (_, index) => ({
    id: `item_${String(index).padStart(26, '0')}`,
    sessionId: session.id,
    turnId: 'turn_00000000000000000000000000',
    createdAt: now,
    completedAt: now,
    status: 'completed',
    kind: 'user_message',
    content: [{ type: 'text', text: `message ${index} ${'x'.repeat(200)}` }],
    mode: 'input',
  }));
  await running.server.runtime.store.appendItems(conversation.id, session.id, items);
  return { conversationId: conversation.id, sessionId: session.id };
}

it('never loses an unsubscribe sent right after subscribe', async () => {
  server = await startInProcessServer('responses: []\n');
  const { conversationId } = await conversationWithItems(server, 600);
  const conversation = await server.server.runtime.getConversation(conversationId);
  const client = await RuntimeClient.connect({ url: server.server.url, token: server.server.token, clientName: 'flip-flop' });
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  for (let attempt = 0; attempt < 20; attempt++) {
    await Promise.all([client.request('conversation/subscribe', { conversationId }), client.request('conversation/unsubscribe', { conversationId })]);
  }
  // Give a late registration the time it would need to show up.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(conversation.subscriberCount).toBe(0);
  events.length = 0;
  await server.client.request('conversation/update', { conversationId, title: 'renamed' });
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(events).toEqual([]);
  await client.close();
});

it('leaves no listener behind for clients that disconnect during the replay', async () => {
  server = await startInProcessServer('responses: []\n');
  const { conversationId } = await conversationWithItems(server, 3000);
  const conversation = await server.server.runtime.getConversation(conversationId);
  const url = `${server.server.url.replace('http', 'ws')}/api/v1/openvaala`;
  for (let round = 0; round < 10; round++) {
    await Promise.all(
      Array.from({ length: 10 }, async (_, index) => {
        const socket = new WebSocket(url, { headers: { authorization: `Bearer ${server!.server.token}` } });
        await new Promise((resolve, reject) => {
          socket.once('open', resolve);
          socket.once('error', reject);
        });
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'early-leaver' } } }));
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'conversation/subscribe', params: { conversationId } }));
        // Leave right away (a clean close right behind the request), or on the subscribe result
        // (the replay starts right after it).
        if (index % 2 === 0) {
          socket.close();
          return;
        }
        await new Promise<void>((resolve) =>
          socket.on('message', (data) => {
            checkReceivedMessage(socket, data.toString());
            if (JSON.parse(data.toString()).id === 2) resolve();
          }),
        );
        socket.terminate();
      }),
    );
  }
  await until(() => conversation.subscriberCount === 0, 5000, `the listeners to go (still ${conversation.subscriberCount})`);
  // And they stay gone once every replay would have finished.
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(conversation.subscriberCount).toBe(0);
});

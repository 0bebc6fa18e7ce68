/**
 * The web UI's protocol client and conversation state against a real runtime server (loopback,
 * mock provider): streaming into the state, reconnecting by itself after the connection drops
 * mid-turn and resubscribing with `afterSeq` so the items held equal the log (`items/list`),
 * with no item lost or doubled; a refused token stops the retries.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { StoredItem } from '../../src/protocol/index.js';
import { ProtocolClient, type WebSocketLike } from '../../src/www/client/protocol-client.js';
import { ConversationListState } from '../../src/www/state/conversation-list-state.js';
import { ConversationState } from '../../src/www/state/conversation-state.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';

const SCRIPT = `
responses:
  - deltas: ["Hello ", "from ", "the ", "mock."]
    holds:
      - { afterDeltas: 2, gate: mid-answer }
  - text: "A second answer."
`;

function createSocket(url: string, protocols: string[]): WebSocketLike {
  return new WebSocket(url, protocols) as unknown as WebSocketLike;
}

async function logOf(server: InProcessServer, conversationId: string, sessionId: string): Promise<StoredItem[]> {
  const page = await server.client.request('items/list', { conversationId, sessionId, limit: 1000 });
  return page.items;
}

describe('web protocol client', () => {
  let server: InProcessServer;
  let client: ProtocolClient | undefined;

  beforeEach(async () => {
    server = await startInProcessServer(SCRIPT);
  });
  afterEach(async () => {
    client?.stop();
    client = undefined;
    await server.server.stop();
    await server.environment.dispose();
  });

  it('streams into the conversation state, reconnects after a drop mid-turn and ends with the items of the log, none doubled', async () => {
    client = new ProtocolClient({ origin: server.server.url, token: server.server.token, clientName: 'web-test', createSocket, initialDelayMs: 20 });
    const conversationId = await server.conversation();
    const state = new ConversationState(client, conversationId);
    client.onNotification((event) => state.handle(event));
    client.onStatus((status) => {
      if (status === 'open') state.subscribe().catch(() => undefined);
    });
    client.start();
    await until(() => state.conversation !== undefined, 10_000, 'the first subscription');
    await client.request('session/input', { conversationId, input: 'hi', clientMessageId: 'first' });
    await server.environment.mock.waitForHold('mid-answer', 10_000);
    await until(() => [...state.live.values()].some((live) => live.text === 'Hello from '), 10_000, 'the streamed text so far');

    const generation = client.generation;
    client.dropConnection();
    await until(() => client?.generation === generation + 1 && state.synced, 10_000, 'the reconnect and its replay');
    // The replay sent the text so far once: what was assembled before the drop was dropped.
    expect([...state.live.values()].map((live) => live.text)).toContain('Hello from ');

    server.environment.mock.release('mid-answer');
    await until(() => [...state.turns.values()].some((turn) => turn.status === 'completed'), 10_000, 'the turn to complete');
    const root = state.conversation?.rootSessionId as string;
    await until(() => state.live.size === 0, 10_000, 'no item left in progress');
    const log = await logOf(server, conversationId, root);
    expect(state.itemsOf(root).map((stored) => [stored.seq, stored.item.id])).toEqual(log.map((stored) => [stored.seq, stored.item.id]));
    const answer = state.itemsOf(root).find((stored) => stored.item.kind === 'assistant_message');
    expect(answer?.item.kind === 'assistant_message' && answer.item.text).toBe('Hello from the mock.');

    // A second drop while idle, then another turn: only the new items arrive, once each.
    client.dropConnection();
    await until(() => client?.generation === generation + 2 && state.synced, 10_000, 'the second reconnect');
    await client.request('session/input', { conversationId, input: 'again', clientMessageId: 'second' });
    await until(() => [...state.turns.values()].filter((turn) => turn.status === 'completed').length === 2, 10_000, 'the second turn');
    await until(() => state.live.size === 0, 10_000, 'no item left in progress');
    const after = await logOf(server, conversationId, root);
    expect(state.itemsOf(root).map((stored) => stored.item.id)).toEqual(after.map((stored) => stored.item.id));
    expect(new Set(state.itemsOf(root).map((stored) => stored.item.id)).size).toBe(after.length);
  });

  it('rejects a request in flight when the connection drops, and sends requests made meanwhile after the reconnect', async () => {
    // A socket that answers initialize and nothing else, so a request stays in flight.
    let sockets = 0;
    let silent: { close: () => void } | undefined;
    const createSilentFirst = (url: string, protocols: string[]): WebSocketLike => {
      sockets += 1;
      const socket = new WebSocket(url, protocols);
      if (sockets === 1) {
        const originalSend = socket.send.bind(socket);
        (socket as unknown as { send: (text: string) => void }).send = (text: string) => {
          if ((JSON.parse(text) as { method: string }).method === 'initialize') originalSend(text);
        };
        silent = { close: () => socket.close() };
      }
      return socket as unknown as WebSocketLike;
    };
    client = new ProtocolClient({ origin: server.server.url, token: server.server.token, clientName: 'web-test', createSocket: createSilentFirst, initialDelayMs: 20 });
    client.start();
    await client.whenOpen();
    const inFlight = client.request('conversation/list', {});
    await new Promise((resolve) => setImmediate(resolve));
    silent?.close();
    await expect(inFlight).rejects.toThrow(/connection closed/);
    const later = await client.request('executors/list', {});
    expect(later.executors.map((executor) => executor.name)).toContain('local');
    expect(sockets).toBe(2);
  });

  it('keeps the conversation list live from the list feed', async () => {
    client = new ProtocolClient({ origin: server.server.url, token: server.server.token, clientName: 'web-test', createSocket, initialDelayMs: 20 });
    const list = new ConversationListState(client);
    client.onNotification((event) => list.handle(event));
    client.start();
    await list.start();
    expect(list.conversations).toEqual([]);
    const { conversation } = await server.client.request('conversation/create', { cwd: server.environment.workDir, title: 'First one' });
    await until(() => list.conversations.some((summary) => summary.id === conversation.id), 10_000, 'the created conversation in the list');
    await server.client.request('conversation/update', { conversationId: conversation.id, title: 'Renamed' });
    await until(() => list.conversations[0]?.title === 'Renamed', 10_000, 'the rename in the list');
    await server.client.request('conversation/archive', { conversationId: conversation.id });
    await until(() => list.conversations.length === 0, 10_000, 'the archived conversation to leave the list');
    await list.setFilters({ archived: true });
    expect(list.conversations.map((summary) => summary.id)).toEqual([conversation.id]);
  });

  it('never opens with a refused token and keeps retrying with backoff', async () => {
    client = new ProtocolClient({ origin: server.server.url, token: 'not-the-token', clientName: 'web-test', createSocket, initialDelayMs: 20 });
    const statuses: string[] = [];
    client.onStatus((status) => statuses.push(status));
    client.start();
    // A refused upgrade (HTTP 401) looks like a network failure to a WebSocket: the client
    // keeps retrying with backoff; the same token in `initialize` is refused with -32001.
    await until(() => statuses.filter((status) => status === 'reconnecting').length >= 2, 10_000, 'retries after the refused upgrade');
    expect(statuses).not.toContain('open');
  });
});

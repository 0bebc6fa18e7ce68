/**
 * A real runtime server started in the test process (HTTP + WebSocket on 127.0.0.1) with the
 * mock provider, and a connected protocol client that records every notification.
 */
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createLogger, type Logger } from '../../src/logger.js';
import type { AnyNotification, Item, Turn } from '../../src/protocol/index.js';
import type { RuntimeLimits } from '../../src/runtime/runtime.js';
import type { PriceLookup } from '../../src/runtime/usage.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from './environment.js';

/** A server, its environment and one client. */
export interface InProcessServer {
  environment: TestEnvironment;
  server: RunningServer;
  client: RuntimeClient;
  /** Every notification the client received, in order. */
  events: AnyNotification[];
  /** Creates a conversation in the work dir and subscribes to it; returns its id. */
  conversation(): Promise<string>;
  /** Waits until `count` turns have completed; returns them. */
  turnsCompleted(count: number, timeoutMs?: number): Promise<Turn[]>;
  /** Waits until an event matches. */
  waitFor(predicate: (event: AnyNotification) => boolean, timeoutMs?: number): Promise<AnyNotification>;
  /** Items completed so far, in order. */
  completedItems(): Item[];
  stop(): Promise<void>;
}

/**
 * Starts a server whose default model is the mock scripted by `scriptYaml`, and connects a
 * client (named `options.clientName`, default `test`).
 */
export async function startInProcessServer(
  scriptYaml: string,
  options: { limits?: Partial<RuntimeLimits>; providersYaml?: (baseURL: string) => string; beforeStart?: (environment: TestEnvironment) => void; logger?: Logger; prices?: PriceLookup; clientName?: string } = {},
): Promise<InProcessServer> {
  const environment = await createTestEnvironment(scriptYaml, options.providersYaml);
  options.beforeStart?.(environment);
  const server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: options.logger ?? createLogger('silent'), ...(options.limits ? { limits: options.limits } : {}), ...(options.prices ? { prices: options.prices } : {}) });
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: options.clientName ?? 'test' });
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  const waitFor = async (predicate: (event: AnyNotification) => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = events.find(predicate);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no matching event within ${timeoutMs} ms; saw ${events.map((event) => event.method).join(', ')}`);
  };
  return {
    environment,
    server,
    client,
    events,
    async conversation() {
      const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
      await client.request('conversation/subscribe', { conversationId: conversation.id });
      return conversation.id;
    },
    async turnsCompleted(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const turns = events.flatMap((event) => (event.method === 'turn/completed' ? [event.params.turn] : []));
        if (turns.length >= count) return turns;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`only ${events.filter((event) => event.method === 'turn/completed').length} of ${count} turns completed`);
    },
    waitFor,
    completedItems() {
      return events.flatMap((event) => (event.method === 'item/completed' ? [event.params.item] : []));
    },
    async stop() {
      await client.close();
      await server.stop();
      await environment.dispose();
    },
  };
}

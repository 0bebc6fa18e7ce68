/**
 * A real server (HTTP + WebSocket on 127.0.0.1, mock provider) whose connections act as the
 * user named by the test-only `x-test-user` upgrade header (no header: the local owner), so
 * platform tests can speak as two users over the real transport.
 */
import { mkdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { LOCAL_OWNER, type Caller } from '../../src/platform/caller.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

/**
 * Header naming the user a test connection acts as (`admin-…` users are administrators;
 * `read-only:<user>` and `project:<projectId>:<user>` act as that user's scoped API tokens).
 */
export const TEST_USER_HEADER = 'x-test-user';

/** The caller an upgrade names with {@link TEST_USER_HEADER}. */
export function testCaller(request: IncomingMessage): Caller {
  const user = request.headers[TEST_USER_HEADER];
  if (typeof user !== 'string') return LOCAL_OWNER;
  // `read-only:<user>` and `project:<projectId>:<user>`: that user's scoped API tokens.
  const readOnly = /^read-only:(.+)$/.exec(user);
  if (readOnly) return { kind: 'api-token', userId: readOnly[1]!, role: 'member', tokenId: 'test-token', scope: { kind: 'read-only' } };
  const scoped = /^project:(proj_[0-9a-z]+):(.+)$/.exec(user);
  if (scoped) return { kind: 'api-token', userId: scoped[2]!, role: 'member', tokenId: 'test-token', scope: { kind: 'project', projectId: scoped[1]! } };
  return { kind: 'user', userId: user, role: user.startsWith('admin-') ? 'admin' : 'member', webSessionId: `test-${user}` };
}

/** A connected client and every message it received (notifications and server requests). */
export interface RecordingClient {
  client: RuntimeClient;
  /** Every notification, in order. */
  events: AnyNotification[];
}

/** A server for platform tests. */
export interface PlatformHarness {
  environment: TestEnvironment;
  server: RunningServer;
  /** Connects as `user` (undefined: the local owner), recording what arrives. */
  connect(user?: string): Promise<RecordingClient>;
  /** A new directory under the work dir. */
  directory(name: string): string;
  stop(): Promise<void>;
}

/** Starts a server for platform tests with the mock scripted by `scriptYaml`. */
export async function startPlatformServer(scriptYaml: string, options: { logger?: Logger; environment?: TestEnvironment; platform?: boolean } = {}): Promise<PlatformHarness> {
  const environment = options.environment ?? (await createTestEnvironment(scriptYaml));
  const server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: options.logger ?? createLogger('silent'), resolveCaller: testCaller, ...(options.platform !== undefined ? { platform: options.platform } : {}) });
  const clients: RuntimeClient[] = [];
  return {
    environment,
    server,
    async connect(user) {
      const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: user ?? 'owner', ...(user ? { headers: { [TEST_USER_HEADER]: user } } : {}), capabilities: { approvals: false, userInput: false } });
      clients.push(client);
      const events: RecordingClient['events'] = [];
      client.onNotification((event) => events.push(event));
      return { client, events };
    },
    directory(name) {
      const directory = path.join(environment.workDir, name);
      mkdirSync(directory, { recursive: true });
      return directory;
    },
    async stop() {
      for (const client of clients) await client.close().catch(() => undefined);
      await server.stop();
      if (!options.environment) await environment.dispose();
    },
  };
}

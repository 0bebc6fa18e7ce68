/**
 * Bad push subscriptions are refused (docs/notifications.md, "Subscriptions"): each error names
 * the method and the key path at fault, and nothing stored changes. The VAPID key pair is made
 * once and kept across restarts; users' subscriptions are their own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, RuntimeClientError } from '../../../src/client/runtime-client.js';
import { createLogger } from '../../../src/logger.js';
import { startRuntimeServer } from '../../../src/server/runtime-server.js';
import { createTestEnvironment } from '../../helpers/environment.js';
import { allowInvalidSentMessages } from '../../setup/protocol-validation.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { startPlatformServer, type PlatformHarness } from '../../platform/two-users.js';

let harness: InProcessServer | undefined;
let platform: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  await platform?.stop();
  harness = undefined;
  platform = undefined;
});

/** A browser's key (65 bytes, starting 0x04) and secret (16 bytes), fixed. */
const P256DH = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url');
const AUTH = Buffer.alloc(16, 9).toString('base64url');
const GOOD = { endpoint: 'https://push.example.org/send/abc', expirationTime: null, keys: { p256dh: P256DH, auth: AUTH } };

async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RuntimeClientError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the request succeeded');
}

describe('notifications/subscribe input', () => {
  it('refuses each malformed subscription naming the key path, and keeps what is stored', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer('responses: []\n');
    const { client } = harness;
    await client.request('notifications/subscribe', { subscription: GOOD });
    const cases: [unknown, RegExp][] = [
      [{ ...GOOD, keys: { p256dh: P256DH } }, /notifications\/subscribe: params\.subscription\.keys\.auth/],
      [{ ...GOOD, keys: { p256dh: P256DH.slice(0, 40), auth: AUTH } }, /params\.subscription\.keys\.p256dh: must encode exactly 65 bytes/],
      [{ ...GOOD, keys: { p256dh: Buffer.alloc(65, 7).toString('base64url'), auth: AUTH } }, /params\.subscription\.keys\.p256dh: must be an uncompressed P-256 point/],
      [{ ...GOOD, keys: { p256dh: P256DH, auth: 'not base64!' } }, /params\.subscription\.keys\.auth: must be base64url text/],
      [{ ...GOOD, keys: { p256dh: P256DH, auth: AUTH, extra: 'x' } }, /params\.subscription\.keys.*extra/],
      [{ ...GOOD, endpoint: 'push.example.org/send' }, /params\.subscription\.endpoint: must be an http\(s\) URL/],
      [{ ...GOOD, endpoint: 'http://push.example.org/send' }, /params\.subscription\.endpoint: must be an https URL \(got http:\/\/push\.example\.org\)/],
      [{ ...GOOD, endpoint: 'http://127.0.0.1:9/send' }, /params\.subscription\.endpoint: http push services on loopback addresses are refused unless server\.yaml sets notifications\.push\.allowLoopbackEndpoints: true/],
      [{ ...GOOD, endpoint: 'https://user:password@push.example.org/send' }, /params\.subscription\.endpoint: must not carry a user name or password/],
      [{ ...GOOD, endpoint: `https://push.example.org/${'a'.repeat(2100)}` }, /params\.subscription\.endpoint/],
      [{ endpoint: GOOD.endpoint }, /params\.subscription\.keys/],
    ];
    for (const [subscription, expected] of cases) {
      const error = await refusal(client.request('notifications/subscribe', { subscription } as never)).catch((failure: Error) => {
        throw new Error(`${JSON.stringify(subscription).slice(0, 120)}: ${failure.message}`);
      });
      expect(error.code, JSON.stringify(subscription).slice(0, 120)).toBe(-32602);
      expect(error.message).toMatch(expected);
    }
    const unsubscribe: [unknown, RegExp][] = [
      [{}, /notifications\/unsubscribe: params: give exactly one of subscriptionId and endpoint/],
      [{ subscriptionId: 'push_00000000000000000000000000000000', endpoint: GOOD.endpoint }, /give exactly one of subscriptionId and endpoint/],
      [{ subscriptionId: '../x' }, /notifications\/unsubscribe: params\.subscriptionId: must be a subscription id from notifications\/list/],
    ];
    for (const [params, expected] of unsubscribe) {
      const error = await refusal(client.request('notifications/unsubscribe', params as never));
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(expected);
    }
    expect((await client.request('notifications/list', {})).subscriptions).toEqual([expect.objectContaining({ endpoint: GOOD.endpoint })]);
  });

  it('keeps the VAPID key pair across restarts', async () => {
    const environment = await createTestEnvironment('responses: []\n');
    try {
      const keys: string[] = [];
      for (let round = 0; round < 2; round += 1) {
        const server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') });
        const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'test' });
        keys.push((await client.request('notifications/publicKey', {})).publicKey);
        await client.close();
        await server.stop();
      }
      expect(keys[1]).toBe(keys[0]);
    } finally {
      await environment.dispose();
    }
  });
});

describe('notifications in platform mode', () => {
  it('a user lists and removes only their own subscriptions; a read-only token may not subscribe', async () => {
    platform = await startPlatformServer('responses: []\n', { platform: true });
    const alice = await platform.connect('alice');
    const bob = await platform.connect('bob');
    const { subscription } = await alice.client.request('notifications/subscribe', { subscription: GOOD });
    expect((await bob.client.request('notifications/list', {})).subscriptions).toEqual([]);
    expect(await bob.client.request('notifications/unsubscribe', { subscriptionId: subscription.id })).toEqual({ removed: false });
    expect((await alice.client.request('notifications/list', {})).subscriptions.map((each) => each.id)).toEqual([subscription.id]);
    const readOnly = await platform.connect('read-only:alice');
    expect((await refusal(readOnly.client.request('notifications/subscribe', { subscription: GOOD }))).message).toMatch(/notifications\/subscribe: this API token is read-only/);
    expect((await readOnly.client.request('notifications/publicKey', {})).publicKey).toMatch(/^B[A-Za-z0-9_-]{86}$/);
  });

  it('removing a user removes their subscriptions', async () => {
    platform = await startPlatformServer('responses: []\n', { platform: true });
    const store = platform.server.platform;
    await store.users.create({ email: 'admin@example.org', role: 'admin' });
    const carol = await store.users.create({ email: 'carol@example.org', role: 'member' });
    const connection = await platform.connect(carol.id);
    await connection.client.request('notifications/subscribe', { subscription: GOOD });
    expect(await store.pushSubscriptions.listOwner(carol.id)).toHaveLength(1);
    await store.removeUser(carol.id);
    expect(await store.pushSubscriptions.listOwner(carol.id)).toEqual([]);
  });
});

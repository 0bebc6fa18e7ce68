/**
 * The push-service stand-in (test/helpers/push-service.ts) is only worth its checks if it
 * refuses what a real push service refuses: this sends it messages made by the server's sender
 * (`sendPush`) and then spoiled — another VAPID key in the header, another audience, a changed
 * body, another content encoding — and expects each to be refused for that reason.
 */
import { afterEach, describe, expect, it } from 'vitest';
import webPush from 'web-push';
import { pushSubscriptionId, type StoredPushSubscription } from '../../../src/platform/notifications/push-subscriptions.js';
import { sendPush } from '../../../src/server/notifications/web-push-sender.js';
import { startPushService, type PushService } from '../../helpers/push-service.js';

let push: PushService | undefined;
afterEach(async () => {
  await push?.close();
  push = undefined;
});

function stored(endpoint: string, keys: { p256dh: string; auth: string }): StoredPushSubscription {
  return { id: pushSubscriptionId(endpoint), owner: 'local-owner', endpoint, keys, createdAt: 0 };
}

/** Posts a message made for `subscription`, after `spoil` changed its headers or body. */
async function sendSpoiled(subscription: StoredPushSubscription, spoil: (request: { headers: Record<string, string>; body: Buffer }) => void, vapid = webPush.generateVAPIDKeys()): Promise<number> {
  const details = webPush.generateRequestDetails({ endpoint: subscription.endpoint, keys: subscription.keys }, 'hello', { vapidDetails: { subject: 'mailto:ops@example.org', ...vapid }, TTL: 60, contentEncoding: 'aes128gcm' });
  const request = { headers: Object.fromEntries(Object.entries(details.headers).filter(([name]) => name !== 'Content-Length').map(([name, value]) => [name, String(value)])), body: Buffer.from(details.body) };
  spoil(request);
  const response = await fetch(details.endpoint, { method: 'POST', headers: request.headers, body: new Uint8Array(request.body) });
  return response.status;
}

describe('the push-service stand-in', () => {
  it('accepts what sendPush sends and refuses spoiled messages, naming why', async () => {
    push = await startPushService();
    const browser = push.subscribe('browser');
    const subscription = stored(browser.endpoint, browser.keys);
    const vapid = { ...webPush.generateVAPIDKeys(), createdAt: 0 };
    expect(await sendPush(subscription, '{"ok":true}', { vapid, subject: 'mailto:ops@example.org', ttlSeconds: 60, timeoutMs: 5000 })).toEqual({ kind: 'delivered', status: 201 });
    expect(push.received.map((message) => message.plaintext)).toEqual(['{"ok":true}']);

    const other = webPush.generateVAPIDKeys();
    expect(await sendSpoiled(subscription, (request) => (request.headers.Authorization = request.headers.Authorization!.replace(/k=[A-Za-z0-9_-]+/, `k=${other.publicKey}`)))).toBe(400);
    expect(push.rejected.at(-1)).toBe('the JWT signature does not verify against k');

    expect(await sendSpoiled(subscription, (request) => (request.body[request.body.length - 1]! ^= 1))).toBe(400);
    expect(push.rejected.at(-1)).toMatch(/unable to authenticate data|auth/i);

    // Another host name for the same service: the token was made for that audience, not this one.
    const elsewhere = stored(browser.endpoint.replace('127.0.0.1', 'localhost'), browser.keys);
    expect(await sendSpoiled(elsewhere, () => undefined)).toBe(400);
    expect(push.rejected.at(-1)).toMatch(/^aud is http:\/\/localhost:\d+, not http:\/\/127\.0\.0\.1:\d+$/);

    expect(await sendSpoiled(subscription, (request) => (request.headers['Content-Encoding'] = 'aesgcm'))).toBe(400);
    expect(push.rejected.at(-1)).toBe('Content-Encoding is aesgcm');
    expect(push.received).toHaveLength(1);
  });
});

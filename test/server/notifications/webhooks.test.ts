/**
 * Webhooks (docs/notifications.md, "Webhooks"): requests signed with HMAC-SHA256 over
 * `<timestamp>.<body>` that a receiver on 127.0.0.1 verifies; retried with exponential backoff
 * on 5xx and network errors, not on 4xx; and, end to end, a real turn's completion POSTed to
 * the webhook `server.yaml` names, with its secret read from `env:NAME`.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookSettingsSchema } from '../../../src/config/notification-settings.js';
import { deliverWebhook, webhookSignature } from '../../../src/server/notifications/webhooks.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { signatureProblem, startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.js';

const SECRET = 'whsec-test-3f9a1c';
let receiver: WebhookReceiver | undefined;
let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  await receiver?.close();
  harness = undefined;
  receiver = undefined;
  delete process.env.OPENVAALA_TEST_WEBHOOK_SECRET;
});

/** A sleep that records the delays asked for and returns at once (the backoff is asserted, not waited). */
function recordingSleep(): { delays: number[]; sleep: (ms: number) => Promise<void> } {
  const delays: number[] = [];
  return { delays, sleep: async (ms) => void delays.push(ms) };
}

describe('webhook signatures', () => {
  it('is v1= and the hex HMAC-SHA256 of "<timestamp>.<body>"; a receiver refuses another secret, another body and an old timestamp', () => {
    // Known answer, from `printf '1700000000.{}' | openssl dgst -sha256 -hmac secret`.
    expect(webhookSignature('secret', 1_700_000_000, '{}')).toBe('v1=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163');
    const now = Date.now();
    const timestamp = Math.floor(now / 1000);
    const signature = webhookSignature(SECRET, timestamp, '{"a":1}');
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(signatureProblem(SECRET, String(timestamp), signature, '{"a":1}', now)).toBeUndefined();
    expect(signatureProblem('another', String(timestamp), signature, '{"a":1}', now)).toBe('the signature does not match');
    expect(signatureProblem(SECRET, String(timestamp), signature, '{"a":2}', now)).toBe('the signature does not match');
    expect(signatureProblem(SECRET, String(timestamp), signature, '{"a":1}', now + 600_000)).toMatch(/is not within 300 s of now/);
  });
});

describe('webhook delivery', () => {
  it('a receiver answering 500 twice then 200 gets three verified attempts of one delivery, 1 s then 2 s apart', async () => {
    receiver = await startWebhookReceiver(SECRET);
    receiver.answers = [500, 503];
    const { delays, sleep } = recordingSleep();
    const webhook = WebhookSettingsSchema.parse({ url: receiver.url, secret: 'env:UNUSED' });
    const result = await deliverWebhook(webhook, SECRET, '{"event":"turn_completed"}', { sleep });
    expect(result).toEqual({ delivered: true, attempts: 3, status: 200 });
    expect(receiver.requests.map((request) => [request.verified, request.status])).toEqual([
      [true, 500],
      [true, 503],
      [true, 200],
    ]);
    expect(new Set(receiver.requests.map((request) => request.deliveryId)).size).toBe(1);
    expect(receiver.requests[0]?.body).toBe('{"event":"turn_completed"}');
    expect(delays).toEqual([1000, 2000]);
  });

  it('a 400 is not retried; a receiver that cannot be reached is tried maxAttempts times', async () => {
    receiver = await startWebhookReceiver(SECRET);
    receiver.answers = [400];
    const { delays, sleep } = recordingSleep();
    const refused = await deliverWebhook(WebhookSettingsSchema.parse({ url: receiver.url, secret: 'env:UNUSED' }), SECRET, '{}', { sleep });
    expect(refused).toEqual({ delivered: false, attempts: 1, status: 400, error: 'HTTP 400' });
    expect(receiver.requests).toHaveLength(1);
    expect(delays).toEqual([]);

    // A port that was just free: connections are refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await deliverWebhook(WebhookSettingsSchema.parse({ url: `http://127.0.0.1:${port}/hook`, secret: 'env:UNUSED', maxAttempts: 3, initialDelayMs: 50 }), SECRET, '{}', { sleep });
    expect(unreachable).toMatchObject({ delivered: false, attempts: 3 });
    expect(delays).toEqual([50, 100]);
  });

  it('a real turn that completes is POSTed to the webhook of server.yaml, signed with the secret of its env: variable; events it does not list are not sent', async () => {
    receiver = await startWebhookReceiver(SECRET);
    const other = await startWebhookReceiver(SECRET);
    try {
      process.env.OPENVAALA_TEST_WEBHOOK_SECRET = SECRET;
      const serverYaml = `notifications:
  webhooks:
    - url: ${receiver.url}
      secret: env:OPENVAALA_TEST_WEBHOOK_SECRET
    - url: ${other.url}
      secret: env:OPENVAALA_TEST_WEBHOOK_SECRET
      events: [turn_failed]
`;
      harness = await startInProcessServer('responses:\n  - text: "Deployed to staging."\n', { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), serverYaml) });
      const conversationId = await harness.conversation();
      await harness.client.request('conversation/update', { conversationId, title: 'Deploy' });
      await harness.client.request('session/input', { conversationId, input: 'deploy to staging' });
      await harness.turnsCompleted(1);
      await expect.poll(() => receiver!.requests.length, { timeout: 20_000 }).toBe(1);
      const [request] = receiver.requests;
      expect(request?.verified).toBe(true);
      expect(JSON.parse(request!.body)).toEqual({ event: 'turn_completed', conversationId, title: 'Deploy', text: 'Deployed to staging.', at: expect.any(Number), link: `${harness.server.url}/web/v1/#/c/${conversationId}` });
      // Stopping the server waits for the deliveries in progress: the webhook of turn_failed only heard nothing.
      await harness.stop();
      harness = undefined;
      expect(other.requests).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('a turn whose answer was cut at the output limit says so before the answer', async () => {
    receiver = await startWebhookReceiver(SECRET);
    process.env.OPENVAALA_TEST_WEBHOOK_SECRET = SECRET;
    const serverYaml = `notifications:\n  webhooks:\n    - { url: "${receiver.url}", secret: env:OPENVAALA_TEST_WEBHOOK_SECRET }\n`;
    harness = await startInProcessServer('responses:\n  - text: "The report starts here and"\n    incompleteReason: max_output_tokens\n', { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), serverYaml) });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'write the long report' });
    await harness.turnsCompleted(1);
    await expect.poll(() => receiver!.requests.length, { timeout: 20_000 }).toBe(1);
    expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ event: 'turn_completed', text: 'Output limit reached: The report starts here and' });
  });
});

describe('webhooks and turns', () => {
  it('a webhook that never answers holds no turn up', async () => {
    // Takes each request and never answers it.
    const pending: ServerResponse[] = [];
    const silent = createServer((_request, response) => void pending.push(response));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      process.env.OPENVAALA_TEST_WEBHOOK_SECRET = SECRET;
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`;
      const serverYaml = `notifications:\n  webhooks:\n    - { url: "${url}", secret: env:OPENVAALA_TEST_WEBHOOK_SECRET, timeoutMs: 60000 }\n`;
      harness = await startInProcessServer('responses:\n  - text: "one"\n  - text: "two"\n', { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), serverYaml) });
      const conversationId = await harness.conversation();
      await harness.client.request('session/input', { conversationId, input: 'first' });
      await harness.turnsCompleted(1);
      await expect.poll(() => pending.length, { timeout: 10_000 }).toBe(1);
      // The first delivery still waits for its answer; the next turn runs and ends all the same.
      await harness.client.request('session/input', { conversationId, input: 'second' });
      expect((await harness.turnsCompleted(2, 10_000)).map((turn) => turn.status)).toEqual(['completed', 'completed']);
    } finally {
      for (const response of pending) response.destroy();
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('webhook settings', () => {
  it('refuses a literal secret, naming the key', () => {
    const result = WebhookSettingsSchema.safeParse({ url: 'http://127.0.0.1:9/hook', secret: 'literal-secret' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ path: ['secret'], message: expect.stringContaining('env:NAME') });
  });
});

/**
 * Webhook deliveries (docs/notifications.md, "Webhooks"): one JSON POST per event, signed with
 * HMAC-SHA256 the way common chat-tool webhooks are (a timestamp header, and a signature over
 * `<timestamp>.<body>` so a captured request cannot be replayed later with another time), and
 * retried with exponential backoff on network errors and 5xx answers. 4xx answers (other than
 * 408 and 429) mean the receiver refuses the request itself: they are not retried.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { WebhookSettings } from '../../config/notification-settings.js';

/** Header carrying the time of the attempt, whole seconds since the epoch. */
export const WEBHOOK_TIMESTAMP_HEADER = 'x-openvaala-timestamp';
/** Header carrying `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-openvaala-signature';
/** Header carrying the delivery id: the same for every attempt of one event (receivers drop repeats by it). */
export const WEBHOOK_DELIVERY_HEADER = 'x-openvaala-delivery';
/** Longest backoff between two attempts, ms. */
const MAX_BACKOFF_MS = 60_000;

/**
 * The signature of a body sent at `timestamp` (seconds): `v1=` and the hex HMAC-SHA256, keyed
 * with the secret's UTF-8 bytes, of `<timestamp>.<body>`.
 */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What happened to one delivery. */
export interface WebhookResult {
  delivered: boolean;
  /** Attempts made. */
  attempts: number;
  /** The last answer's status, when one came. */
  status?: number;
  /** Why the last attempt failed. */
  error?: string;
}

/** Waits `ms` milliseconds (tests may replace it). */
export type Sleep = (ms: number) => Promise<void>;
const sleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Whether an answer's status is worth another attempt. */
function retryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/**
 * Delivers `body` to a webhook: up to `maxAttempts` attempts, waiting `initialDelayMs` doubled
 * after each failed one (at most 60 s). Never throws.
 * @param secret the HMAC key (the value of the webhook's `env:NAME`)
 * @param options `sleep` waits between attempts, `now` gives the time of each attempt in ms since the epoch (both for tests; default a timer and `Date.now`)
 * @returns whether it was delivered, the attempts made, the last status and error
 */
export async function deliverWebhook(webhook: WebhookSettings, secret: string, body: string, options: { sleep?: Sleep; now?: () => number } = {}): Promise<WebhookResult> {
  const deliveryId = randomUUID();
  const wait = options.sleep ?? sleep;
  const now = options.now ?? Date.now;
  let last: WebhookResult = { delivered: false, attempts: 0 };
  for (let attempt = 1; attempt <= webhook.maxAttempts; attempt += 1) {
    if (attempt > 1) await wait(Math.min(MAX_BACKOFF_MS, webhook.initialDelayMs * 2 ** (attempt - 2)));
    // Each attempt is signed with its own time: the receiver's freshness check applies to it.
    const timestamp = Math.floor(now() / 1000);
    try {
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'openvaala-webhook/1',
          [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
          [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(secret, timestamp, body),
          [WEBHOOK_DELIVERY_HEADER]: deliveryId,
        },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(webhook.timeoutMs),
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) return { delivered: true, attempts: attempt, status: response.status };
      last = { delivered: false, attempts: attempt, status: response.status, error: `HTTP ${response.status}` };
      if (!retryable(response.status)) return last;
    } catch (error) {
      last = { delivered: false, attempts: attempt, error: (error as Error).message };
    }
  }
  return last;
}

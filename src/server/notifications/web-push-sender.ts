/**
 * Sends one Web Push message (RFC 8030 §5) to a push service: the payload encrypted with
 * `aes128gcm` for the browser's keys (RFC 8291, RFC 8188) and a VAPID `Authorization` header
 * (RFC 8292), both made by the `web-push` package; the request itself is made here with
 * `fetch`, so the address may also be a loopback http push service (local testing).
 */
import type WebPush from 'web-push';
import type { StoredPushSubscription, VapidKeys } from '../../platform/notifications/push-subscriptions.js';

/** What sending needs besides the subscription. */
export interface PushSendOptions {
  vapid: VapidKeys;
  /** The VAPID `sub` claim: `mailto:` or `https:`. */
  subject: string;
  /** Seconds the push service keeps the message while the browser is offline. */
  ttlSeconds: number;
  /** Longest wait for the push service's answer, ms. */
  timeoutMs: number;
}

/** How a push service answered. */
export type PushOutcome =
  /** Accepted (2xx). */
  | { kind: 'delivered'; status: number }
  /** The subscription no longer exists (404 or 410, RFC 8030 §7.3): it must be removed. */
  | { kind: 'expired'; status: number }
  /** Refused for another reason, or not reached (`status` absent). */
  | { kind: 'failed'; status?: number; message: string };

/** The headers as text, without `Content-Length` (fetch sets it from the body). */
function requestHeaders(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-length').map(([name, value]) => [name, String(value)]));
}

/**
 * Encrypts `payload` for the subscription and POSTs it to its push service.
 * Never throws: every failure is an outcome.
 */
export async function sendPush(subscription: StoredPushSubscription, payload: string, options: PushSendOptions): Promise<PushOutcome> {
  let request: ReturnType<typeof WebPush.generateRequestDetails>;
  try {
    // Loaded on the first push: a server that never sends one does not hold it.
    const { default: webPush } = await import('web-push');
    request = webPush.generateRequestDetails({ endpoint: subscription.endpoint, keys: subscription.keys }, payload, {
      vapidDetails: { subject: options.subject, publicKey: options.vapid.publicKey, privateKey: options.vapid.privateKey },
      TTL: options.ttlSeconds,
      contentEncoding: 'aes128gcm',
    });
  } catch (error) {
    return { kind: 'failed', message: `the message could not be prepared: ${(error as Error).message}` };
  }
  try {
    const response = await fetch(request.endpoint, {
      method: 'POST',
      headers: requestHeaders(request.headers),
      ...(request.body ? { body: new Uint8Array(request.body) } : {}),
      redirect: 'error',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    // The body is not used; reading it frees the connection.
    const text = await response.text().catch(() => '');
    if (response.ok) return { kind: 'delivered', status: response.status };
    if (response.status === 404 || response.status === 410) return { kind: 'expired', status: response.status };
    return { kind: 'failed', status: response.status, message: `the push service answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}` };
  } catch (error) {
    return { kind: 'failed', message: `the push service could not be reached: ${(error as Error).message}` };
  }
}

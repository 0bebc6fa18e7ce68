/**
 * The `notifications:` section of `server.yaml` (docs/notifications.md): Web Push settings and
 * the webhooks told about turns and questions.
 *
 * ```yaml
 * notifications:
 *   push: { subject: mailto:ops@example.org }
 *   webhooks:
 *     - url: https://chat.example.org/hooks/openvaala
 *       secret: env:OPENVAALA_WEBHOOK_SECRET
 *       events: [turn_failed, approval_requested]
 * ```
 */
import { z } from 'zod';
import { NotificationEventKindSchema } from '../protocol/notifications.js';

/** An environment variable reference `env:NAME`. */
const environmentReference = z.string().regex(/^env:[A-Za-z_][A-Za-z0-9_]*$/, 'write the secret as env:NAME (an environment variable of the server), never literally');

/** One webhook. */
export const WebhookSettingsSchema = z.strictObject({
  /** Where events are POSTed (http or https). */
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** The HMAC key, only as `env:NAME`. */
  secret: environmentReference,
  /** The events sent; default all of them. */
  events: z.array(NotificationEventKindSchema).min(1).optional(),
  /** Attempts per event, the first included (retries on network errors and 5xx). */
  maxAttempts: z.number().int().min(1).max(10).default(5),
  /** Delay before the first retry, ms (doubles each retry). */
  initialDelayMs: z.number().int().min(1).max(60_000).default(1000),
  /** Longest wait for one attempt's answer, ms. */
  timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
});
/** One webhook. */
export type WebhookSettings = z.infer<typeof WebhookSettingsSchema>;

/** The `notifications:` section. */
export const NotificationSettingsSchema = z.strictObject({
  push: z
    .strictObject({
      /** The VAPID `sub` claim (RFC 8292 §2.1): a `mailto:` or `https:` contact for push services. Default `mailto:openvaala@<host name>`. */
      subject: z.string().regex(/^(mailto:|https:\/\/)\S+$/, 'must be a mailto: or https: URL').optional(),
      /**
       * Accept subscriptions whose push service is an http address on a loopback host
       * (127.0.0.0/8, ::1, localhost): a push service run on this machine for testing. Default false.
       */
      allowLoopbackEndpoints: z.boolean().default(false),
      /** Seconds a push service keeps an undelivered message (the `TTL` header). */
      ttlSeconds: z.number().int().min(0).max(2_419_200).default(86_400),
    })
    .default({ allowLoopbackEndpoints: false, ttlSeconds: 86_400 }),
  webhooks: z.array(WebhookSettingsSchema).default([]),
});
/** The `notifications:` section. */
export type NotificationSettings = z.infer<typeof NotificationSettingsSchema>;

/** The section when `server.yaml` has none. */
export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = { push: { allowLoopbackEndpoints: false, ttlSeconds: 86_400 }, webhooks: [] };

/**
 * Notifications to people who are not watching (docs/notifications.md): Web Push subscriptions
 * of browsers (RFC 8030 push services, VAPID per RFC 8292, payloads encrypted per RFC 8291).
 * Spread into `methods` of `methods.ts`.
 */
import { z } from 'zod';

/** Longest push service address accepted, characters. */
export const PUSH_ENDPOINT_MAX_CHARS = 2048;

/**
 * Unpadded base64url text (RFC 4648 §5) of `bytes` bytes, as browsers give subscription keys.
 * The length is checked by arithmetic (no decoder: this module also runs in browsers).
 */
const base64url = (what: string, bytes: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+=*$/, `must be base64url text (${what})`)
    .refine((value) => value.replace(/=+$/, '').length === Math.ceil((bytes * 4) / 3), { message: `must encode exactly ${bytes} bytes (${what})` });

/**
 * A browser's push subscription, as `PushSubscription.toJSON()` gives it: the push service
 * address and the keys its payloads are encrypted for (RFC 8291 §3).
 */
export const BrowserPushSubscriptionSchema = z.strictObject({
  /** The push service address (https; the server may also allow http on loopback addresses for local testing). */
  endpoint: z
    .string()
    .max(PUSH_ENDPOINT_MAX_CHARS)
    // A plain pattern (no `format`), so the exported JSON Schema stays within what every validator knows.
    .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/, 'must be an http(s) URL'),
  /** When the browser says the subscription ends, ms since the epoch (null: never). */
  expirationTime: z.number().int().nonnegative().nullable().optional(),
  keys: z.strictObject({
    /** The browser's P-256 public key, uncompressed point (65 bytes). */
    p256dh: base64url('an uncompressed P-256 public key', 65)
      // A first byte 0x04 (uncompressed): the first character holds its high 6 bits (000001, `B`),
      // the second its low 2 bits (00) and 4 more (values 0–15, `A`–`P`).
      .refine((value) => /^B[A-P]/.test(value), { message: 'must be an uncompressed P-256 point (first byte 0x04)' }),
    /** The authentication secret (16 bytes). */
    auth: base64url('the 16-byte authentication secret', 16),
  }),
});
/** A browser's push subscription. */
export type BrowserPushSubscription = z.infer<typeof BrowserPushSubscriptionSchema>;

/** What a notification is about. */
export const NotificationEventKindSchema = z.enum(['turn_completed', 'turn_failed', 'approval_requested', 'input_requested']);
/** What a notification is about. */
export type NotificationEventKind = z.infer<typeof NotificationEventKindSchema>;

/** A stored push subscription of the caller, without its keys. */
export const PushSubscriptionInfoSchema = z.object({
  /** Stable id of the subscription (derived from its endpoint). */
  id: z.string(),
  endpoint: z.string(),
  /** Name the client gave the device, if any. */
  deviceName: z.string().optional(),
  /** ms since the epoch. */
  createdAt: z.number().int(),
});
/** A stored push subscription. */
export type PushSubscriptionInfo = z.infer<typeof PushSubscriptionInfoSchema>;

/**
 * The payload every push carries (JSON, encrypted; docs/notifications.md, "Payload"): small, so
 * it fits the 4096-byte limit of push services.
 */
export const PushPayloadSchema = z.object({
  kind: NotificationEventKindSchema,
  conversationId: z.string(),
  /** The conversation's title. */
  title: z.string(),
  /** One line about what happened (at most 200 characters). */
  text: z.string(),
  /** Path of the conversation in the web UI, relative to its base (`#/c/<id>`). */
  url: z.string(),
  /** ms since the epoch. */
  at: z.number().int(),
});
/** The payload of a push. */
export type PushPayload = z.infer<typeof PushPayloadSchema>;

const subscriptionIdParam = z.string().regex(/^push_[0-9a-f]{32}$/, 'must be a subscription id from notifications/list (push_ and 32 hex digits)');

/** Request methods of notifications: name → params and result schemas. */
export const notificationMethods = {
  /** The server's VAPID public key (uncompressed P-256 point, base64url): `applicationServerKey` of `PushManager.subscribe`. */
  'notifications/publicKey': {
    params: z.object({}),
    result: z.object({ publicKey: z.string() }),
  },
  /** Stores a browser's push subscription for the caller (again for the same endpoint: replaced). */
  'notifications/subscribe': {
    params: z.object({ subscription: BrowserPushSubscriptionSchema, deviceName: z.string().min(1).max(200).optional() }),
    result: z.object({ subscription: PushSubscriptionInfoSchema }),
  },
  /** The caller's push subscriptions, oldest first. */
  'notifications/list': {
    params: z.object({}),
    result: z.object({ subscriptions: z.array(PushSubscriptionInfoSchema) }),
  },
  /** Removes one of the caller's subscriptions, by `subscriptionId` or by `endpoint`. */
  'notifications/unsubscribe': {
    params: z
      .object({ subscriptionId: subscriptionIdParam.optional(), endpoint: z.string().min(1).max(PUSH_ENDPOINT_MAX_CHARS).optional() })
      .refine((params) => (params.subscriptionId === undefined) !== (params.endpoint === undefined), { message: 'give exactly one of subscriptionId and endpoint' }),
    result: z.object({ removed: z.boolean() }),
  },
} as const;

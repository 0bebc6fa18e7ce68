/**
 * Browsers' Web Push subscriptions and the server's VAPID keys (docs/notifications.md), in the
 * platform database: namespace `push_subscriptions` (one record per push endpoint, owned by a
 * user id or `local-owner`, see `stateOwner`) and `push_vapid` (one record, the key pair).
 *
 * A push endpoint names one browser profile, so the record is keyed by the endpoint: subscribing
 * the same browser again (another user signed in there) replaces its owner and keys.
 */
import { createHash } from 'node:crypto';
import type { BrowserPushSubscription, PushSubscriptionInfo } from '../../protocol/notifications.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import { listAll } from '../projects/project-store.js';

const SUBSCRIPTIONS = 'push_subscriptions';
const VAPID = 'push_vapid';
const VAPID_KEY = 'keys';

/** A stored subscription. */
export interface StoredPushSubscription {
  /** `push_` and the first 32 hex digits of the SHA-256 of the endpoint. */
  id: string;
  /** A platform user id, or `local-owner`. */
  owner: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  deviceName?: string;
  /** ms since the epoch. */
  createdAt: number;
}

/** The server's VAPID key pair (RFC 8292 §3.2): P-256, base64url (public: uncompressed point, 65 bytes; private: 32 bytes). */
export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  /** ms since the epoch. */
  createdAt: number;
}

/** The id of the subscription of an endpoint. */
export function pushSubscriptionId(endpoint: string): string {
  return `push_${createHash('sha256').update(endpoint).digest('hex').slice(0, 32)}`;
}

/** The public view of a stored subscription (no keys). */
export function subscriptionInfo(stored: StoredPushSubscription): PushSubscriptionInfo {
  return { id: stored.id, endpoint: stored.endpoint, ...(stored.deviceName !== undefined ? { deviceName: stored.deviceName } : {}), createdAt: stored.createdAt };
}

/** Push subscriptions and VAPID keys over the platform database. */
export class PushSubscriptionStore {
  private keys: VapidKeys | undefined;

  private constructor(private readonly records: RecordStorage) {}

  /** Declares the namespaces. */
  static open(records: RecordStorage): PushSubscriptionStore {
    records.defineNamespace({ name: SUBSCRIPTIONS, filterFields: ['owner'] });
    records.defineNamespace({ name: VAPID });
    return new PushSubscriptionStore(records);
  }

  /**
   * The VAPID key pair: read from the database, or made and stored on first use. Never made
   * again while one is stored (browsers' subscriptions are bound to the public key).
   */
  async vapidKeys(now = Date.now()): Promise<VapidKeys> {
    if (this.keys) return this.keys;
    const stored = await this.records.get<VapidKeys>(VAPID, VAPID_KEY);
    if (stored) {
      this.keys = stored.value;
      return stored.value;
    }
    // Loaded only to make the keys, once per data directory.
    const { default: webPush } = await import('web-push');
    const generated = webPush.generateVAPIDKeys();
    const keys: VapidKeys = { publicKey: generated.publicKey, privateKey: generated.privateKey, createdAt: now };
    await this.records.set(VAPID, VAPID_KEY, keys);
    this.keys = keys;
    return keys;
  }

  /** Stores a subscription for `owner` (replacing any of the same endpoint); returns it. */
  async put(owner: string, subscription: BrowserPushSubscription, deviceName: string | undefined, now = Date.now()): Promise<StoredPushSubscription> {
    const id = pushSubscriptionId(subscription.endpoint);
    const stored: StoredPushSubscription = { id, owner, endpoint: subscription.endpoint, keys: { p256dh: subscription.keys.p256dh, auth: subscription.keys.auth }, ...(deviceName !== undefined ? { deviceName } : {}), createdAt: now };
    await this.records.set(SUBSCRIPTIONS, id, stored);
    return stored;
  }

  /** The subscriptions of `owner`, oldest first. */
  async listOwner(owner: string): Promise<StoredPushSubscription[]> {
    return (await listAll<StoredPushSubscription>(this.records, SUBSCRIPTIONS, { owner })).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /** Every subscription (for sending). */
  all(): Promise<StoredPushSubscription[]> {
    return listAll<StoredPushSubscription>(this.records, SUBSCRIPTIONS);
  }

  /** Removes a subscription of `owner` (another owner's is left alone); returns whether one was removed. */
  async remove(owner: string, id: string): Promise<boolean> {
    const stored = await this.records.get<StoredPushSubscription>(SUBSCRIPTIONS, id);
    if (!stored || stored.value.owner !== owner) return false;
    return this.records.delete(SUBSCRIPTIONS, id);
  }

  /** Removes a subscription the push service says is gone (404/410), unless it was replaced meanwhile by another with other keys. */
  async removeExpired(subscription: StoredPushSubscription): Promise<boolean> {
    const stored = await this.records.get<StoredPushSubscription>(SUBSCRIPTIONS, subscription.id);
    if (!stored || stored.value.keys.auth !== subscription.keys.auth) return false;
    return this.records.delete(SUBSCRIPTIONS, subscription.id);
  }

  /** Removes every subscription of a user (their removal). */
  async forgetOwner(owner: string): Promise<void> {
    for (const subscription of await this.listOwner(owner)) await this.records.delete(SUBSCRIPTIONS, subscription.id);
  }
}

/**
 * The server's notifications (docs/notifications.md): follows every open conversation's events
 * (`Runtime.extensions.eventObservers`), and for those that notify (`notification-events.ts`) sends
 *
 * - a Web Push message to each subscribed browser of each person who may read the conversation
 *   and has no connected client subscribed to it ("while no tab is open"); a subscription the
 *   push service says is gone (404/410) is removed;
 * - a signed POST to each webhook of `server.yaml` listing the event (whether or not anyone
 *   watches: a chat channel is a record of its own).
 *
 * Deliveries run in the background and never hold a turn up; failures are logged.
 */
import os from 'node:os';
import type { NotificationSettings } from '../../config/notification-settings.js';
import type { Logger } from '../../logger.js';
import { stateOwner } from '../../platform/settings/user-state.js';
import type { Platform } from '../../platform/platform.js';
import type { StoredPushSubscription } from '../../platform/notifications/push-subscriptions.js';
import type { AnyNotification, PushPayload } from '../../protocol/index.js';
import type { LiveConversation } from '../../runtime/conversation.js';
import type { Runtime } from '../../runtime/runtime.js';
import { NotificationEvents } from './notification-events.js';
import { sendPush } from './web-push-sender.js';
import { deliverWebhook, type Sleep } from './webhooks.js';
import { WEB_PATH } from '../web/static-files.js';

/** Longest wait for a push service's answer, ms. */
const PUSH_TIMEOUT_MS = 10_000;
/** Longest wait at shutdown for deliveries in progress, ms. */
const CLOSE_WAIT_MS = 2000;

/** What the service needs of the server. */
export interface NotificationServiceOptions {
  runtime: Runtime;
  platform: Platform;
  /** The `notifications:` section in force (read at every event, so a reload applies at once). */
  settings: () => NotificationSettings;
  /** Whether a connected client of `owner` (a user id or `local-owner`) is subscribed to the conversation. */
  watching: (owner: string, conversationId: string) => boolean;
  logger: Logger;
  /** Waits between webhook attempts (tests); default a timer. */
  sleep?: Sleep;
}

/** The default VAPID subject: a contact address at this machine's name. */
export function defaultPushSubject(): string {
  return `mailto:openvaala@${os.hostname() || 'localhost'}`;
}

/** Sends the notifications of a server's conversations. */
export class NotificationService {
  private readonly events = new NotificationEvents();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly observer = (conversation: LiveConversation, event: AnyNotification) => this.observe(conversation, event);

  constructor(private readonly options: NotificationServiceOptions) {
    options.runtime.extensions.eventObservers.push(this.observer);
    options.runtime.extensions.conversationDeletionHooks.push(async (conversationId) => this.events.forget(conversationId));
    // Said at the start rather than only at the first event, which may come much later.
    for (const webhook of options.settings().webhooks) {
      const variable = webhook.secret.slice('env:'.length);
      if (!process.env[variable]) options.logger.warn({ webhook: new URL(webhook.url).origin, variable }, `webhook secret's environment variable ${variable} is not set: its events will not be sent`);
    }
  }

  /** Handles one event of an open conversation: starts its deliveries, returns at once. */
  observe(conversation: LiveConversation, event: AnyNotification): void {
    const found = this.events.payloadOf(conversation, event);
    if (!found) return;
    // Pushes and webhooks leave the server: project secrets' values never go with them.
    const redactor = this.options.platform.redactor;
    const payload = redactor.active ? { ...found, title: redactor.redactText(found.title), text: redactor.redactText(found.text) } : found;
    this.track(this.deliver(payload));
  }

  /** Resolves when every delivery started so far has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stops following events; waits (bounded) for deliveries in progress. */
  async close(): Promise<void> {
    const observers = this.options.runtime.extensions.eventObservers;
    const index = observers.indexOf(this.observer);
    if (index >= 0) observers.splice(index, 1);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.options.logger.error({ error: (error as Error).message }, 'sending notifications failed'));
    this.inFlight.add(tracked);
    const untrack = () => this.inFlight.delete(tracked);
    tracked.then(untrack, untrack);
  }

  private async deliver(payload: PushPayload): Promise<void> {
    const settings = this.options.settings();
    await Promise.all([this.push(payload, settings), ...this.webhooks(payload, settings)]);
  }

  /** Whether the owner of a subscription may read the conversation (the local owner always; a user only in platform mode, through the access rules). */
  private async mayRead(owner: string, conversationId: string): Promise<boolean> {
    const platform = this.options.platform;
    if (owner === stateOwner({ kind: 'local-owner' })) return true;
    if (!platform.signInEnabled) return false;
    const user = await platform.users.get(owner);
    return user !== undefined && platform.access.mayReadConversation({ kind: 'user', userId: user.id, role: user.role, webSessionId: '' }, conversationId);
  }

  private async push(payload: PushPayload, settings: NotificationSettings): Promise<void> {
    const store = this.options.platform.pushSubscriptions;
    const subscriptions = await store.all();
    if (subscriptions.length === 0) return;
    const recipients = new Map<string, boolean>();
    const chosen: StoredPushSubscription[] = [];
    for (const subscription of subscriptions) {
      let admitted = recipients.get(subscription.owner);
      if (admitted === undefined) {
        admitted = !this.options.watching(subscription.owner, payload.conversationId) && (await this.mayRead(subscription.owner, payload.conversationId));
        recipients.set(subscription.owner, admitted);
      }
      if (admitted) chosen.push(subscription);
    }
    if (chosen.length === 0) return;
    const vapid = await store.vapidKeys();
    const body = JSON.stringify(payload);
    await Promise.all(
      chosen.map(async (subscription) => {
        const outcome = await sendPush(subscription, body, { vapid, subject: settings.push.subject ?? defaultPushSubject(), ttlSeconds: settings.push.ttlSeconds, timeoutMs: PUSH_TIMEOUT_MS });
        if (outcome.kind === 'expired') {
          await store.removeExpired(subscription);
          this.options.logger.info({ subscriptionId: subscription.id, status: outcome.status }, 'push subscription removed: the push service says it no longer exists');
        } else if (outcome.kind === 'failed') {
          this.options.logger.warn({ subscriptionId: subscription.id, status: outcome.status, error: outcome.message }, 'push message not delivered');
        }
      }),
    );
  }

  private webhooks(payload: PushPayload, settings: NotificationSettings): Promise<void>[] {
    const base = this.options.platform.linkBase;
    const body = JSON.stringify({ event: payload.kind, conversationId: payload.conversationId, title: payload.title, text: payload.text, at: payload.at, ...(base ? { link: `${base}${WEB_PATH}${payload.url}` } : {}) });
    return settings.webhooks
      .filter((webhook) => webhook.events === undefined || webhook.events.includes(payload.kind))
      // Only the origin is logged: chat tools put their own secret in the rest of the address.
      .map(async (webhook) => {
        const variable = webhook.secret.slice('env:'.length);
        const secret = process.env[variable];
        if (!secret) {
          this.options.logger.error({ webhook: new URL(webhook.url).origin, variable }, `webhook not sent: its secret's environment variable ${variable} is not set`);
          return;
        }
        const result = await deliverWebhook(webhook, secret, body, this.options.sleep ? { sleep: this.options.sleep } : {});
        if (!result.delivered) this.options.logger.warn({ webhook: new URL(webhook.url).origin, attempts: result.attempts, status: result.status, error: result.error }, 'webhook not delivered');
      });
  }
}

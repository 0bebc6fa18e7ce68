/**
 * `notifications/*` (docs/protocol.md, "Notifications"; docs/notifications.md): the server's
 * VAPID public key and the caller's Web Push subscriptions, kept in the platform database
 * under the caller's user id (the local owner's under `local-owner`). Errors name the method
 * and the parameter at fault.
 */
import { isLoopbackName } from '../http-server.js';
import { ErrorCodes, RpcError, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { pushSubscriptionId, subscriptionInfo, type PushSubscriptionStore } from '../../platform/notifications/push-subscriptions.js';
import { stateOwner } from '../../platform/settings/user-state.js';
import type { RpcConnection } from '../rpc-connection.js';

type NotificationMethod = 'notifications/publicKey' | 'notifications/subscribe' | 'notifications/list' | 'notifications/unsubscribe';
/** The notification handlers, bound to one connection. */
export type NotificationHandlers = { [M in NotificationMethod]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/**
 * Refuses a push service address the server will not send to: https is required; http only on a
 * loopback host, and only with `notifications.push.allowLoopbackEndpoints` (local testing).
 * @throws RpcError invalidParams naming `params.subscription.endpoint`
 */
function checkEndpoint(endpoint: string, allowLoopback: boolean): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new RpcError(ErrorCodes.invalidParams, 'notifications/subscribe: params.subscription.endpoint: not a valid URL');
  }
  if (url.username || url.password) throw new RpcError(ErrorCodes.invalidParams, 'notifications/subscribe: params.subscription.endpoint: must not carry a user name or password');
  if (url.protocol === 'https:') return;
  if (!isLoopbackName(url.hostname.replace(/^\[|\]$/g, '').toLowerCase())) throw new RpcError(ErrorCodes.invalidParams, `notifications/subscribe: params.subscription.endpoint: must be an https URL (got ${url.protocol}//${url.host})`);
  if (!allowLoopback) throw new RpcError(ErrorCodes.invalidParams, `notifications/subscribe: params.subscription.endpoint: http push services on loopback addresses are refused unless server.yaml sets notifications.push.allowLoopbackEndpoints: true`);
}

/** Builds the `notifications/*` handlers. */
export function createNotificationHandlers(connection: RpcConnection): NotificationHandlers {
  const store = (method: string): PushSubscriptionStore => {
    if (!connection.platform) throw new RpcError(ErrorCodes.internalError, `${method}: notifications are not available on this server`);
    return connection.platform.pushSubscriptions;
  };
  const owner = stateOwner(connection.caller);
  return {
    async 'notifications/publicKey'() {
      return { publicKey: (await store('notifications/publicKey').vapidKeys()).publicKey };
    },
    async 'notifications/subscribe'(params) {
      checkEndpoint(params.subscription.endpoint, connection.config.current.server.notifications.push.allowLoopbackEndpoints);
      return { subscription: subscriptionInfo(await store('notifications/subscribe').put(owner, params.subscription, params.deviceName)) };
    },
    async 'notifications/list'() {
      return { subscriptions: (await store('notifications/list').listOwner(owner)).map(subscriptionInfo) };
    },
    async 'notifications/unsubscribe'(params) {
      const id = params.subscriptionId ?? pushSubscriptionId(params.endpoint ?? '');
      return { removed: await store('notifications/unsubscribe').remove(owner, id) };
    },
  };
}

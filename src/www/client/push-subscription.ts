/**
 * Web Push in this browser (docs/notifications.md): subscribes the page's service worker with
 * the server's VAPID key and hands the subscription to the server (`notifications/subscribe`),
 * or removes both. The service worker (`public/sw.js`) shows what arrives and opens the
 * conversation on click.
 */
import type { MethodName, MethodParams, MethodResult } from '../../protocol/methods.js';

/** The part of the protocol client used here. */
interface Requester {
  request<M extends MethodName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>>;
}

/** Whether this browser can receive Web Push here (a secure context with service workers and the Push API). */
export function pushSupported(): boolean {
  return typeof window !== 'undefined' && window.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in window && typeof Notification !== 'undefined';
}

/** The bytes of unpadded base64url text (the VAPID key as `applicationServerKey`). */
function base64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(text.length / 4) * 4, '='));
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** This browser's push subscription, if it has one. */
async function browserSubscription(): Promise<PushSubscription | null> {
  const registration = await navigator.serviceWorker.ready;
  return registration.pushManager.getSubscription();
}

/** Whether this browser is subscribed and the server has its subscription for the caller. */
export async function pushEnabled(client: Requester): Promise<boolean> {
  if (!pushSupported() || Notification.permission !== 'granted') return false;
  const subscription = await browserSubscription();
  if (!subscription) return false;
  const { subscriptions } = await client.request('notifications/list', {});
  return subscriptions.some((each) => each.endpoint === subscription.endpoint);
}

/**
 * Asks permission (call from a user gesture), subscribes with the server's key and stores the
 * subscription on the server.
 * @throws Error saying why when permission is refused or the browser cannot subscribe
 */
export async function enablePush(client: Requester): Promise<void> {
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('the browser did not allow notifications for this site');
  const { publicKey } = await client.request('notifications/publicKey', {});
  const registration = await navigator.serviceWorker.ready;
  let subscription = await registration.pushManager.getSubscription();
  // A subscription made for another key (another server at this address) cannot be used.
  if (subscription && subscription.options.applicationServerKey) {
    const key = new Uint8Array(subscription.options.applicationServerKey);
    const wanted = base64urlBytes(publicKey);
    if (key.length !== wanted.length || key.some((byte, index) => byte !== wanted[index])) {
      await subscription.unsubscribe();
      subscription = null;
    }
  }
  subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64urlBytes(publicKey) });
  const json = subscription.toJSON();
  await client.request('notifications/subscribe', {
    subscription: { endpoint: json.endpoint ?? subscription.endpoint, expirationTime: json.expirationTime ?? null, keys: { p256dh: json.keys?.p256dh ?? '', auth: json.keys?.auth ?? '' } },
    deviceName: navigator.platform || 'browser',
  });
}

/** Removes this browser's subscription from the server and from the browser. */
export async function disablePush(client: Requester): Promise<void> {
  const subscription = await browserSubscription();
  if (!subscription) return;
  await client.request('notifications/unsubscribe', { endpoint: subscription.endpoint });
  await subscription.unsubscribe();
}

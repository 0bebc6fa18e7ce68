/**
 * Browser notifications while the tab is hidden: a turn completed (with its stop reason when
 * its answer may be incomplete) or failed, or a tool call needs approval. Permission is asked
 * once, from a user gesture (the settings toggle or the first send), never on load.
 */
import type { AnyNotification } from '../../protocol/methods.js';
import { notificationText } from './notification-text.js';

/** Where a notification click leads, and its title source. */
interface ConversationTitles {
  conversations: Map<string, { conversation: { title: string } | undefined }>;
}

/** Asks for permission to notify, when not decided yet (call from a user gesture). */
export function askNotificationPermission(): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'default') return;
  void Notification.requestPermission().catch(() => undefined);
}

/** Shows a notification for an event when the tab is hidden and permission was given. */
export function notifyIfHidden(event: AnyNotification, titles: ConversationTitles): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted' || !document.hidden) return;
  const text = notificationText(event);
  if (!text) return;
  const conversationId = (event.params as { conversationId?: string }).conversationId ?? '';
  const title = titles.conversations.get(conversationId)?.conversation?.title ?? 'OpenVaala';
  const notification = new Notification(title, { body: text, tag: `${conversationId}:${event.method}`, icon: 'icons/icon-192.png' });
  notification.onclick = () => {
    window.focus();
    location.hash = `#/c/${conversationId}`;
  };
}

/**
 * Subscribing one client connection to a conversation (docs/protocol.md,
 * `conversation/subscribe`): the subscription is registered before the conversation is opened
 * (so an unsubscribe or a close arriving meanwhile ends it), the listener starts with the
 * snapshot, and a failed replay ends the subscription and tells the client. Used by the
 * `conversation/subscribe` handler and by a cluster server taking a relayed subscription over.
 */
import type { AnyNotification } from '../protocol/index.js';
import type { LiveConversation } from '../runtime/conversation.js';
import type { Attachment } from '../runtime/conversation-subscription.js';
import { replayStart } from '../runtime/lifecycle.js';

/** What subscribing needs of a client connection (an `RpcConnection`). */
export interface SubscribingConnection {
  notify(event: AnyNotification): void;
  beginSubscription(conversationId: string): AbortSignal;
  endSubscription(conversationId: string, signal?: AbortSignal): void;
  ready(): Promise<void> | undefined;
  readonly holdLimitBytes: number;
  closeLagging(): void;
  replayFailed(conversationId: string, error: unknown): void;
}

/** Where the replay starts: `head` (nothing stored), or the last seq the client has per session and their history epochs. */
export type ReplayFrom = 'head' | { afterSeq?: Record<string, number> | undefined; historyEpoch?: Record<string, number> | undefined };

/** An attached subscription whose replay has not been sent yet. */
export interface PendingSubscription {
  attached: Attachment;
  /** Sends the replay, then live events; a failure ends the subscription and is reported to the client. Never rejects. */
  replay(): Promise<void>;
}

/**
 * Registers the subscription, opens the conversation and attaches the connection's listener.
 * @param open opens (or finds) the conversation
 * @throws what `open` throws (not found, …), after ending the registered subscription
 */
export async function subscribeConnection(connection: SubscribingConnection, conversationId: string, open: () => Promise<LiveConversation>, from: ReplayFrom): Promise<PendingSubscription> {
  const signal = connection.beginSubscription(conversationId);
  let conversation: LiveConversation;
  try {
    conversation = await open();
  } catch (error) {
    connection.endSubscription(conversationId, signal);
    throw error;
  }
  // A client holding items of an older history epoch (a rewind since) is replayed from the rewind point.
  const afterSeq = from === 'head' ? 'head' : replayStart(conversation.snapshot().sessions, from.afterSeq, from.historyEpoch);
  const attached = conversation.attach((event) => connection.notify(event), afterSeq, { signal, ready: () => connection.ready(), holdLimitBytes: connection.holdLimitBytes, lagging: () => connection.closeLagging() });
  return {
    attached,
    replay: () =>
      attached.replay().then(
        () => undefined,
        (error: unknown) => {
          connection.endSubscription(conversationId, signal);
          connection.replayFailed(conversationId, error);
        },
      ),
  };
}

/**
 * Routes each request naming a conversation to the server of the cluster that owns it
 * (docs/deployment.md, "Several servers on PostgreSQL"). A request for a conversation this
 * server owns, or that nobody holds (it is claimed first: opening it records any turn a dead
 * owner left running as interrupted), is served here. A request for a conversation another
 * live server owns is forwarded to it over the pooled link to that server, on the channel of
 * the client's connection; the owner's notifications on that channel come back and go to the
 * client through its connection (its access check and send buffer apply).
 *
 * For each subscription served through a link, the router remembers the last item seq it
 * passed on per session. When the link drops (the owner died or stopped), it takes the
 * conversation over as soon as the owner's lock is free (or follows it to a server that took it
 * first) and subscribes the client again from those seqs: the client keeps its subscription
 * and receives every later item once, in order.
 */
import type { Caller } from '../../platform/caller.js';
import { RpcError, type AnyNotification } from '../../protocol/index.js';
import { subscribeConnection, type SubscribingConnection } from '../connection-subscription.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { ConversationOwnership } from './conversation-ownership.js';
import { PeerLink, PeerUnreachableError, peerFailure, type ChannelClient } from './peer-link.js';

/** What the router needs of a client connection (an `RpcConnection`). */
export interface RoutedConnection extends SubscribingConnection {
  readonly number: number;
  readonly caller: Caller;
  readonly clientName: string;
  onDispose(task: () => void): () => void;
}

/** Where a request goes: served here, or already answered by the owner. */
export type RouteOutcome = { forwarded: false } | { forwarded: true; result: unknown };

/** Options of {@link ConversationRouter}. */
export interface ConversationRouterOptions {
  runtime: Runtime;
  ownership: ConversationOwnership;
  /** The cluster secret links present. */
  secret: string;
  /** How long a takeover waits for a dead owner's lock to be freed, ms. */
  takeoverTimeoutMs: number;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
}

/** A subscription of a client served by another server. */
interface RemoteSubscription {
  connection: RoutedConnection;
  conversationId: string;
  url: string;
  /** Last item seq passed on to the client, per session. */
  lastSeq: Record<string, number>;
}

/** How often a takeover asks again for a lock still held, ms. */
const CLAIM_RETRY_MS = 100;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Routes requests among the servers of a cluster (see the module comment). */
export class ConversationRouter {
  private readonly links = new Map<string, Promise<PeerLink>>();
  private readonly remote = new Map<string, RemoteSubscription>();
  /** Connections whose channels and subscriptions are tidied when they end. */
  private readonly tracked = new Set<RoutedConnection>();
  private stopped = false;

  constructor(private readonly options: ConversationRouterOptions) {}

  /**
   * Decides where a request goes, forwarding it when another server owns its conversation.
   * Requests without a `params.conversationId` are served here.
   * @param servesOnlyOwned true for a channel of another server: this server must own the
   *   conversation (or claim it), never forward again
   * @throws RpcError as the owner answered, or `conflict` `owner_unreachable` when the owner
   *   holds the conversation but cannot be reached within `takeoverTimeoutMs` (the message names its URL)
   */
  route(connection: RoutedConnection, method: string, params: unknown, servesOnlyOwned = false): RouteOutcome | Promise<RouteOutcome> {
    const conversationId = typeof params === 'object' && params !== null ? (params as { conversationId?: unknown }).conversationId : undefined;
    // Synchronous for a conversation served here, so the connection's requests keep their order.
    if (typeof conversationId !== 'string' || this.stopped || this.options.ownership.owns(conversationId)) return { forwarded: false };
    return this.routeElsewhere(connection, conversationId, method, params, servesOnlyOwned);
  }

  private async routeElsewhere(connection: RoutedConnection, conversationId: string, method: string, params: unknown, servesOnlyOwned: boolean): Promise<RouteOutcome> {
    const { ownership } = this.options;
    const deadline = Date.now() + this.options.takeoverTimeoutMs;
    let lastProblem = 'it holds the conversation but has not recorded where it is reached';
    for (;;) {
      if (await ownership.claim(conversationId)) return { forwarded: false };
      const owner = await ownership.ownerOf(conversationId);
      if (servesOnlyOwned) throw RpcError.conflict(`${method}: conversation ${conversationId} is owned by another server of the cluster${owner.kind === 'other-server' ? ` (${owner.url})` : ''}`, 'owner_unreachable');
      if (owner.kind === 'other-server') {
        try {
          const link = await this.link(owner.url);
          return { forwarded: true, result: await this.forward(link, connection, conversationId, method, params) };
        } catch (error) {
          if (!(error instanceof PeerUnreachableError)) throw peerFailure(method, conversationId, error as Error);
          lastProblem = error.message;
        }
      }
      // The owner is dying or gone: its lock is freed when PostgreSQL ends its session.
      if (Date.now() >= deadline) throw RpcError.conflict(`${method}: conversation ${conversationId} is owned by another server of the cluster, which cannot be reached: ${lastProblem}`, 'owner_unreachable');
      await pause(CLAIM_RETRY_MS);
    }
  }

  /** Another server announced it stops: its link is dropped, which starts the takeovers. */
  serverStopping(url: string): void {
    const link = this.links.get(url);
    if (!link) return;
    link.then((opened) => opened.close(), () => undefined);
  }

  /** Closes every link (at stop); no takeover is started any more. */
  close(): void {
    this.stopped = true;
    for (const link of this.links.values()) link.then((opened) => opened.close(), () => undefined);
    this.links.clear();
  }

  private link(url: string): Promise<PeerLink> {
    let link = this.links.get(url);
    if (!link) {
      link = PeerLink.connect(url, this.options.secret, this.options.ownership.serverId);
      this.links.set(url, link);
      link.then(
        (opened) => opened.onClose(() => this.linkClosed(url, link as Promise<PeerLink>)),
        () => this.links.delete(url),
      );
    }
    return link;
  }

  private async forward(link: PeerLink, connection: RoutedConnection, conversationId: string, method: string, params: unknown): Promise<unknown> {
    this.track(connection);
    const client: ChannelClient = { number: connection.number, caller: connection.caller, clientName: connection.clientName };
    link.listen(connection.number, (notification) => this.relay(connection, notification));
    const key = subscriptionKey(connection, conversationId);
    if (method === 'conversation/unsubscribe') this.remote.delete(key);
    if (method !== 'conversation/subscribe') return link.request(client, method, params);
    const afterSeq = (params as { afterSeq?: unknown }).afterSeq;
    // Registered before the request: the replay's items may arrive before its answer.
    const subscription: RemoteSubscription = { connection, conversationId, url: link.url, lastSeq: typeof afterSeq === 'object' && afterSeq !== null ? { ...(afterSeq as Record<string, number>) } : {} };
    this.remote.set(key, subscription);
    try {
      const result = (await link.request(client, method, params)) as { heads?: Record<string, number> };
      if (afterSeq === 'head') for (const [sessionId, head] of Object.entries(result.heads ?? {})) subscription.lastSeq[sessionId] = Math.max(subscription.lastSeq[sessionId] ?? 0, head);
      return result;
    } catch (error) {
      if (this.remote.get(key) === subscription) this.remote.delete(key);
      throw error;
    }
  }

  /** Passes a notification from the owner on to the client, remembering the item seqs. */
  private relay(connection: RoutedConnection, notification: AnyNotification): void {
    if (notification.method === 'item/completed') {
      const { conversationId, sessionId, seq } = notification.params;
      const subscription = this.remote.get(subscriptionKey(connection, conversationId));
      if (subscription) subscription.lastSeq[sessionId] = Math.max(subscription.lastSeq[sessionId] ?? 0, seq);
    }
    connection.notify(notification);
  }

  private track(connection: RoutedConnection): void {
    if (this.tracked.has(connection)) return;
    this.tracked.add(connection);
    connection.onDispose(() => {
      this.tracked.delete(connection);
      for (const [key, subscription] of this.remote) if (subscription.connection === connection) this.remote.delete(key);
      for (const link of this.links.values()) link.then((opened) => opened.closeChannel(connection.number), () => undefined);
    });
  }

  private linkClosed(url: string, link: Promise<PeerLink>): void {
    if (this.links.get(url) === link) this.links.delete(url);
    if (this.stopped) return;
    const orphaned = [...this.remote.values()].filter((subscription) => subscription.url === url);
    if (orphaned.length > 0) this.options.logger.warn({ url, subscriptions: orphaned.length }, 'the link to the server owning subscribed conversations dropped: taking them over');
    for (const subscription of orphaned) {
      this.resubscribe(subscription).catch((error: unknown) => {
        this.options.logger.warn({ conversationId: subscription.conversationId, error: (error as Error).message }, 'a subscription could not be taken over; the client must subscribe again');
        subscription.connection.endSubscription(subscription.conversationId);
      });
    }
  }

  /**
   * Re-establishes a client's subscription whose owner went away: here once this server could
   * claim the conversation, or at the server that claimed it first.
   */
  private async resubscribe(subscription: RemoteSubscription): Promise<void> {
    const { connection, conversationId } = subscription;
    const key = subscriptionKey(connection, conversationId);
    const deadline = Date.now() + this.options.takeoverTimeoutMs;
    for (;;) {
      if (this.remote.get(key) !== subscription || this.stopped) return;
      if (await this.options.ownership.claim(conversationId)) break;
      const owner = await this.options.ownership.ownerOf(conversationId);
      // The owner (the same one, its link back, or another that took it first) serves it again.
      if (owner.kind === 'other-server') {
        const link = await this.link(owner.url).catch(() => undefined);
        if (link) {
          this.remote.delete(key);
          await this.forward(link, connection, conversationId, 'conversation/subscribe', { conversationId, afterSeq: subscription.lastSeq });
          return;
        }
      }
      if (Date.now() >= deadline) throw new Error(`the lock of conversation ${conversationId} was not freed within ${this.options.takeoverTimeoutMs} ms`);
      await pause(CLAIM_RETRY_MS);
    }
    this.remote.delete(key);
    this.options.logger.warn({ conversationId }, 'took a conversation over from a server that went away');
    // Opening records the turn the dead owner left running as interrupted.
    const { replay } = await subscribeConnection(connection, conversationId, () => this.options.runtime.getConversation(conversationId), { afterSeq: subscription.lastSeq });
    await replay();
  }
}

function subscriptionKey(connection: RoutedConnection, conversationId: string): string {
  return `${connection.number}\u0000${conversationId}`;
}

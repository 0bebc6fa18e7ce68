/**
 * The one internal WebSocket a runtime server keeps to another server of its cluster
 * (docs/deployment.md, "Several servers on PostgreSQL"), authenticated with the cluster secret.
 * It multiplexes channels: one per client connection of this server that reached a
 * conversation the other server owns. A channel is opened with the client's identity (the
 * caller this server has already checked) and carries that client's JSON-RPC requests to the
 * owner and the owner's responses and notifications back.
 *
 * Frames (JSON text), this server to the owner: `{"c":<channel>,"open":{"caller":…,"clientName":…}}`,
 * `{"c":<channel>,"m":<JSON-RPC request>}`, `{"c":<channel>,"close":true}`; the owner to this
 * server: `{"c":<channel>,"m":<JSON-RPC response or notification>}`.
 */
import { WebSocket } from 'ws';
import type { Caller } from '../../platform/caller.js';
import { RpcError, type AnyNotification } from '../../protocol/index.js';
import { CLUSTER_PATH } from './cluster-endpoint.js';
import { keepAlive } from './link-heartbeat.js';

/** The client a channel speaks for. */
export interface ChannelClient {
  /** This server's connection number (the channel id). */
  number: number;
  caller: Caller;
  clientName: string;
}

/** Thrown when the owner cannot be reached at its URL (refused, timed out, wrong secret). */
export class PeerUnreachableError extends Error {}

/** Thrown when the link drops while a request waits for its answer. */
export class PeerLinkClosedError extends Error {}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

/** How long connecting to another server may take, ms. */
const CONNECT_TIMEOUT_MS = 10_000;


/** The link to one other server. */
export class PeerLink {
  private readonly pending = new Map<string, Pending>();
  private readonly opened = new Set<number>();
  private readonly listeners = new Map<number, (notification: AnyNotification) => void>();
  private readonly closeListeners = new Set<() => void>();
  private nextId = 1;
  private isClosed = false;
  private readonly stopHeartbeat: () => void;

  private constructor(
    /** The other server's advertised base URL. */
    readonly url: string,
    private readonly socket: WebSocket,
  ) {
    socket.on('message', (data) => this.receive(data.toString()));
    socket.on('close', () => this.closed());
    socket.on('error', () => this.closed());
    this.stopHeartbeat = keepAlive(socket);
  }

  /**
   * Opens the link to `url` (its `/api/v1/openvaala-cluster` endpoint).
   * @throws PeerUnreachableError naming the URL and why (connection refused, 401 wrong secret, timeout)
   */
  static connect(url: string, secret: string, serverId: string): Promise<PeerLink> {
    const target = `${url.replace(/^http/, 'ws')}${CLUSTER_PATH}`;
    return new Promise((resolve, reject) => {
      // No cap on what the owner sends (`maxPayload: 0`): its answers are what a server sends its
      // own clients, uncapped (a page of long tool outputs, an export with its attachments), and
      // `ws`'s default of 100 MiB would close the link, and every relayed client's work on it,
      // for one large answer. The owner is a peer that proved the cluster secret.
      const socket = new WebSocket(target, { headers: { authorization: `Bearer ${secret}`, 'x-openvaala-server-id': serverId }, handshakeTimeout: CONNECT_TIMEOUT_MS, perMessageDeflate: false, maxPayload: 0 });
      const fail = (reason: string): void => {
        socket.removeAllListeners();
        socket.on('error', () => undefined);
        socket.terminate();
        reject(new PeerUnreachableError(`the server at ${url} cannot be reached: ${reason}`));
      };
      socket.once('unexpected-response', (_request, response) => fail(response.statusCode === 401 ? 'it refused the cluster secret (401): every server of the cluster needs the same cluster.secret' : `HTTP ${response.statusCode}`));
      socket.once('error', (error) => fail(error.message));
      socket.once('open', () => {
        socket.removeAllListeners();
        resolve(new PeerLink(url, socket));
      });
    });
  }

  /** Runs `listener` once when the link drops (at once when it has). */
  onClose(listener: () => void): () => void {
    if (this.isClosed) {
      listener();
      return () => undefined;
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Sets where the notifications of a channel go. */
  listen(channel: number, listener: (notification: AnyNotification) => void): void {
    this.listeners.set(channel, listener);
  }

  /**
   * Sends a request of `client` to the owner and waits for its answer.
   * @returns the result
   * @throws RpcError as the owner answered it
   * @throws PeerLinkClosedError when the link drops first
   */
  request(client: ChannelClient, method: string, params: unknown): Promise<unknown> {
    if (this.isClosed) return Promise.reject(new PeerLinkClosedError(`the link to ${this.url} is closed`));
    if (!this.opened.has(client.number)) {
      this.opened.add(client.number);
      this.write({ c: client.number, open: { caller: client.caller, clientName: client.clientName } });
    }
    const id = `peer-${this.nextId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write({ c: client.number, m: { jsonrpc: '2.0', id, method, params } });
    });
  }

  /** Ends a channel (its client went away): the owner drops its subscriptions. */
  closeChannel(channel: number): void {
    this.listeners.delete(channel);
    if (!this.opened.delete(channel) || this.isClosed) return;
    this.write({ c: channel, close: true });
  }

  /** Closes the link. */
  close(): void {
    this.socket.close(1001, 'server stopping');
    this.closed();
  }

  private write(frame: object): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private receive(text: string): void {
    let frame: { c?: unknown; m?: { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } } };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    const message = frame.m;
    if (typeof frame.c !== 'number' || typeof message !== 'object' || message === null) return;
    if (typeof message.id === 'string' && message.method === undefined) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new RpcError(message.error.code, message.error.message, message.error.data));
      else waiting.resolve(message.result);
      return;
    }
    if (typeof message.method === 'string' && message.id === undefined) this.listeners.get(frame.c)?.(message as AnyNotification);
  }

  private closed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.stopHeartbeat();
    for (const waiting of this.pending.values()) waiting.reject(new PeerLinkClosedError(`the connection to the owning server at ${this.url} dropped before it answered`));
    this.pending.clear();
    for (const listener of this.closeListeners) listener();
    this.closeListeners.clear();
  }
}

/** Converts a failure of the link to the error a client gets. */
export function peerFailure(method: string, conversationId: string, error: Error): RpcError {
  if (error instanceof RpcError) return error;
  return RpcError.conflict(`${method}: conversation ${conversationId} is served by another server: ${error.message}`, 'owner_unreachable');
}


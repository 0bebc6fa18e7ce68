/**
 * What a runtime server runs when `storage.yaml` `cluster` makes it one of several servers
 * serving one PostgreSQL schema (docs/deployment.md, "Several servers on PostgreSQL"): its
 * conversation ownership (advisory locks, owner rows, the `LISTEN` channel), the router that
 * forwards requests to other owners, and the internal endpoint other servers forward to.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ClusterSelection } from '../../config/storage-settings.js';
import type { Caller } from '../../platform/caller.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { RequestRouting, RpcConnection } from '../rpc-connection.js';
import { hostNameOf } from '../http-server.js';
import { ChannelSocket, ChannelTransport, CLUSTER_PATH, ClusterEndpoint } from './cluster-endpoint.js';
import { ConversationOwnership } from './conversation-ownership.js';
import { ConversationRouter } from './conversation-router.js';
import { announceListChanges, createListChangeReceiver, type ListChangeNotice } from './list-changes.js';

/** Makes a protocol connection over a channel's socket (an `RpcConnection` acting as `caller`). */
export type ChannelConnectionMaker = (socket: ChannelSocket, transport: ChannelTransport, caller: Caller) => RpcConnection;

/** The cluster part of a running server. */
export interface ClusterServices {
  /** The conversation locks of this server. */
  ownership: ConversationOwnership;
  /** Routing of the connections of clients. */
  routing: RequestRouting;
  /** The internal endpoint, by path (for the HTTP server's upgrades). */
  upgrades: Record<string, (request: IncomingMessage, socket: Duplex, head: Buffer) => void>;
  /** The host name of the advertised URL, which the other servers' requests name. */
  allowedHosts: string[];
  /** Starts serving the channels of other servers (once the runtime exists). */
  serve(runtime: Runtime, makeConnection: ChannelConnectionMaker): void;
  /** Drops the links to other servers and the ones from them (at stop, after turns ended). */
  shutdown(): void;
  /** Gives every conversation up (owner rows removed, locks released, other servers told). */
  release(): Promise<void>;
}

/** Options of {@link openCluster}. */
export interface OpenClusterOptions {
  cluster: ClusterSelection;
  connectionString: string;
  schema: string;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void; error(details: object, message: string): void };
  /** Called when the lock connection is lost: the server must stop (another one may take its conversations). */
  onLost: (error: Error) => void;
}

/**
 * Joins the cluster: registers this server and opens its lock connection.
 * @throws Error when the database cannot be reached
 */
export async function openCluster(options: OpenClusterOptions): Promise<ClusterServices> {
  const { cluster, logger } = options;
  let router: ConversationRouter | undefined;
  let receiveListChange: ((notice: ListChangeNotice) => Promise<void>) | undefined;
  let stopAnnouncing: (() => void) | undefined;
  const ownership = await ConversationOwnership.open({
    connectionString: options.connectionString,
    schema: options.schema,
    serverId: `server_${randomBytes(8).toString('hex')}`,
    url: cluster.advertiseUrl,
    onLost: (error) => {
      logger.error({ error: error.message }, 'lost the connection holding this server\'s conversation locks');
      options.onLost(error);
    },
    onNotice: (notice) => {
      if (notice.event === 'server-stopping') router?.serverStopping(notice.url);
      if (notice.event === 'conversation-changed' && receiveListChange) {
        receiveListChange(notice).catch((error: unknown) => logger.warn({ error: (error as Error).message }, 'could not read a conversation list change another server announced'));
      }
    },
  });
  let endpoint: ClusterEndpoint | undefined;
  const host = hostNameOf(new URL(cluster.advertiseUrl).host);
  return {
    ownership,
    routing: {
      route: (connection, method, params) => (router ? router.route(connection, method, params) : { forwarded: false }),
    },
    upgrades: {
      [CLUSTER_PATH]: (request, socket, head) => {
        if (endpoint) endpoint.upgrade(request, socket, head);
        else socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      },
    },
    allowedHosts: host !== undefined ? [host] : [],
    serve(runtime, makeConnection) {
      receiveListChange = createListChangeReceiver(runtime);
      stopAnnouncing = announceListChanges(runtime, ownership, logger);
      const opened = new ConversationRouter({ runtime, ownership, secret: cluster.secret, takeoverTimeoutMs: cluster.takeoverTimeoutMs, logger });
      router = opened;
      endpoint = new ClusterEndpoint({
        secret: cluster.secret,
        logger,
        open: (caller, clientName, send) => {
          const socket = new ChannelSocket(send);
          const connection = makeConnection(socket, new ChannelTransport(), caller);
          // A channel serves only what this server owns: a request is never forwarded twice.
          connection.routing = { route: (client, method, params) => opened.route(client, method, params, true) };
          const deliver = (text: string) => socket.emit('message', Buffer.from(text), false);
          deliver(JSON.stringify({ jsonrpc: '2.0', id: 'cluster-initialize', method: 'initialize', params: { clientInfo: { name: clientName } } }));
          return { receive: deliver, close: () => socket.end() };
        },
      });
    },
    shutdown() {
      stopAnnouncing?.();
      router?.close();
      endpoint?.close();
    },
    release: () => ownership.release(),
  };
}

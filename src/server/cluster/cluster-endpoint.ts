/**
 * The owner's side of the internal links between the servers of a cluster
 * (`/api/v1/openvaala-cluster`, see `peer-link.ts` for the frames). Only a peer holding the
 * cluster secret gets the upgrade (401 otherwise). Each channel a peer opens becomes one
 * protocol connection here, acting as the caller the peer named (the peer has checked that
 * caller's access already; this server checks it again with its own rules), whose responses
 * and notifications go back over the link tagged with the channel.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { EventEmitter } from 'node:events';
import { WebSocket, WebSocketServer } from 'ws';
import type { Caller } from '../../platform/caller.js';
import { MAX_MESSAGE_BYTES } from '../../protocol/transport.js';
import { presentedToken } from '../http-server.js';
import { sameSecret } from '../server-token.js';
import { keepAlive } from './link-heartbeat.js';

/** Path of the internal endpoint. */
export const CLUSTER_PATH = '/api/v1/openvaala-cluster';

/** A protocol connection serving one channel (what `ClusterEndpoint` needs of it). */
export interface ChannelConnection {
  /** Delivers one JSON-RPC message from the peer's client. */
  receive(text: string): void;
  /** Ends the connection (the client went away, or the link dropped). */
  close(): void;
}

/** Makes the connection of a channel; `send` carries its output back to the peer. */
export type ChannelConnectionFactory = (caller: Caller, clientName: string, send: (text: string) => void) => ChannelConnection;

/** Options of {@link ClusterEndpoint}. */
export interface ClusterEndpointOptions {
  /** The shared secret peers must present (`Authorization: Bearer`). */
  secret: string;
  open: ChannelConnectionFactory;
  logger: { warn(details: object, message: string): void };
}

/** Accepts the links of other servers and serves their channels. */
export class ClusterEndpoint {
  private readonly webSockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false });

  constructor(private readonly options: ClusterEndpointOptions) {}

  /** Handles an upgrade to {@link CLUSTER_PATH}: 401 for a missing or wrong secret. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const given = presentedToken(request);
    if (given === undefined || !sameSecret(given, this.options.secret)) {
      this.options.logger.warn({ peer: request.socket.remoteAddress, serverId: request.headers['x-openvaala-server-id'] }, 'refused a cluster link: wrong or missing cluster secret');
      const body = JSON.stringify({ error: 'wrong cluster secret' });
      socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    this.webSockets.handleUpgrade(request, socket, head, (link) => this.serve(link));
  }

  /** Closes every link (at stop). */
  close(): void {
    for (const link of this.webSockets.clients) link.close(1001, 'server stopping');
  }

  private serve(link: WebSocket): void {
    const channels = new Map<number, ChannelConnection>();
    // A peer that vanished without a TCP reset is noticed by its unanswered pings.
    keepAlive(link);
    link.on('message', (data) => {
      let frame: { c?: unknown; open?: { caller?: Caller; clientName?: unknown }; m?: unknown; close?: unknown };
      try {
        frame = JSON.parse(data.toString()) as typeof frame;
      } catch {
        return;
      }
      const channel = frame.c;
      if (typeof channel !== 'number') return;
      if (frame.open && typeof frame.open.caller === 'object' && frame.open.caller !== null) {
        channels.get(channel)?.close();
        const prefix = `{"c":${channel},"m":`;
        channels.set(channel, this.options.open(frame.open.caller, typeof frame.open.clientName === 'string' ? frame.open.clientName : 'peer', (text) => {
          if (link.readyState === WebSocket.OPEN) link.send(`${prefix}${text}}`);
        }));
      } else if (frame.m !== undefined) channels.get(channel)?.receive(JSON.stringify(frame.m));
      else if (frame.close === true) {
        channels.get(channel)?.close();
        channels.delete(channel);
      }
    });
    link.on('error', (error) => this.options.logger.warn({ error: error.message }, 'cluster link error'));
    link.on('close', () => {
      for (const connection of channels.values()) connection.close();
      channels.clear();
    });
  }
}

/**
 * The WebSocket a channel's protocol connection writes to: what it sends goes over the link
 * with the channel's tag; pings are answered at once (the link has its own liveness: the
 * peer's TCP connection). A channel applies no send buffer of its own: what the owner sends
 * waits in the link's socket, and the peer applies each client's send buffer limit when it
 * passes the messages on.
 */
export class ChannelSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;

  readonly bufferedAmount = 0;

  constructor(private readonly output: (text: string) => void) {
    super();
  }

  send(text: string | Buffer, _options: unknown, callback?: (error?: Error) => void): void {
    this.output(typeof text === 'string' ? text : text.toString('utf8'));
    callback?.();
  }

  ping(): void {
    queueMicrotask(() => this.emit('pong'));
  }

  pause(): void {}

  resume(): void {}

  close(): void {
    this.end();
  }

  terminate(): void {
    this.end();
  }

  /** Ends the channel: the connection sees its socket close. */
  end(): void {
    if (this.readyState !== 1) return;
    this.readyState = 3;
    this.emit('close');
  }
}

/** The transport under a {@link ChannelSocket}: writes are the link's, so nothing to cork here. */
export class ChannelTransport extends EventEmitter {
  writableCorked = 1;
  cork(): void {}
  uncork(): void {}
}

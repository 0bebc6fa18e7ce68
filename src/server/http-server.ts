/**
 * The HTTP surface of `openvaala serve` (SPEC §2, §5): `GET /healthz` without auth, the web UI
 * under `/web/` (docs/web.md), and the JSON-RPC WebSocket at `/api/v1/openvaala`, which refuses
 * pages of other sites (Host and Origin checks) and wrong tokens before the upgrade completes.
 * An upgrade with no token is authenticated by a web UI session cookie when it carries one;
 * otherwise it is accepted unauthenticated: its connection must then send `initialize` with the
 * token (checked by `RpcConnection`). Any request that may change state (not GET, HEAD or
 * OPTIONS) from a foreign `Origin` is refused with 403.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { LOCAL_OWNER, type Caller } from '../platform/caller.js';
import { routeEntry, type HttpRoute, type HttpRouteEntry } from './http-routes.js';

// Defined with the protocol (clients need them); re-exported for the server's modules.
export { API_PATH, MAX_MESSAGE_BYTES, TOKEN_SUBPROTOCOL_PREFIX } from '../protocol/transport.js';
import { API_PATH, TOKEN_SUBPROTOCOL_PREFIX } from '../protocol/transport.js';

/** Options of the HTTP server. */
export interface HttpServerOptions {
  /**
   * Whether a token a request carries is the server token (compared in constant time, as
   * `sameSecret` of `server-token.ts` does). Called only once `ready` has resolved, so the
   * token may be made after the server listens.
   */
  isServerToken: (given: string) => boolean;
  /** Extra allowed `Origin` values besides the server's own (e.g. a dev server). */
  allowedOrigins: string[];
  /**
   * Host names (without port) a request's `Host` header may carry besides loopback names
   * (`localhost`, `*.localhost`, `127.0.0.0/8`, `::1`): the listening address and configured
   * names. Anything else is refused, which is what defeats DNS rebinding.
   */
  allowedHosts: string[];
  /** Body of `GET /healthz` for a request carrying the token (without it: only `status`). */
  health: () => Record<string, unknown>;
  /**
   * Settles when what serves requests is open. Until it resolves, `GET /healthz` answers
   * `{"status":"starting"}` (with or without the token) and every other request and upgrade
   * waits; when it rejects they are refused with 503. Default: ready from the start.
   */
  ready?: Promise<void>;
  /**
   * Called for each accepted WebSocket, with the TCP socket under it (used to batch the
   * frames of one tick into one write). `authenticated` is true when the upgrade carried the
   * right token; false when it carried none, and the connection must authenticate with its
   * first message. `caller` is who the connection acts as (SPEC §9): the local owner for the
   * server token, a local web session or a later `initialize` with the token; a platform user
   * or API token holder otherwise.
   */
  onConnection: (webSocket: WebSocket, transport: Duplex, request: IncomingMessage, authenticated: boolean, caller: Caller) => void;
  /** Logs problems no client can be told about. */
  logger: { warn(details: object, message: string): void };
  /** More HTTP endpoints by exact path, or by prefix for a key ending with `/` (after the Host check; each checks its own token and Origin). */
  routes?: Record<string, HttpRoute>;
  /**
   * More WebSocket endpoints by exact path (after the Host check; each checks its own
   * credentials): the internal endpoint of a cluster's servers.
   */
  upgrades?: Record<string, (request: IncomingMessage, socket: Duplex, head: Buffer) => void>;
  /** Handles `/` and every path under `/web/` (the web UI), after the Host and Origin checks. */
  web?: (request: IncomingMessage, response: ServerResponse, pathname: string) => void;
  /** The routes `web` serves (for {@link HttpServer.routes}). */
  webRoutes?: () => HttpRouteEntry[];
  /**
   * Whether a request carries a live web UI session (its cookie): such an upgrade without a
   * token is authenticated. Default: never.
   */
  hasSession?: (request: IncomingMessage) => boolean;
  /**
   * Platform mode: the caller a token other than the server's stands for (a scoped API token),
   * or undefined when it is none (refused as a wrong token). Default: none.
   */
  apiTokenCaller?: (token: string) => Promise<Caller | undefined>;
  /**
   * Platform mode: the caller of a platform web session cookie the upgrade carries, or
   * undefined when it carries none that is live. Default: none.
   */
  sessionCaller?: (request: IncomingMessage) => Promise<Caller | undefined>;
  /**
   * Loads the WebSocket endpoint (tests: to hold or fail it). Default: imports
   * `web-socket-endpoint.ts` (and `ws`) when the server is created, without waiting for it.
   */
  loadWebSocketEndpoint?: () => Promise<WebSocketServer>;
}

/** The routes this module answers itself: the health check and the protocol's WebSocket endpoint. */
const BUILT_IN_ROUTES: readonly HttpRouteEntry[] = [
  { methods: ['GET'], path: '/healthz' },
  { methods: ['GET'], path: API_PATH },
];

/** Methods that never change state (RFC 9110 §9.2.1); other ones from a foreign `Origin` are refused. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The token a request carries: `Authorization: Bearer …` or the token sub-protocol. */
export function presentedToken(request: IncomingMessage): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization?.startsWith('Bearer ')) return authorization.slice(7).trim();
  const protocols = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((value) => value.trim());
  const carrying = protocols.find((value) => value.startsWith(TOKEN_SUBPROTOCOL_PREFIX));
  return carrying?.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
}

/**
 * Every token an upgrade request carries: the `Authorization: Bearer` one and each token
 * sub-protocol. `undefined` when the `Authorization` header is there but not `Bearer <token>`
 * (a malformed or foreign scheme is refused, not taken for "no token").
 */
export function presentedTokens(request: IncomingMessage): string[] | undefined {
  const tokens: string[] = [];
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    if (!authorization.startsWith('Bearer ')) return undefined;
    tokens.push(authorization.slice(7).trim());
  }
  for (const value of (request.headers['sec-websocket-protocol'] ?? '').split(',')) {
    const protocol = value.trim();
    if (protocol.startsWith(TOKEN_SUBPROTOCOL_PREFIX)) tokens.push(protocol.slice(TOKEN_SUBPROTOCOL_PREFIX.length));
  }
  return tokens;
}

/** The host name of a `Host` header value, lowercased, without port, brackets or final dot; undefined when malformed. */
export function hostNameOf(host: string): string | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+))(?::(\d{1,5}))?$/.exec(host.trim());
  if (!match) return undefined;
  return (match[1] ?? match[2] ?? '').toLowerCase().replace(/\.$/, '');
}

/** Whether a host name always means this machine (RFC 6761 §6.3 for `localhost`; 127.0.0.0/8; ::1). */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || /^127(?:\.\d{1,3}){3}$/.test(name) || name === '::1' || name === '0:0:0:0:0:0:0:1';
}

/**
 * Whether a request's `Host` header names this server: a loopback name or one of
 * `allowedHosts`. A page that rebinds its own DNS name to 127.0.0.1 still sends its own name
 * here, so it is refused.
 */
export function hostAllowed(request: IncomingMessage, allowedHosts: string[]): boolean {
  const header = request.headers.host;
  if (header === undefined) return false;
  const name = hostNameOf(header);
  if (name === undefined) return false;
  return isLoopbackName(name) || allowedHosts.some((allowed) => allowed.toLowerCase().replace(/^\[|\]$/g, '') === name);
}

/**
 * Whether a request's `Origin` may reach the API: absent (not a browser), the server's own
 * origin (the same host as the `Host` header, which `hostAllowed` has checked), or one
 * configured.
 */
export function originAllowed(request: IncomingMessage, allowedOrigins: string[]): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  if (allowedOrigins.includes(origin)) return true;
  const host = request.headers.host?.toLowerCase();
  return host !== undefined && (origin.toLowerCase() === `http://${host}` || origin.toLowerCase() === `https://${host}`);
}

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ error: message });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * The route of a path: the one registered for exactly that path, else one whose key ends with `/`
 * and starts the path (`/api/v1/uploads/tus/` serves `/api/v1/uploads/tus/<id>`).
 */
function routeFor<T>(routes: Record<string, T>, pathname: string): T | undefined {
  if (Object.hasOwn(routes, pathname)) return routes[pathname];
  const prefix = Object.keys(routes).find((key) => key.endsWith('/') && pathname.startsWith(key) && pathname.length > key.length);
  return prefix === undefined ? undefined : routes[prefix];
}

/** The path of a request target, or undefined when it is not one. */
function pathOf(request: IncomingMessage): string | undefined {
  try {
    return new URL(request.url ?? '/', 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

/**
 * Who an upgrade acts as. The server token (every one given must be right; each is compared,
 * so the time taken says nothing) is the local owner; in platform mode a single other token may
 * be a scoped API token. With no token, a platform session cookie, then a local web UI session
 * cookie (a browser cannot set headers) authenticates it; without either it is accepted
 * unauthenticated and must send `initialize` with the token first.
 */
async function upgradeCaller(request: IncomingMessage, tokens: string[], options: HttpServerOptions): Promise<{ authenticated: boolean; caller: Caller } | 'wrong token'> {
  const right = tokens.map((token) => options.isServerToken(token));
  if (right.includes(false)) {
    const caller = tokens.length === 1 && options.apiTokenCaller ? await options.apiTokenCaller(tokens[0] as string) : undefined;
    return caller ? { authenticated: true, caller } : 'wrong token';
  }
  if (tokens.length > 0) return { authenticated: true, caller: LOCAL_OWNER };
  const sessionCaller = options.sessionCaller ? await options.sessionCaller(request) : undefined;
  if (sessionCaller) return { authenticated: true, caller: sessionCaller };
  return { authenticated: options.hasSession?.(request) === true, caller: LOCAL_OWNER };
}

/** The WebSocket clients of a server: empty until the first upgrade is handled. */
export interface WebSocketClients {
  /** The open connections (those of `ws`'s endpoint once it is loaded). */
  readonly clients: ReadonlySet<WebSocket>;
}

/** What {@link createHttpServer} makes. */
export interface HttpServer {
  server: Server;
  webSockets: WebSocketClients;
  /**
   * Every route the server answers at this moment: the built-in ones, those of `routes` and
   * `upgrades` (WebSocket endpoints, listed as `GET`), and those `webRoutes` names.
   */
  routes(): HttpRouteEntry[];
}

/**
 * Creates the HTTP server (not yet listening). The WebSocket endpoint's code
 * (`web-socket-endpoint.ts` and `ws`) is imported meanwhile, not before: upgrades wait for
 * `ready` in any case, and listening sooner is what lets `/healthz` answer sooner.
 */
export function createHttpServer(options: HttpServerOptions): HttpServer {
  let endpoint: WebSocketServer | undefined;
  const load = options.loadWebSocketEndpoint ?? (async () => (await import('./web-socket-endpoint.js')).createWebSocketEndpoint());
  const endpointLoaded = load().then((loaded) => (endpoint = loaded));
  // A failed import (a broken installation) is reported on the upgrades that need it, not as an unhandled rejection.
  endpointLoaded.catch(() => undefined);
  const noClients: ReadonlySet<WebSocket> = new Set();
  const webSockets: WebSocketClients = {
    get clients() {
      return endpoint?.clients ?? noClients;
    },
  };
  const wrongHost = (request: IncomingMessage) => `host ${JSON.stringify(request.headers.host ?? '')} is not this server's (allowed: loopback names${options.allowedHosts.length ? ` and ${options.allowedHosts.join(', ')}` : ''})`;
  let state: 'starting' | 'ready' | 'failed' = options.ready ? 'starting' : 'ready';
  options.ready?.then(
    () => (state = 'ready'),
    () => (state = 'failed'),
  );
  const unavailable = JSON.stringify({ error: 'the server failed to start' });
  /** Runs `handle` once the server is ready; refuses with `refuse` when it failed to start. */
  const whenReady = (handle: () => void, refuse: () => void): void => {
    if (state === 'ready') return handle();
    if (state === 'failed' || !options.ready) return refuse();
    options.ready.then(handle, refuse);
  };
  const server = createServer((request, response) => {
    const pathname = pathOf(request);
    if (state !== 'ready' && !(request.method === 'GET' && pathname === '/healthz')) {
      const refuseUnavailable = () => {
        request.resume();
        response.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close' });
        response.end(unavailable);
      };
      return whenReady(() => server.emit('request', request, response), refuseUnavailable);
    }
    if (!hostAllowed(request, options.allowedHosts)) {
      response.writeHead(421, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: wrongHost(request) }));
      return;
    }
    if (!SAFE_METHODS.has(request.method ?? '') && !originAllowed(request, options.allowedOrigins)) {
      // The body is drained, not read, and the connection ends after the answer.
      request.resume();
      response.writeHead(403, { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close' });
      response.end(JSON.stringify({ error: `origin ${String(request.headers.origin).slice(0, 200)} may not use this server` }));
      return;
    }
    if (request.method === 'GET' && pathname === '/healthz') {
      response.writeHead(state === 'failed' ? 503 : 200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      if (state !== 'ready') return void response.end(JSON.stringify({ status: state }));
      const token = presentedToken(request);
      const authenticated = token !== undefined && options.isServerToken(token);
      response.end(JSON.stringify({ status: 'ok', ...(authenticated ? options.health() : {}) }));
      return;
    }
    const route = pathname !== undefined && options.routes ? routeFor(options.routes, pathname) : undefined;
    if (route) return route.handle(request, response);
    if (options.web && pathname !== undefined && (pathname === '/' || pathname === '/web' || pathname.startsWith('/web/'))) return options.web(request, response, pathname);
    if (pathname === API_PATH) {
      response.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
      response.end(JSON.stringify({ error: `${API_PATH} speaks JSON-RPC over WebSocket only` }));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: pathname === undefined ? 'malformed request target' : `no such path: ${pathname.slice(0, 200)}` }));
  });
  // A client that resets the connection mid-request must not reach the process as an error.
  server.on('clientError', (error, socket) => {
    if (socket.writable && (error as NodeJS.ErrnoException).code !== 'ECONNRESET') socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  server.on('upgrade', (request, socket, head) => {
    // Node removes its own error handling from upgraded sockets; without this a peer that
    // resets the connection while being refused would end the process.
    socket.on('error', (error) => options.logger.warn({ error: error.message }, 'connection error during the WebSocket handshake'));
    const unavailable = () => refuse(socket, 503, 'Service Unavailable', 'the server failed to start');
    whenReady(() => {
      if (endpoint) return upgrade(request, socket, head, endpoint);
      endpointLoaded.then(
        (loaded) => upgrade(request, socket, head, loaded),
        (error: unknown) => {
          options.logger.warn({ error: (error as Error).message }, 'loading the WebSocket endpoint failed');
          unavailable();
        },
      );
    }, unavailable);
  });
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer, webSocketEndpoint: WebSocketServer): void => {
    const pathname = pathOf(request);
    if (!hostAllowed(request, options.allowedHosts)) return refuse(socket, 421, 'Misdirected Request', wrongHost(request));
    const extra = pathname !== undefined && options.upgrades && Object.hasOwn(options.upgrades, pathname) ? options.upgrades[pathname] : undefined;
    if (extra) return extra(request, socket, head);
    if (pathname !== API_PATH) return refuse(socket, 404, 'Not Found', `no WebSocket endpoint at ${(pathname ?? 'a malformed target').slice(0, 200)}`);
    if (!originAllowed(request, options.allowedOrigins)) {
      return refuse(socket, 403, 'Forbidden', `origin ${String(request.headers.origin).slice(0, 200)} may not use this server`);
    }
    const tokens = presentedTokens(request);
    if (tokens === undefined) return refuse(socket, 401, 'Unauthorized', 'unsupported Authorization header: send "Authorization: Bearer <token>"');
    upgradeCaller(request, tokens, options)
      .then((decision) => {
        if (decision === 'wrong token') return refuse(socket, 401, 'Unauthorized', 'wrong token');
        const { authenticated, caller } = decision;
        webSocketEndpoint.handleUpgrade(request, socket, head, (webSocket) => options.onConnection(webSocket, socket, request, authenticated, caller));
      })
      .catch((error: unknown) => {
        options.logger.warn({ error: (error as Error).message }, 'authenticating a WebSocket upgrade failed');
        refuse(socket, 500, 'Internal Server Error', 'authentication failed inside the server; see its log');
      });
  };
  const routes = (): HttpRouteEntry[] => [
    ...BUILT_IN_ROUTES,
    ...Object.entries(options.routes ?? {}).map(([key, route]) => routeEntry(key, route)),
    ...Object.keys(options.upgrades ?? {}).map((path) => ({ methods: ['GET'], path })),
    ...(options.webRoutes?.() ?? []),
  ];
  return { server, webSockets, routes };
}

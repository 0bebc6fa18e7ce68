/**
 * The HTTP surface of `openvaala serve` (SPEC §2, §5): `GET /healthz` without auth, and the
 * JSON-RPC WebSocket at `/api/v1/openvaala`, which requires the server token and refuses
 * pages of other sites (Origin check) before the upgrade completes.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { timingSafeEqual } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';

/** Path of the runtime protocol endpoint (SPEC §5, contract). */
export const API_PATH = '/api/v1/openvaala';
/** Prefix of the WebSocket sub-protocol that carries the token for browsers (SPEC §5). */
export const TOKEN_SUBPROTOCOL_PREFIX = 'openvaala.token.';

/** Options of the HTTP server. */
export interface HttpServerOptions {
  token: string;
  /** Extra allowed `Origin` values besides the server's own (e.g. a dev server). */
  allowedOrigins: string[];
  /** Body of `GET /healthz`. */
  health: () => Record<string, unknown>;
  /**
   * Called for each authenticated WebSocket, with the TCP socket under it (used to batch the
   * frames of one tick into one write).
   */
  onConnection: (webSocket: WebSocket, transport: Duplex, request: IncomingMessage) => void;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request carries: `Authorization: Bearer …` or the token sub-protocol. */
export function presentedToken(request: IncomingMessage): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization?.startsWith('Bearer ')) return authorization.slice(7).trim();
  const protocols = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((value) => value.trim());
  const carrying = protocols.find((value) => value.startsWith(TOKEN_SUBPROTOCOL_PREFIX));
  return carrying?.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
}

/**
 * Whether a request's `Origin` may reach the API: absent (not a browser), the server's own
 * origin (same host header), or one configured.
 */
export function originAllowed(request: IncomingMessage, allowedOrigins: string[]): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  const host = request.headers.host;
  if (host && (origin === `http://${host}` || origin === `https://${host}`)) return true;
  return allowedOrigins.includes(origin);
}

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ error: message });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Creates the HTTP server (not yet listening). */
export function createHttpServer(options: HttpServerOptions): { server: Server; webSockets: WebSocketServer } {
  const webSockets = new WebSocketServer({
    noServer: true,
    maxPayload: 16 * 1024 * 1024,
    // Echo the token sub-protocol: browsers fail the handshake when none they offered is chosen.
    handleProtocols: (protocols) => [...protocols].find((value) => value.startsWith(TOKEN_SUBPROTOCOL_PREFIX)) ?? false,
  });
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method === 'GET' && url.pathname === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify({ status: 'ok', ...options.health() }));
      return;
    }
    if (url.pathname === API_PATH) {
      response.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
      response.end(JSON.stringify({ error: `${API_PATH} speaks JSON-RPC over WebSocket only` }));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: `no such path: ${url.pathname}` }));
  });
  server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== API_PATH) return refuse(socket, 404, 'Not Found', `no WebSocket endpoint at ${url.pathname}`);
    if (!originAllowed(request, options.allowedOrigins)) {
      return refuse(socket, 403, 'Forbidden', `origin ${request.headers.origin} may not use this server`);
    }
    const token = presentedToken(request);
    if (token === undefined) return refuse(socket, 401, 'Unauthorized', 'missing token: send "Authorization: Bearer <token>" or the openvaala.token.<token> sub-protocol');
    if (!sameSecret(token, options.token)) return refuse(socket, 401, 'Unauthorized', 'wrong token');
    webSockets.handleUpgrade(request, socket, head, (webSocket) => options.onConnection(webSocket, socket, request));
  });
  return { server, webSockets };
}

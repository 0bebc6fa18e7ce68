/**
 * The WebSocket layer of the JSON-RPC endpoint (`ws`), kept out of `http-server.ts` so that
 * `serve` can listen and answer `/healthz` before this code is loaded: no upgrade is handled
 * before the server's services are open anyway (`http-server.ts` holds them until then).
 */
import { WebSocket, WebSocketServer } from 'ws';
import { MAX_MESSAGE_BYTES, TOKEN_SUBPROTOCOL_PREFIX } from '../protocol/transport.js';

/** Close reasons for the frame errors the WebSocket layer closes a connection on (RFC 6455 §7.4.1). */
const FRAME_ERROR_REASONS: Record<number, string> = {
  1002: 'protocol error: invalid WebSocket frame (RFC 6455 section 5)',
  1007: 'invalid data: text messages must be UTF-8',
  1009: `message too big: the limit is ${MAX_MESSAGE_BYTES} bytes (16 MiB)`,
};

/** A server-side WebSocket whose frame-error closes carry a reason naming what was wrong. */
class ExplainingWebSocket extends WebSocket {
  override close(code?: number, reason?: string | Buffer): void {
    super.close(code, reason ?? (code !== undefined ? FRAME_ERROR_REASONS[code] : undefined));
  }
}

/**
 * The server's WebSocket endpoint, without a server of its own (the HTTP server hands it the
 * upgrades it accepts): messages up to `MAX_MESSAGE_BYTES` (16 MiB, docs/protocol.md), no
 * compression, the token sub-protocol echoed (browsers fail a handshake in which none of the
 * sub-protocols they offered is chosen), and frame errors closed with a reason.
 */
export function createWebSocketEndpoint(): WebSocketServer {
  return new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
    WebSocket: ExplainingWebSocket,
    handleProtocols: (protocols) => [...protocols].find((value) => value.startsWith(TOKEN_SUBPROTOCOL_PREFIX)) ?? false,
  });
}

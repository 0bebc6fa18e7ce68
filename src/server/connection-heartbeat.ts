/**
 * The WebSocket heartbeat of a client connection: a ping every interval, and a client that did
 * not answer the previous one with a pong (RFC 6455 §5.5.2–5.5.3) is dropped, so a peer gone
 * without a close frame does not keep its subscriptions and send buffer forever.
 */
import type { WebSocket } from 'ws';

/**
 * Pings `socket` every `intervalMs` (ms) and terminates it, after calling `onDropped`, when the
 * last ping had no pong by the next one. The timer does not keep the process alive.
 * @returns the function that stops the heartbeat
 */
export function startHeartbeat(socket: WebSocket, intervalMs: number, onDropped: () => void): () => void {
  let answeredPing = true;
  const answered = (): void => {
    answeredPing = true;
  };
  socket.on('pong', answered);
  const timer = setInterval(() => {
    // Judged in the check phase, after this turn of the loop has read its sockets: when the
    // server was held up (a long collection, a starved CPU) past an interval, the timers phase
    // comes first, and a pong the client sent meanwhile is still unread in the socket.
    setImmediate(() => {
      if (socket.readyState !== socket.OPEN) return;
      if (!answeredPing) {
        onDropped();
        socket.terminate();
        return;
      }
      answeredPing = false;
      socket.ping();
    });
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    socket.off('pong', answered);
  };
}

/**
 * Liveness of the internal links between the servers of a cluster: both ends ping, so a peer
 * whose machine vanished (no TCP reset ever comes) is noticed within two intervals.
 */
import type { WebSocket } from 'ws';

/**
 * Interval of the link's pings, ms: a peer that has not answered the previous one is taken for
 * gone (a machine that vanished sends no TCP reset), which ends the link and starts takeovers.
 */
export const LINK_HEARTBEAT_MS = 10_000;

/**
 * Pings `socket` every {@link LINK_HEARTBEAT_MS}; terminates it when the previous ping went
 * unanswered. Returns the function that stops the pings.
 */
export function keepAlive(socket: WebSocket): () => void {
  let answered = true;
  socket.on('pong', () => (answered = true));
  const timer = setInterval(() => {
    if (!answered) {
      socket.terminate();
      return;
    }
    answered = false;
    socket.ping();
  }, LINK_HEARTBEAT_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  socket.once('close', stop);
  return stop;
}

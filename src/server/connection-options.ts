/**
 * What a client connection is built with (docs/protocol.md, "Backpressure" and
 * "Authentication"): the server's identity, where it logs, and its transport limits.
 */
import { DEFAULT_AUTHENTICATION_TIMEOUT_MS } from '../protocol/index.js';
import { DEFAULT_SEND_BUFFER_LIMIT_BYTES, DEFAULT_WRITE_THRESHOLD_BYTES, type SendBufferLimits } from './send-queue.js';

/** Server identity sent in `initialize`. */
export interface ServerIdentity {
  name: string;
  version: string;
}

/** Logs what a connection cannot report to its client. */
export interface ConnectionLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Transport limits of one connection (docs/protocol.md, "Backpressure"). */
export interface ConnectionLimits extends SendBufferLimits {
  /** Interval of WebSocket pings, ms; a peer that has not answered the previous one is dropped. */
  heartbeatIntervalMs: number;
  /** Requests handled at once; past it the connection stops reading until one finishes. */
  maxRequestsInFlight: number;
  /**
   * Milliseconds a connection opened without a token has to authenticate (`initialize` with
   * the token) before it is closed with 1008.
   */
  authenticationTimeoutMs: number;
}

/** Default transport limits. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  writeThresholdBytes: DEFAULT_WRITE_THRESHOLD_BYTES,
  limitBytes: DEFAULT_SEND_BUFFER_LIMIT_BYTES,
  heartbeatIntervalMs: 30_000,
  maxRequestsInFlight: 64,
  authenticationTimeoutMs: DEFAULT_AUTHENTICATION_TIMEOUT_MS,
};

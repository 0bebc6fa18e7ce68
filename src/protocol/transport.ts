/**
 * The transport constants of the runtime protocol (SPEC §5): where the endpoint is, how a
 * browser carries the token, and the limits and close codes a client must know. They live
 * here, not in the server, so a client depends on the protocol module only.
 */

/** Path of the runtime protocol's WebSocket endpoint (SPEC §5, contract). */
export const API_PATH = '/api/v1/openvaala';
/** Prefix of the WebSocket sub-protocol that carries the token for browsers (SPEC §5). */
export const TOKEN_SUBPROTOCOL_PREFIX = 'openvaala.token.';
/** Largest WebSocket message a client may send, bytes (a larger one closes the connection with 1009). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** WebSocket close code for a client whose send buffer overflowed (private range, RFC 6455 §7.4.2). */
export const LAGGING_CLOSE_CODE = 4001;
/** Close reason sent with {@link LAGGING_CLOSE_CODE}. */
export const LAGGING_CLOSE_REASON = 'lagging: resubscribe with afterSeq';
/** Bytes the socket may hold before further messages wait in the connection's outbox. */
export const DEFAULT_WRITE_THRESHOLD_BYTES = 512 * 1024;
/** Bytes the outbox may hold before the client is closed as lagging. */
export const DEFAULT_SEND_BUFFER_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * WebSocket close code for a connection that failed to authenticate inside the protocol
 * (policy violation, RFC 6455 §7.4.1): sent right after a `-32001` error, or when a connection
 * opened without a token sent nothing in time.
 */
export const UNAUTHORIZED_CLOSE_CODE = 1008;
/** Close reason sent with {@link UNAUTHORIZED_CLOSE_CODE} after a `-32001` error. */
export const UNAUTHORIZED_CLOSE_REASON = 'unauthorized: send "initialize" with the server token first';
/** Close reason sent with {@link UNAUTHORIZED_CLOSE_CODE} when no authentication came in time. */
export const AUTHENTICATION_TIMEOUT_CLOSE_REASON = 'unauthorized: no "initialize" with the server token in time';
/**
 * Milliseconds a connection opened without a token has to send `initialize` carrying it;
 * after that it is closed with {@link UNAUTHORIZED_CLOSE_CODE}.
 */
export const DEFAULT_AUTHENTICATION_TIMEOUT_MS = 10_000;

/**
 * The runtime protocol's error codes, without the schemas around them, so that clients can
 * import them without loading zod (`openvaala exec` start-up and memory).
 */

/**
 * Error codes: the JSON-RPC 2.0 reserved ones (https://www.jsonrpc.org/specification §5.1)
 * plus the runtime's own, in the range that specification leaves to implementations
 * (-32000…-32099). `docs/protocol.md` lists each one; a test keeps the two in step.
 */
export const ErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /**
   * The connection is not authenticated: it opened without a token and sent something other
   * than `initialize` carrying the server's token, or an `initialize` carried a wrong token.
   * The connection is closed (1008) right after this error.
   */
  unauthorized: -32001,
  /** The connection has not sent `initialize` yet. */
  notInitialized: -32002,
  /**
   * The connection is authenticated, but the thing it touched belongs to another connection
   * (see {@link forbidden}).
   */
  forbidden: -32003,
  /** A named thing (conversation, session) does not exist. */
  notFound: -32004,
  /** The request is valid but cannot be done in the current state; `data.reason` says why. */
  conflict: -32009,
} as const;

/**
 * How the server writes its data directory in what it tells clients (damage locations, error
 * messages naming a log file): `<data dir>/conversations/…`, since where the directory is on
 * the server's machine is not a client's business (docs/protocol.md, log damage). A client on
 * the same machine that found the server through that directory may write the path back.
 */
export const DATA_DIRECTORY_MARK = '<data dir>/';

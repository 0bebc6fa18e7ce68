/**
 * First-message authentication of a connection (docs/protocol.md, "Connecting and
 * authenticating"): a connection whose upgrade carried no token starts unauthenticated; its
 * first message must be `initialize` with the server token, anything else is refused with
 * `-32001` and the connection is closed with 1008. Kept apart from the connection so the rule
 * is read in one place and needs only a few things from it.
 */
import { AUTHENTICATION_TIMEOUT_CLOSE_REASON, UNAUTHORIZED_CLOSE_CODE, UNAUTHORIZED_CLOSE_REASON, unauthorized, type RpcError } from '../protocol/index.js';

/** How a connection proves it holds the server token (docs/protocol.md, "Connecting and authenticating"). */
export interface ConnectionAuthentication {
  /** Whether the upgrade carried the right token (`Authorization: Bearer` or the token sub-protocol). */
  authenticated: boolean;
  /** Whether a token given in `initialize` is the server's; compares in constant time. */
  check(token: string): boolean;
}

/** What the gate needs from its connection. */
export interface AuthenticationHost {
  /** Number of the connection in the server log. */
  readonly number: number;
  /** Sends a JSON-RPC message to the client. */
  send(message: Record<string, unknown>): void;
  /** Closes the socket with `code` and `reason` (after what was sent so far) and ends the connection. */
  close(code: number, reason: string): void;
  /** Logs why the connection was closed. */
  warn(details: object, message: string): void;
}

/** Decides which incoming messages a connection may handle, and closes it when one is refused or time runs out. */
export class FirstMessageGate {
  private isAuthenticated: boolean;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param authentication whether the upgrade authenticated the connection, and how to check a token given in `initialize`
   * @param timeoutMs milliseconds an unauthenticated connection has to send `initialize` with the token
   * @param host the connection
   */
  constructor(
    private readonly authentication: ConnectionAuthentication,
    timeoutMs: number,
    private readonly host: AuthenticationHost,
  ) {
    this.isAuthenticated = authentication.authenticated;
    if (!this.isAuthenticated) {
      this.timer = setTimeout(() => {
        this.host.warn({ connection: this.host.number, timeoutMs }, 'client closed: no authentication in time');
        this.closeUnauthorized(AUTHENTICATION_TIMEOUT_CLOSE_REASON);
      }, timeoutMs);
      this.timer.unref();
    }
  }

  /** Whether the connection has proven it holds the server token. */
  get authenticated(): boolean {
    return this.isAuthenticated;
  }

  /**
   * Whether a message may be handled: always once authenticated, except an `initialize`
   * carrying a wrong token; before that, only an `initialize` carrying the right token (which
   * authenticates the connection). A refused message is answered with `-32001` (when it has
   * an id to answer, or is not a request at all) and the connection is closed with 1008.
   */
  admit(text: string | undefined): boolean {
    // Only an `initialize` can change anything once authenticated: other messages are not parsed twice.
    if (this.isAuthenticated && (text === undefined || !text.includes('initialize'))) return true;
    let message: { id?: unknown; method?: unknown; params?: unknown } | undefined;
    if (text !== undefined) {
      try {
        const raw: unknown = JSON.parse(text);
        if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) message = raw as typeof message;
      } catch {
        // Not JSON: refused below when unauthenticated, answered as a parse error otherwise.
      }
    }
    const method = typeof message?.method === 'string' ? message.method : undefined;
    const params = message?.params;
    const token = method === 'initialize' && typeof params === 'object' && params !== null && 'token' in params ? (params as { token: unknown }).token : undefined;
    if (method === 'initialize' && token !== undefined) {
      if (typeof token === 'string' && this.authentication.check(token)) {
        this.authenticate();
        return true;
      }
      // A wrong token is refused even on a connection whose upgrade carried the right one.
      this.refuseUnauthenticated(message, unauthorized('initialize', "params.token: not the server's token"));
      return false;
    }
    if (this.isAuthenticated) return true;
    const error =
      method === 'initialize'
        ? unauthorized('initialize', 'params.token: missing; this connection presented no token when it opened, so its "initialize" must carry the server token')
        : unauthorized(method, 'this connection presented no token when it opened; send "initialize" with the server token (params.token) first');
    this.refuseUnauthenticated(message, error);
    return false;
  }

  /** Stops the authentication deadline (the connection has ended). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private authenticate(): void {
    this.isAuthenticated = true;
    this.stop();
  }

  /**
   * Answers a refused message with `error` and closes the connection with 1008. A request
   * gets the error under its id; anything that is not a request (not JSON, binary, no method)
   * under id null; a notification gets no answer (JSON-RPC 2.0 §4.1), only the close.
   */
  private refuseUnauthenticated(message: { id?: unknown; method?: unknown } | undefined, error: RpcError): void {
    const isRequest = typeof message?.method === 'string';
    const id = isRequest ? message?.id : null;
    // A notification (a method without id) gets no answer, only the close.
    if (!isRequest || id !== undefined) {
      this.host.send({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: error.code, message: error.message } });
    }
    this.host.warn({ connection: this.host.number, error: error.message }, 'client closed: not authenticated');
    this.closeUnauthorized(UNAUTHORIZED_CLOSE_REASON);
  }

  /** Closes with 1008 after what was sent so far (the close frame follows it on the socket). */
  private closeUnauthorized(reason: string): void {
    this.host.close(UNAUTHORIZED_CLOSE_CODE, reason);
  }
}

/**
 * The web UI's client of the runtime protocol (docs/protocol.md, protocol version 2) over a
 * browser WebSocket. It imports the protocol module for types and transport constants only
 * (no zod in the bundle), keeps one connection open, and when the connection drops (server
 * restart, network) reconnects by itself with exponential backoff and tells its listeners, so
 * each conversation view resubscribes with `afterSeq` ("Reconnecting with afterSeq").
 */
import type { AnyNotification, MethodName, MethodParams, MethodResult } from '../../protocol/methods.js';
import { API_PATH, TOKEN_SUBPROTOCOL_PREFIX, UNAUTHORIZED_CLOSE_CODE } from '../../protocol/transport.js';

/** The protocol version this client speaks (docs/protocol.md, "initialize"). */
export const WEB_PROTOCOL_VERSION = 2;

/** Where the connection stands. `unauthorized`: the server refused it; no retry until signed in again. */
export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'unauthorized' | 'closed';

/** An error answer of the server (JSON-RPC error object). */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** The subset of the WebSocket API the client uses (the browser's, or `ws` in Node tests). */
export interface WebSocketLike {
  readyState: number;
  send(text: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'close' | 'message' | 'error', listener: (event: { data?: unknown; code?: number; reason?: string }) => void): void;
}

/** How the client connects. */
export interface ProtocolClientOptions {
  /** Server origin (`http://127.0.0.1:8790`); default the page's own origin. */
  origin?: string;
  /** Sent as `clientInfo.name`. */
  clientName: string;
  /**
   * The server token, carried as the `openvaala.token.` sub-protocol. Absent in the page,
   * where the HttpOnly sign-in cookie authenticates the upgrade.
   */
  token?: string;
  /** Builds a socket; default `new WebSocket(url, protocols)`. */
  createSocket?: (url: string, protocols: string[]) => WebSocketLike;
  /** First reconnect delay, ms (doubled on each failure up to `maxDelayMs`); default 250. */
  initialDelayMs?: number;
  /** Longest reconnect delay, ms; default 5000. */
  maxDelayMs?: number;
  /**
   * Whether the page is signed in again (`GET /web/v1/api/session`). While `unauthorized` the
   * client asks it every `signInPollMs` and reconnects once it says yes: a restarted server
   * forgets its browser sessions, and signing in again in any tab brings every tab back.
   */
  signedIn?: () => Promise<boolean>;
  /** How often `signedIn` is asked while unauthorized, ms; default 2000. */
  signInPollMs?: number;
}

interface PendingRequest {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * One logical connection to the server that survives reconnects. Requests made while
 * disconnected wait for the next connection; requests in flight when it drops fail with an
 * Error (the server may or may not have acted: callers that must not act twice send a
 * `clientMessageId`).
 */
export class ProtocolClient {
  private socket: WebSocketLike | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly waitingForOpen: Array<() => void> = [];
  private readonly notificationListeners = new Set<(event: AnyNotification) => void>();
  private readonly statusListeners = new Set<(status: ConnectionStatus, generation: number) => void>();
  private delayMs: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  /** Where the connection stands. */
  status: ConnectionStatus = 'connecting';
  /** Counts successful connections: a listener resubscribes when it grows. */
  generation = 0;
  /** The server's `initialize` answer of the current connection. */
  serverInfo: MethodResult<'initialize'> | undefined;

  constructor(private readonly options: ProtocolClientOptions) {
    this.delayMs = options.initialDelayMs ?? 250;
  }

  /** Opens the first connection (later ones are opened by the client itself). */
  start(): void {
    this.stopped = false;
    this.connect();
  }

  /** Closes the connection for good (no reconnect); waiting requests fail. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.close(1000);
    this.setStatus('closed');
    this.failPending(new Error('the client was stopped'));
  }

  /** Resolves once the connection is open and initialized. */
  whenOpen(): Promise<void> {
    // A socket already closing counts as closed: the request waits for the next connection.
    if (this.status === 'open' && this.socket?.readyState === 1) return Promise.resolve();
    return new Promise((resolve) => this.waitingForOpen.push(resolve));
  }

  /**
   * Sends a request (after the connection is open) and resolves with its result.
   * @throws ProtocolError with the server's code and message; Error when the connection dropped first
   */
  async request<M extends MethodName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>> {
    if (this.stopped) throw new Error(`${method}: the client was stopped`);
    await this.whenOpen();
    return this.send(method, params) as Promise<MethodResult<M>>;
  }

  /** Adds a notification listener; returns the function that removes it. */
  onNotification(listener: (event: AnyNotification) => void): () => void {
    this.notificationListeners.add(listener);
    return () => this.notificationListeners.delete(listener);
  }

  /** Adds a listener of status changes (with the connection's generation); returns its remover. */
  onStatus(listener: (status: ConnectionStatus, generation: number) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Drops the connection now (tests and the "reconnect" button); the client reconnects. */
  dropConnection(): void {
    this.socket?.close(4000, 'dropped by the client');
    this.setStatus('reconnecting');
  }

  private send(method: string, params: unknown): Promise<unknown> {
    const socket = this.socket;
    if (!socket || socket.readyState !== 1) return Promise.reject(new Error(`${method}: not connected`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  private url(): string {
    // Typed loosely: this module also runs in Node tests, where there is no `location`.
    const origin = this.options.origin ?? (globalThis as { location?: { origin: string } }).location?.origin ?? '';
    return `${origin.replace(/^http/, 'ws').replace(/\/$/, '')}${API_PATH}`;
  }

  private connect(): void {
    if (this.stopped) return;
    this.setStatus(this.generation === 0 ? 'connecting' : 'reconnecting');
    const protocols = this.options.token ? [`${TOKEN_SUBPROTOCOL_PREFIX}${this.options.token}`] : [];
    const create = this.options.createSocket ?? ((url, list) => new (globalThis as unknown as { WebSocket: new (url: string, protocols: string[]) => WebSocketLike }).WebSocket(url, list));
    let socket: WebSocketLike;
    try {
      socket = create(this.url(), protocols);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    let unauthorized = false;
    socket.addEventListener('open', () => {
      this.send('initialize', { clientInfo: { name: this.options.clientName }, protocolVersion: WEB_PROTOCOL_VERSION, capabilities: { approvals: false, userInput: false, deltas: true, fs: true, terminal: true } }).then(
        (result) => {
          this.serverInfo = result as MethodResult<'initialize'>;
          this.delayMs = this.options.initialDelayMs ?? 250;
          this.generation += 1;
          this.setStatus('open');
          for (const resolve of this.waitingForOpen.splice(0)) resolve();
        },
        (error: unknown) => {
          if (error instanceof ProtocolError && error.code === -32001) unauthorized = true;
          socket.close();
        },
      );
    });
    socket.addEventListener('message', (event) => this.receive(String(event.data)));
    socket.addEventListener('close', (event) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.failPending(new Error(`connection closed (${event.code ?? 'no code'})`));
      if (unauthorized || event.code === UNAUTHORIZED_CLOSE_CODE) {
        this.setStatus('unauthorized');
        this.waitForSignIn();
        return;
      }
      this.scheduleReconnect();
    });
    // An error is always followed by close, which decides what happens next.
    socket.addEventListener('error', () => undefined);
  }

  private waitForSignIn(): void {
    const check = this.options.signedIn;
    if (!check || this.stopped) return;
    this.timer = setTimeout(() => {
      check().then(
        (signedIn) => (signedIn ? this.connect() : this.waitForSignIn()),
        () => this.waitForSignIn(),
      );
    }, this.options.signInPollMs ?? 2000);
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.setStatus('reconnecting');
    // Jitter spreads the reconnects of many tabs after a server restart.
    const delay = Math.min(this.delayMs, this.options.maxDelayMs ?? 5000) * (0.8 + Math.random() * 0.4);
    this.delayMs = Math.min(this.delayMs * 2, this.options.maxDelayMs ?? 5000);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  private failPending(error: Error): void {
    for (const request of this.pending.values()) request.reject(error);
    this.pending.clear();
  }

  private setStatus(status: ConnectionStatus): void {
    if (this.status === status && status !== 'open') return;
    this.status = status;
    for (const listener of this.statusListeners) listener(status, this.generation);
  }

  private receive(text: string): void {
    let message: { id?: number | string | null; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (message.method !== undefined) {
      // Server-to-client requests are not declared (capabilities), so only notifications come.
      if (message.id !== undefined) return;
      const event = { method: message.method, params: message.params } as AnyNotification;
      for (const listener of this.notificationListeners) listener(event);
      return;
    }
    if (typeof message.id !== 'number') return;
    const request = this.pending.get(message.id);
    if (!request) return;
    this.pending.delete(message.id);
    if (message.error) request.reject(new ProtocolError(message.error.code, message.error.message, message.error.data));
    else request.resolve(message.result);
  }
}

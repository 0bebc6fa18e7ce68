/**
 * A client of the runtime protocol (SPEC §5) over WebSocket, typed by the protocol module.
 * Used by the CLI, the adapters and the tests.
 */
import WebSocket from 'ws';
// Values come from the protocol's schema-free modules and the rest is types only, so a client
// does not load zod or build the protocol's schemas (start-up time and memory of `exec`).
import { ErrorCodes } from '../protocol/error-codes.js';
import { API_PATH } from '../protocol/transport.js';
import { PROTOCOL_VERSION } from '../protocol/version.js';
import type { AnyNotification, ClientCapabilities, MethodName, MethodParams, MethodResult, serverRequests } from '../protocol/index.js';
import type { z } from 'zod';

/** A server-to-client request method name. */
export type ServerRequestName = keyof typeof serverRequests;
/** The params of a server-to-client request. */
export type ServerRequestParams<M extends ServerRequestName> = z.infer<(typeof serverRequests)[M]['params']>;
/** The result a client answers a server-to-client request with. */
export type ServerRequestResult<M extends ServerRequestName> = z.infer<(typeof serverRequests)[M]['result']>;

/** Which way a protocol message went, seen from the client. */
export type ProtocolMessageDirection = 'sent' | 'received';

/** One protocol message a `RuntimeClient` sent or received. */
export interface ProtocolMessageEvent {
  direction: ProtocolMessageDirection;
  /** The message as a JSON value; undefined when received text was not JSON. */
  message: unknown;
  /** The text on the wire. */
  text: string;
  /** The client it went through (tell connections apart, e.g. to pair responses with requests). */
  client: RuntimeClient;
}

/** Sees protocol messages; must not throw (what it throws is rethrown outside the client). */
export type ProtocolMessageObserver = (event: ProtocolMessageEvent) => void;

const observers = new Set<ProtocolMessageObserver>();

/**
 * Registers an observer of every JSON-RPC message every `RuntimeClient` of this process sends
 * and receives, in wire order, before the client acts on it. For tools and tests that check
 * traffic (e.g. against the JSON Schema, SPEC §5); an observer cannot change or stop a message.
 * @returns the function that removes the observer
 */
export function observeProtocolMessages(observer: ProtocolMessageObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

function emit(event: ProtocolMessageEvent): void {
  for (const observer of observers) {
    try {
      observer(event);
    } catch (error) {
      // The client's own state must not depend on an observer; its failure still surfaces.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

/** An error response from the server. */
export class RuntimeClientError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RuntimeClientError';
  }
}

/** Connection options. */
export interface RuntimeClientOptions {
  /** Server base URL (`http://127.0.0.1:8790`). */
  url: string;
  token: string;
  /** Sent as `clientInfo.name` in `initialize`. */
  clientName: string;
  /** Extra HTTP headers of the upgrade request (e.g. `Origin`). */
  headers?: Record<string, string>;
  /**
   * What this client declares in `initialize`. Default `DEFAULT_RUNTIME_CLIENT_CAPABILITIES`:
   * it answers `approval/request` and `input/request` (with handlers registered through
   * `handleServerRequest`; requests without a handler stay unanswered for another client) and
   * wants deltas. Pass `{}` to declare nothing (the server's defaults apply).
   */
  capabilities?: ClientCapabilities;
}

/** What a `RuntimeClient` declares unless told otherwise. */
export const DEFAULT_RUNTIME_CLIENT_CAPABILITIES: ClientCapabilities = { approvals: true, userInput: true, deltas: true };

/** A connected, initialized client. */
export class RuntimeClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; method: string }>();
  private readonly listeners = new Set<(event: AnyNotification) => void>();
  private readonly requestHandlers = new Map<string, (params: unknown) => Promise<unknown>>();
  private closedError: Error | undefined;
  private lastError: Error | undefined;
  private readonly closeListeners = new Set<(error: Error) => void>();
  /** The server's answer to `initialize` (its identity, protocol version and capabilities). */
  initializeResult: MethodResult<'initialize'> | undefined;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.receive(data.toString()));
    // A broken frame from the server closes the connection (the close handler reports it);
    // unhandled, the error would end the client's process.
    socket.on('error', (error) => (this.lastError = error));
    socket.on('close', (code, reason) => {
      this.closedError = new Error(`connection closed (${code}${reason.length ? `: ${reason.toString()}` : ''}${this.lastError ? `; ${this.lastError.message}` : ''})`);
      for (const request of this.pending.values()) request.reject(this.closedError);
      this.pending.clear();
      for (const listener of this.closeListeners) listener(this.closedError);
    });
  }

  /**
   * Connects and sends `initialize`.
   * @throws Error with the HTTP status and the server's message when the upgrade is refused (401, 403)
   */
  static async connect(options: RuntimeClientOptions): Promise<RuntimeClient> {
    const wsUrl = `${options.url.replace(/^http/, 'ws').replace(/\/$/, '')}${API_PATH}`;
    const socket = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${options.token}`, ...options.headers } });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => reject(new Error(`server refused the connection: HTTP ${response.statusCode} ${body}`)));
      });
      socket.once('error', reject);
    });
    const client = new RuntimeClient(socket);
    client.initializeResult = await client.request('initialize', { clientInfo: { name: options.clientName }, protocolVersion: PROTOCOL_VERSION, capabilities: options.capabilities ?? DEFAULT_RUNTIME_CLIENT_CAPABILITIES });
    return client;
  }

  /**
   * Sends a request and resolves with its result.
   * @throws RuntimeClientError with the server's code and message
   */
  request<M extends MethodName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, method });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Called once when the connection closes (by either side), with why. */
  onClose(listener: (error: Error) => void): void {
    if (this.closedError) listener(this.closedError);
    else this.closeListeners.add(listener);
  }

  /** Adds a notification listener; returns the function that removes it. */
  onNotification(listener: (event: AnyNotification) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Answers the server's requests of one method (e.g. `approval/request`) with the handler's
   * result. Without a handler such requests are left unanswered (another client may answer).
   */
  handleServerRequest<M extends ServerRequestName>(method: M, handler: (params: ServerRequestParams<M>) => Promise<ServerRequestResult<M>>): void {
    this.requestHandlers.set(method, handler as (params: unknown) => Promise<unknown>);
  }

  /** Closes the connection (the work on the server goes on). */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close(1000);
    });
  }

  private send(message: Record<string, unknown>): void {
    const text = JSON.stringify(message);
    // Observers get the message as the server will read it (undefined members dropped).
    if (observers.size > 0) emit({ direction: 'sent', message: JSON.parse(text) as unknown, text, client: this });
    this.socket.send(text);
  }

  private receive(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      if (observers.size > 0) emit({ direction: 'received', message: undefined, text, client: this });
      return;
    }
    if (observers.size > 0) emit({ direction: 'received', message: parsed, text, client: this });
    const message = parsed as { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
    if (message.method !== undefined && message.id !== undefined) {
      const handler = this.requestHandlers.get(message.method);
      const id = message.id;
      if (handler) {
        handler(message.params).then(
          (result) => this.send({ jsonrpc: '2.0', id, result }),
          (error: Error) => this.send({ jsonrpc: '2.0', id, error: { code: ErrorCodes.internalError, message: error.message } }),
        );
      }
      return;
    }
    if (message.method !== undefined && message.id === undefined) {
      // Notifications this client does not know (from a newer server) reach the listeners too; they switch on the method.
      const event = { method: message.method, params: message.params } as AnyNotification;
      for (const listener of this.listeners) listener(event);
      return;
    }
    if (typeof message.id !== 'number') return;
    const request = this.pending.get(message.id);
    if (!request) return;
    this.pending.delete(message.id);
    if (message.error) request.reject(new RuntimeClientError(message.error.code, message.error.message, message.error.data));
    else request.resolve(message.result);
  }
}

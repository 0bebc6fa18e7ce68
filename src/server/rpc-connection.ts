/**
 * One client connection speaking the runtime protocol (SPEC §5): JSON-RPC 2.0 messages over a
 * WebSocket. Validates every request against the protocol schemas, dispatches it to the
 * runtime, and forwards the events of the conversations the client subscribed to. A
 * connection whose upgrade carried no token starts unauthenticated: its first message must be
 * `initialize` with the server token, anything else is refused with `-32001` and closes it.
 */
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { z } from 'zod';
import {
  ErrorCodes,
  IncomingMessageSchema,
  isMethodName,
  methods,
  parseParams,
  parseParamsStrictly,
  RpcError,
  type AnyNotification,
  type MethodName,
  type MethodParams,
  type MethodResult,
  type ResolvedClientCapabilities,
  DEFAULT_CLIENT_CAPABILITIES,
} from '../protocol/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { LOCAL_OWNER, type Caller } from '../platform/caller.js';
import type { Platform } from '../platform/platform.js';
import type { ConfigService } from './config-service.js';
import { notificationWithProject, withConversationProject } from './conversation-projects.js';
import { redactOutgoing, redactOutgoingNotification } from './conversation-redaction.js';
import { createMethodHandlers, type MethodHandlers, type RequestContext } from './method-handlers.js';
import { FirstMessageGate, type ConnectionAuthentication } from './first-message-auth.js';
import { ServerRequests } from './server-requests.js';
import { ConnectionSubscriptions } from './connection-subscriptions.js';
import { startHeartbeat } from './connection-heartbeat.js';
import { requestError } from './request-errors.js';
import { StreamRedaction } from '../platform/secrets/stream-redaction.js';
import { SendQueue } from './send-queue.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits, type ConnectionLogger, type ServerIdentity } from './connection-options.js';
import { jsonSyntaxProblem } from '../printable-text.js';
import { formatKeyPath } from '../key-path.js';

export type { ServerIdentity, ConnectionLogger, ConnectionLimits } from './connection-options.js';
export { DEFAULT_CONNECTION_LIMITS } from './connection-options.js';
export type { ConnectionAuthentication } from './first-message-auth.js';

let connectionCount = 0;

/**
 * Sends requests for conversations another server of a cluster owns to that server
 * (docs/deployment.md, "Several servers on PostgreSQL"; `cluster/conversation-router.ts`).
 */
export interface RequestRouting {
  /**
   * Where a request goes, after its access check: `forwarded: false` to serve it here, or the
   * owner's result. Synchronous when it is served here, so requests keep their order.
   * @throws RpcError as the owner answered, or when the owner cannot be reached
   */
  route(connection: RpcConnection, method: string, params: unknown): { forwarded: false } | { forwarded: true; result: unknown } | Promise<{ forwarded: false } | { forwarded: true; result: unknown }>;
}

/** State of one connected client, used by the method handlers. */
export class RpcConnection {
  private initialized = false;
  /** Admits messages until the connection has proven it holds the server token. */
  private readonly gate: FirstMessageGate;
  /** The client's name from `initialize`. */
  clientName = 'unknown';
  /** Number of this connection in the server log. */
  readonly number = ++connectionCount;
  /** What the client declared in `initialize`, defaults applied. */
  capabilities: ResolvedClientCapabilities = DEFAULT_CLIENT_CAPABILITIES;
  /** Server-to-client requests waiting for this client's answer. */
  private readonly serverRequests: ServerRequests;
  /** Subscriptions and other holds (terminals), by conversation. */
  private readonly subscriptions = new ConnectionSubscriptions((conversationId) => {
    this.streamRedaction?.forgetConversation(conversationId);
    // Nothing will tell this connection when those are resolved: stop waiting for its answers.
    this.serverRequests.drop(conversationId);
  });
  private readonly handlers: MethodHandlers;
  private readonly queue: SendQueue;
  private closed = false;
  private inFlight = 0;
  private paused = false;
  private readonly stopHeartbeat: () => void;
  /** Run once when the connection ends (e.g. to stop its list feed). */
  private readonly disposers = new Set<() => void>();
  /** The streams of items in progress this client receives, redacted across their deltas. */
  private streamRedaction: StreamRedaction | undefined;
  /** Cluster mode: forwards requests for conversations owned by other servers (undefined: every request is served here). */
  routing: RequestRouting | undefined;

  /**
   * @param socket the accepted WebSocket
   * @param transport the TCP socket under it
   * @param runtime the runtime requests go to
   * @param config the configuration in force (config/* methods)
   * @param identity server name and version
   * @param logger where send failures and internal errors are logged
   * @param authentication whether the upgrade authenticated it, and how to check a token given in `initialize`
   * @param limits send buffer, heartbeat, request and authentication limits
   * @param caller who this connection acts as (SPEC §9, docs/platform.md "Members and access"; set
   *   at the upgrade, see `HttpServerOptions.onConnection`): every request and notification is checked against it
   * @param platform the platform (projects, access rules, secrets; identity when platform mode is on)
   */
  constructor(
    private readonly socket: WebSocket,
    transport: Duplex,
    readonly runtime: Runtime,
    readonly config: ConfigService,
    readonly identity: ServerIdentity,
    private readonly logger: ConnectionLogger,
    authentication: ConnectionAuthentication,
    private readonly connectionLimits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    readonly caller: Caller = LOCAL_OWNER,
    readonly platform?: Platform,
  ) {
    const limits = connectionLimits;
    this.gate = new FirstMessageGate(authentication, limits.authenticationTimeoutMs, {
      number: this.number,
      send: (message) => this.send(message),
      close: (code, reason) => {
        socket.close(code, reason);
        this.dispose();
      },
      warn: (details, message) => this.logger.warn(details, message),
    });
    this.serverRequests = new ServerRequests({
      runtime,
      clientName: () => this.clientName,
      send: (message) => this.send(message),
      warn: (details, message) => this.logger.warn(details, message),
    });
    this.handlers = createMethodHandlers(this);
    this.queue = new SendQueue(socket, transport, limits, {
      overflow: ({ outboxBytes, socketBytes }) => {
        this.logger.warn({ connection: this.number, client: this.clientName, limitBytes: limits.limitBytes, outboxBytes, socketBytes }, 'client closed: send buffer over its limit (lagging)');
        this.dispose();
      },
      // One line per connection: a dead peer fails every write still queued for it.
      writeFailed: (error) => this.logger.warn({ connection: this.number, client: this.clientName, error: error.message }, 'could not send to client; the connection is gone'),
    });
    socket.on('message', (data, isBinary) => {
      if (this.closed) return;
      // Checked here, synchronously and in arrival order: requests sent right after an
      // `initialize` carrying the token are accepted, anything before it is not.
      const text = isBinary ? undefined : data.toString();
      if (!this.gate.admit(text)) return;
      if (text === undefined) {
        this.send({ jsonrpc: '2.0', id: null, error: { code: ErrorCodes.invalidRequest, message: 'binary frames are not supported; send JSON text' } });
        return;
      }
      this.handle(text).catch((error: unknown) => this.logger.warn({ error: errorMessage(error) }, 'a client message could not be handled'));
    });
    // Frame errors (too big, bad opcode, bad UTF-8...) are answered by the close frame itself;
    // without this listener they would end the process.
    socket.on('error', (error) => this.logger.warn({ connection: this.number, error: error.message }, 'WebSocket error from client'));
    socket.on('close', () => this.dispose());
    this.stopHeartbeat = startHeartbeat(socket, limits.heartbeatIntervalMs, () => this.logger.warn({ connection: this.number, client: this.clientName }, 'client dropped: no answer to the last ping'));
    this.maxRequestsInFlight = limits.maxRequestsInFlight;
  }

  private readonly maxRequestsInFlight: number;

  /** Bytes waiting to reach this client: in the outbox and in the socket's buffer. */
  get bufferedBytes(): number {
    return this.queue.waitingBytes + this.socket.bufferedAmount;
  }

  /** Send buffer figures of this connection for `/healthz`: bytes waiting now, the most ever waiting, the largest message. */
  get sendBuffer(): { connection: number; client: string; bufferedBytes: number; peakBufferedBytes: number; largestMessageBytes: number } {
    return { connection: this.number, client: this.clientName, bufferedBytes: this.bufferedBytes, peakBufferedBytes: this.queue.peakBytes, largestMessageBytes: this.queue.largestMessageBytes };
  }

  /** Closes the connection with a WebSocket close code and reason (e.g. 1008 when its session was revoked). */
  close(code: number, reason: string): void {
    this.socket.close(code, reason);
    this.dispose();
  }

  /** Marks the connection initialized (called by the `initialize` handler). */
  markInitialized(clientName: string, capabilities: ResolvedClientCapabilities = DEFAULT_CLIENT_CAPABILITIES): void {
    this.initialized = true;
    this.clientName = clientName;
    this.capabilities = capabilities;
  }

  /** Server-to-client requests sent to this client and not answered or resolved yet. */
  get pendingServerRequests(): number {
    return this.serverRequests.size;
  }

  /**
   * Registers a subscription before its replay starts, ending any earlier one to the same
   * conversation; the returned signal aborts on unsubscribe, on a newer subscribe and when the
   * connection ends, whichever comes first.
   */
  beginSubscription(conversationId: string): AbortSignal {
    return this.subscriptions.begin(conversationId);
  }

  /** Whether the connection is open and subscribed to a conversation (`conversation/subscribe`). */
  isSubscribed(conversationId: string): boolean {
    return this.subscriptions.has(conversationId);
  }

  /** Ends a subscription if `signal` is still the current one (e.g. its conversation was not found). */
  endSubscription(conversationId: string, signal?: AbortSignal): void {
    this.subscriptions.end(conversationId, signal);
  }

  /** Sends a server-to-client request whose answer the caller waits for (see `ServerRequests.ask`). */
  askClient: ServerRequests['ask'] = (method, params) => this.serverRequests.ask(method, params);

  /** Runs `task` once when the connection ends (at once when it has ended); returns the function that cancels it. */
  onDispose(task: () => void): () => void {
    if (this.closed) {
      task();
      return () => undefined;
    }
    this.disposers.add(task);
    return () => this.disposers.delete(task);
  }

  /** Logs a replay that failed (its subscription has ended; the client may subscribe again). */
  replayFailed(conversationId: string, error: unknown): void {
    this.logger.error({ connection: this.number, conversationId, error: describeError(error) }, 'replay of a subscription failed');
  }

  /** Bytes of live events a subscription may hold back while its replay waits for this client. */
  get holdLimitBytes(): number {
    return this.connectionLimits.limitBytes;
  }

  /** Closes the client as lagging: a subscription's replay held back more than {@link holdLimitBytes}. */
  closeLagging(): void {
    this.queue.closeLagging();
  }

  /** Resolves when the client can take more events (paces replays); undefined when it can now. */
  ready(): Promise<void> | undefined {
    return this.queue.ready();
  }

  /**
   * Sends an event to the client. A requested approval or question also goes out as the
   * server-to-client request `approval/request` or `input/request` when the client declared
   * it answers them (`capabilities.approvals`, `capabilities.userInput`); the client's answer
   * resolves it (first wins). `item/delta` is left out for a client that declared `deltas: false`.
   */
  notify(event: AnyNotification): void {
    // Nothing reaches a connection that has not proven it holds the token (e.g. `config/updated`).
    if (!this.gate.authenticated) return;
    if (event.method === 'item/delta' && !this.capabilities.deltas) return;
    // The one access check of every notification: what the caller may not see never leaves.
    if (this.platform && !this.platform.access.admitsNotification(this.caller, event)) return;
    // A conversation in the params goes out redacted (see `redactOutgoing`), secret values as `***`.
    const platform = this.platform;
    const outgoing = redactOutgoingNotification(platform ? notificationWithProject(event, (id) => platform.projects.projectOf(id)) : event);
    const redactor = this.platform?.redactor;
    // With no secret values to hide and no streamed text held back (the usual case), the event
    // goes out as it is, shared by every connection: nothing is allocated for this client.
    if (!redactor || (!redactor.active && !this.streamRedaction?.itemCount)) this.queue.sendNotification(outgoing);
    else {
      // Streamed text is redacted as a stream per item, across deltas (see `StreamRedaction`).
      this.streamRedaction ??= new StreamRedaction(redactor);
      for (const each of this.streamRedaction.redact(outgoing)) this.queue.sendNotification(redactor.redactShared(each));
    }
    if (event.method === 'approval/requested' && this.capabilities.approvals) this.serverRequests.askForApproval(event.params.conversationId, event.params.approval);
    if (event.method === 'input/requested' && this.capabilities.userInput) this.serverRequests.askForInput(event.params.conversationId, event.params.request);
    if (event.method === 'approval/resolved') this.serverRequests.drop(event.params.conversationId, event.params.approvalId);
    if (event.method === 'input/resolved') this.serverRequests.drop(event.params.conversationId, event.params.requestId);
  }

  /**
   * Keeps something this connection holds for a conversation (a terminal) only while the
   * caller may reach that conversation: `close` runs when {@link recheckAccess} finds the
   * access gone. Returns the function that forgets it.
   */
  holdForConversation(conversationId: string, close: () => void): () => void {
    return this.subscriptions.hold(conversationId, close);
  }

  /**
   * Ends at once every subscription and hold (terminals, pending questions) of a conversation
   * the caller may no longer reach (a member removed, a project deleted). Notifications are
   * filtered anyway; this releases what would otherwise stay open for nothing.
   */
  recheckAccess(): void {
    const access = this.platform?.access;
    if (!access || this.closed) return;
    this.subscriptions.recheck((conversationId) => access.mayReadConversation(this.caller, conversationId));
  }

  private redactSecrets<T>(payload: T): T {
    return this.platform ? this.platform.redactor.redact(payload) : payload;
  }

  /** Sends a response or server-to-client request, secret values replaced by `***`. */
  private send(message: Record<string, unknown>): void {
    this.queue.send(this.redactSecrets(message));
  }

  private async handle(text: string): Promise<void> {
    this.inFlight++;
    if (this.inFlight >= this.maxRequestsInFlight && !this.paused) {
      // Stop reading: the client waits in TCP instead of in this process's memory.
      this.paused = true;
      this.socket.pause();
    }
    try {
      await this.handleMessage(text);
    } catch (error) {
      // Nothing a client sends may end the process: anything unforeseen is logged here.
      this.logger.error({ connection: this.number, error: describeError(error) }, 'failed to handle a client message');
    } finally {
      this.inFlight--;
      if (this.paused && this.inFlight < this.maxRequestsInFlight && !this.closed) {
        this.paused = false;
        this.socket.resume();
      }
    }
  }

  private async handleMessage(text: string): Promise<void> {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      this.send({ jsonrpc: '2.0', id: null, error: { code: ErrorCodes.parseError, message: `invalid JSON: ${jsonSyntaxProblem(error)}` } });
      return;
    }
    // A response (no method; a result or an error): to one of our own requests (e.g.
    // approval/request), whose ids are strings. JSON-RPC 2.0 §5: a response is never answered,
    // so one to no request of ours is only logged.
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && !('method' in raw) && 'id' in raw && ('result' in raw || 'error' in raw || typeof (raw as { id: unknown }).id === 'string')) {
      const id = (raw as { id: unknown }).id;
      if (typeof id === 'string') this.serverRequests.answer(id, raw as { result?: unknown; error?: unknown });
      else this.logger.warn({ connection: this.number, client: this.clientName, id }, 'a response to no request of the server was ignored');
      return;
    }
    const message = IncomingMessageSchema.safeParse(raw);
    if (!message.success) {
      const id = typeof raw === 'object' && raw !== null && 'id' in raw ? (raw as { id: unknown }).id : null;
      const named = typeof raw === 'object' && raw !== null && 'method' in raw && typeof (raw as { method: unknown }).method === 'string' ? `${(raw as { method: string }).method.slice(0, 200)}: ` : '';
      const detail = message.error.issues.map((issue) => `${formatKeyPath(issue.path) || '(message)'}: ${issue.message}`).join('; ');
      this.send({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: ErrorCodes.invalidRequest, message: `${named}not a JSON-RPC 2.0 request: ${detail}` } });
      return;
    }
    const { id, method, params } = message.data;
    const afterResponse: (() => void)[] = [];
    let result: unknown;
    let reveal = false;
    try {
      result = await this.dispatch(method, params, { afterResponse: (task) => afterResponse.push(task), revealSecrets: () => (reveal = true) });
    } catch (error) {
      if (id === undefined) return;
      const rpcError = requestError(method, error, (reference) => this.logger.error({ connection: this.number, method, reference, error: describeError(error) }, 'request failed inside the server'));
      this.send({ jsonrpc: '2.0', id, error: { code: rpcError.code, message: rpcError.message, ...(rpcError.data !== undefined ? { data: rpcError.data } : {}) } });
      return;
    }
    // A conversation in a result goes out redacted, as in notifications.
    if (id !== undefined) {
      const platform = this.platform;
      const shown = platform ? withConversationProject(result, (conversationId) => platform.projects.projectOf(conversationId)) : result;
      const response = { jsonrpc: '2.0', id, result: redactOutgoing(shown) };
      if (reveal) this.queue.send(response);
      else this.send(response);
    }
    for (const task of afterResponse) task();
  }

  private async dispatch(method: string, params: unknown, request: RequestContext): Promise<unknown> {
    if (!isMethodName(method)) throw new RpcError(ErrorCodes.methodNotFound, `unknown method "${method.slice(0, 100)}"`);
    if (!this.initialized && method !== 'initialize') {
      throw new RpcError(ErrorCodes.notInitialized, `${method}: send "initialize" first`);
    }
    // A read-only API token reaches only methods that change nothing (SPEC §9, scoped tokens).
    this.platform?.access.checkReadOnly(this.caller, method);
    const schema = methods[method].params as z.ZodType<MethodParams<typeof method>>;
    // initialize stays lenient: a newer client may declare capabilities this server does not know.
    const parsed = method === 'initialize' ? parseParams(method, schema, params) : parseParamsStrictly(method, schema, params);
    // The one access check of every request, before its handler runs (docs/platform.md): roles,
    // project membership, project-scoped and read-only API tokens.
    // Synchronous but for a task named by id, so requests keep their order (see `checkRequest`).
    const checking = this.platform?.access.checkRequest(this.caller, method, parsed);
    if (checking) await checking;
    if (!this.routing) return this.invoke(method, parsed, request);
    const routed = this.routing.route(this, method, parsed);
    const outcome = routed instanceof Promise ? await routed : routed;
    return outcome.forwarded ? outcome.result : this.invoke(method, parsed, request);
  }

  private invoke<M extends MethodName>(method: M, params: MethodParams<M>, request: RequestContext): Promise<MethodResult<M>> {
    return (this.handlers[method] as (params: MethodParams<M>, request: RequestContext) => Promise<MethodResult<M>>)(params, request);
  }

  private dispose(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopHeartbeat();
    this.gate.stop();
    this.queue.close();
    this.subscriptions.close();
    this.serverRequests.clear();
    for (const task of this.disposers) task();
    this.disposers.clear();
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** The message of anything thrown. */
function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One client connection speaking the runtime protocol (SPEC §5): JSON-RPC 2.0 messages over a
 * WebSocket. Validates every request against the protocol schemas, dispatches it to the
 * runtime, and forwards the events of the conversations the client subscribed to.
 */
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { z } from 'zod';
import {
  ErrorCodes,
  serverRequests,
  type ApprovalRequest,
  IncomingMessageSchema,
  isMethodName,
  methods,
  parseParams,
  RpcError,
  type AnyNotification,
  type MethodName,
  type MethodParams,
  type MethodResult,
} from '../protocol/index.js';
import { NotFoundError, type Runtime } from '../runtime/runtime.js';
import { UnknownModelError } from '../models/model-registry.js';
import type { ConfigService } from './config-service.js';
import { createMethodHandlers, type MethodHandlers, type RequestContext } from './method-handlers.js';

/** Server identity sent in `initialize`. */
export interface ServerIdentity {
  name: string;
  version: string;
}

/** Logs what a connection cannot report to its client. */
export interface ConnectionLogger {
  warn(details: object, message: string): void;
}

/** State of one connected client, used by the method handlers. */
export class RpcConnection {
  private initialized = false;
  /** The client's name from `initialize`. */
  clientName = 'unknown';
  private nextRequestId = 1;
  private readonly outgoing = new Map<string, (response: { result?: unknown; error?: unknown }) => void>();
  private readonly subscriptions = new Map<string, () => void>();
  private readonly handlers: MethodHandlers;

  /**
   * @param socket the accepted WebSocket
   * @param transport the TCP socket under it
   * @param runtime the runtime requests go to
   * @param config the configuration in force (config/* methods)
   * @param identity server name and version
   * @param logger where send failures are logged
   */
  constructor(
    private readonly socket: WebSocket,
    private readonly transport: Duplex,
    readonly runtime: Runtime,
    readonly config: ConfigService,
    readonly identity: ServerIdentity,
    private readonly logger: ConnectionLogger,
  ) {
    this.handlers = createMethodHandlers(this);
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        this.send({ jsonrpc: '2.0', id: null, error: { code: ErrorCodes.invalidRequest, message: 'binary frames are not supported; send JSON text' } });
        return;
      }
      this.handle(data.toString()).catch((error: unknown) => this.logger.warn({ error: errorMessage(error) }, 'a client message could not be handled'));
    });
    socket.on('close', () => this.dispose());
  }

  /** Marks the connection initialized (called by the `initialize` handler). */
  markInitialized(clientName: string): void {
    this.initialized = true;
    this.clientName = clientName;
  }

  /** Whether the connection already follows a conversation. */
  isSubscribed(conversationId: string): boolean {
    return this.subscriptions.has(conversationId);
  }

  /** Remembers a subscription's detach function (replacing an older one). */
  addSubscription(conversationId: string, detach: () => void): void {
    this.subscriptions.get(conversationId)?.();
    this.subscriptions.set(conversationId, detach);
  }

  /** Logs a subscription whose replay failed (the client stays unsubscribed). */
  subscriptionFailed(conversationId: string, error: unknown): void {
    this.logger.warn({ conversationId, error: errorMessage(error) }, 'conversation/subscribe: the replay failed; the client is not subscribed');
  }

  /** Detaches from a conversation's events. */
  removeSubscription(conversationId: string): void {
    this.subscriptions.get(conversationId)?.();
    this.subscriptions.delete(conversationId);
  }

  /**
   * Sends an event to the client. An approval that is requested also goes out as the
   * server-to-client request `approval/request`; the client's answer resolves it (first wins).
   */
  notify(event: AnyNotification): void {
    this.send({ jsonrpc: '2.0', method: event.method, params: event.params });
    if (event.method === 'approval/requested') this.askForApproval(event.params.conversationId, event.params.approval);
  }

  private askForApproval(conversationId: string, approval: ApprovalRequest): void {
    const id = `server-${this.nextRequestId++}`;
    this.outgoing.set(id, (response) => {
      const answer = serverRequests['approval/request'].result.safeParse(response.result);
      if (!answer.success) {
        if (response.error === undefined) this.logger.warn({ approvalId: approval.approvalId, issues: answer.error.issues }, 'invalid answer to approval/request ignored');
        return;
      }
      this.runtime
        .getConversation(conversationId)
        .then((conversation) =>
          conversation.approvals.respond(approval.approvalId, { decision: answer.data.decision, decidedBy: `client:${this.clientName}`, ...(answer.data.message ? { message: answer.data.message } : {}), ...(answer.data.prefix ? { prefix: answer.data.prefix } : {}) }),
        )
        .catch((error: unknown) => this.logger.warn({ approvalId: approval.approvalId, error: errorMessage(error) }, 'an answer to approval/request could not be applied'));
    });
    this.send({ jsonrpc: '2.0', id, method: 'approval/request', params: approval });
  }

  private send(message: object): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    // A turn emits several events per tick (deltas, item ends): corking until the next tick
    // turns their frames into one write system call instead of one each.
    if (this.transport.writableCorked === 0) {
      this.transport.cork();
      process.nextTick(() => this.transport.uncork());
    }
    this.socket.send(JSON.stringify(message), (error) => {
      if (error) this.logger.warn({ error: error.message }, 'could not send to client');
    });
  }

  private async handle(text: string): Promise<void> {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      this.send({ jsonrpc: '2.0', id: null, error: { code: ErrorCodes.parseError, message: `invalid JSON: ${(error as Error).message}` } });
      return;
    }
    // A response to one of our own requests (e.g. approval/request).
    if (typeof raw === 'object' && raw !== null && !('method' in raw) && 'id' in raw && typeof (raw as { id: unknown }).id === 'string') {
      const id = (raw as { id: string }).id;
      const handler = this.outgoing.get(id);
      if (handler) {
        this.outgoing.delete(id);
        handler(raw as { result?: unknown; error?: unknown });
      }
      return;
    }
    const message = IncomingMessageSchema.safeParse(raw);
    if (!message.success) {
      const id = typeof raw === 'object' && raw !== null && 'id' in raw ? (raw as { id: unknown }).id : null;
      const detail = message.error.issues.map((issue) => `${issue.path.join('.') || '(message)'}: ${issue.message}`).join('; ');
      this.send({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: ErrorCodes.invalidRequest, message: `not a JSON-RPC 2.0 request: ${detail}` } });
      return;
    }
    const { id, method, params } = message.data;
    const afterResponse: (() => void)[] = [];
    try {
      const result = await this.dispatch(method, params, { afterResponse: (task) => afterResponse.push(task) });
      if (id !== undefined) this.send({ jsonrpc: '2.0', id, result });
      for (const task of afterResponse) task();
    } catch (error) {
      if (id === undefined) return;
      const rpcError = toRpcError(method, error);
      this.send({ jsonrpc: '2.0', id, error: { code: rpcError.code, message: rpcError.message, ...(rpcError.data !== undefined ? { data: rpcError.data } : {}) } });
    }
  }

  private async dispatch(method: string, params: unknown, request: RequestContext): Promise<unknown> {
    if (!isMethodName(method)) throw new RpcError(ErrorCodes.methodNotFound, `unknown method "${method}"`);
    if (!this.initialized && method !== 'initialize') {
      throw new RpcError(ErrorCodes.notInitialized, `${method}: send "initialize" first`);
    }
    const parsed = parseParams(method, methods[method].params as z.ZodType<MethodParams<typeof method>>, params);
    return this.invoke(method, parsed, request);
  }

  private invoke<M extends MethodName>(method: M, params: MethodParams<M>, request: RequestContext): Promise<MethodResult<M>> {
    return (this.handlers[method] as (params: MethodParams<M>, request: RequestContext) => Promise<MethodResult<M>>)(params, request);
  }

  private dispose(): void {
    for (const detach of this.subscriptions.values()) detach();
    this.subscriptions.clear();
  }
}

function toRpcError(method: string, error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof NotFoundError) return new RpcError(ErrorCodes.notFound, `${method}: ${error.message}`);
  if (error instanceof UnknownModelError) return new RpcError(ErrorCodes.invalidParams, `${method}: ${error.message}`);
  return new RpcError(ErrorCodes.internalError, `${method}: ${(error as Error)?.message ?? String(error)}`);
}

/** The message of anything thrown. */
function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One Codex app-server client connection translated onto one runtime protocol connection
 * (docs/protocol.md, "Mapping to Codex app-server"). The handshake is Codex's: `initialize`
 * once (then the client's `initialized` notification); a request before it is refused with
 * `-32600 "Not initialized"`, a second one with `-32600 "Already initialized"`. A method the
 * adapter does not serve gets `-32601` naming it. Runtime approval requests become Codex
 * server requests, followed by `serverRequest/resolved` once decided.
 *
 * The connection holds no state of its own beyond what it translates: the runtime keeps the
 * conversations. An answer goes out before the events its request caused (as Codex sends the
 * `turn/start` answer before `turn/started`): events wait while a request is being handled.
 */
import os from 'node:os';
import { z } from 'zod';
import { RuntimeClientError, type RuntimeClient, type ServerRequestResult } from '../../client/runtime-client.js';
import { toCodexId } from '../../protocol/codex-ids.js';
import type { ApprovalRequest, MethodResult } from '../../protocol/index.js';
import type { ApprovalDecision } from '../../protocol/approval-options.js';
import { VERSION } from '../../package-info.js';
import { codexApprovalRequestOf, decisionOf } from './approvals.js';
import { clientSupportMethods } from './client-support-methods.js';
import { EventTranslator } from './events.js';
import type { CodexMethodContext, CodexMethodHandler } from './method-context.js';
import { threadMethods } from './thread-methods.js';
import type { CodexPeer } from './transports.js';
import { turnMethods } from './turn-methods.js';
import { CodexErrorCodes, CodexRpcError, parseCodexMessage, parseParams, type CodexMessage, type CodexRequestId } from './wire.js';

/** The codex-cli version whose app-server protocol (v2 schema) the adapter speaks. */
export const CODEX_PROTOCOL_VERSION = '0.171.0';

/** Every Codex request method the adapter serves (besides `initialize`). */
export const CODEX_METHODS: Record<string, CodexMethodHandler> = { ...threadMethods, ...turnMethods, ...clientSupportMethods };

/** What a connection needs from its surroundings. */
export interface CodexConnectionOptions {
  /** Opens the runtime connection for a Codex client that said its name in `initialize`. */
  connectRuntime(clientName: string): Promise<RuntimeClient>;
  /** Working directory for threads started without `cwd`. */
  cwd: string;
  /** Reported as Codex's `codexHome` (the OpenVaala configuration directory). */
  home: string;
  /** Where the connection says what went wrong outside any request (stderr). */
  log(message: string): void;
  /** Also log each request's method and any error answered (`OPENVAALA_APP_SERVER_TRACE=1`), to see what a client asks for. */
  trace?: boolean;
}

const initializeParams = z.object({ clientInfo: z.object({ name: z.string().min(1), version: z.string().optional(), title: z.string().nullable().optional() }) });

interface PendingApproval {
  requestId: number;
  conversationId: string;
  resolve(answer: ServerRequestResult<'approval/request'>): void;
}

/** One Codex client. */
export class CodexConnection {
  private runtime: RuntimeClient | undefined;
  private initializing = false;
  /** The first `initialize` under way or done. */
  private initialization: Promise<void> | undefined;
  private holds = 0;
  private readonly queue: object[] = [];
  private nextServerRequestId = 0;
  /** Open approval requests by the runtime's approval id. */
  private readonly approvals = new Map<string, PendingApproval>();
  private readonly translator = new EventTranslator((method, params) => this.send({ method, params }));
  private closed = false;
  /** Requests being answered; a client that leaves still gets the answers to what it sent. */
  private readonly inFlight = new Set<Promise<void>>();
  private resolveFinished!: () => void;
  /** Resolves once the client has left and every request it sent was answered. */
  readonly finished = new Promise<void>((resolve) => (this.resolveFinished = resolve));

  constructor(
    private readonly peer: CodexPeer,
    private readonly options: CodexConnectionOptions,
  ) {
    peer.onMessage((text) => {
      // receive answers every failure itself; a rejection here would be a bug to report, not to lose.
      const handling = this.receive(text).catch((error: unknown) => options.log(`internal error: ${(error as Error).stack ?? String(error)}`));
      this.inFlight.add(handling);
      handling.then(() => this.inFlight.delete(handling), () => this.inFlight.delete(handling));
    });
    peer.onClose(() => {
      Promise.allSettled([...this.inFlight]).then(
        () => this.dispose(),
        () => this.dispose(),
      );
    });
  }

  /** Sends a message now, or after the answers being prepared (see the module comment). */
  private send(message: object): void {
    if (this.holds > 0) this.queue.push(message);
    else this.peer.send(message);
  }

  private hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      if (this.holds === 0) for (const message of this.queue.splice(0)) this.peer.send(message);
    };
  }

  private async receive(text: string): Promise<void> {
    let message: CodexMessage;
    try {
      message = parseCodexMessage(text);
    } catch (error) {
      // JSON-RPC 2.0 §5: an error for a message whose id cannot be read has a null id.
      const failure = error as CodexRpcError;
      this.peer.send({ id: null, error: { code: failure.code, message: failure.message } });
      return;
    }
    if (message.method !== undefined && message.id !== undefined) return this.request(message.id, message.method, message.params);
    if (message.method !== undefined) return; // `initialized` and any other client notification need nothing.
    if (message.id !== undefined) return this.answer(message);
    this.peer.send({ id: null, error: { code: CodexErrorCodes.invalidRequest, message: 'invalid request: a message needs a method (request, notification) or an id (response)' } });
  }

  private async request(id: CodexRequestId, method: string, params: unknown): Promise<void> {
    const release = this.hold();
    try {
      let result: object;
      if (method === 'initialize') {
        const initializing = this.initialize(params);
        if (!this.initialization) this.initialization = initializing.then(() => undefined);
        result = await initializing;
      } else {
        result = await this.dispatch(method, params);
      }
      this.peer.send({ id, result });
      if (this.options.trace) this.options.log(`${method} ${JSON.stringify(params ?? null).slice(0, 400)}: answered`);
    } catch (error) {
      const answer = errorOf(method, error);
      if (this.options.trace) this.options.log(`${method}: error ${answer.code} ${answer.message}`);
      this.peer.send({ id, error: answer });
    } finally {
      release();
    }
  }

  private async dispatch(method: string, params: unknown): Promise<object> {
    // A request sent right behind `initialize` (a client piping its messages) waits for it.
    if (!this.runtime && this.initialization) await this.initialization.catch(() => undefined);
    if (!this.runtime) throw new CodexRpcError(CodexErrorCodes.invalidRequest, 'Not initialized');
    const handler = CODEX_METHODS[method];
    if (!handler) throw new CodexRpcError(CodexErrorCodes.methodNotFound, `method not found: ${method} is not supported by openvaala app-server`);
    return handler(params, this.context(this.runtime));
  }

  private async initialize(raw: unknown): Promise<object> {
    if (this.runtime || this.initializing) throw new CodexRpcError(CodexErrorCodes.invalidRequest, 'Already initialized');
    const params = parseParams('initialize', initializeParams, raw);
    this.initializing = true;
    let runtime: RuntimeClient;
    try {
      runtime = await this.options.connectRuntime(params.clientInfo.name);
    } catch (error) {
      this.initializing = false;
      throw new CodexRpcError(CodexErrorCodes.internalError, `initialize: cannot reach the OpenVaala runtime server: ${(error as Error).message}`);
    }
    if (this.closed) {
      await runtime.close();
      throw new CodexRpcError(CodexErrorCodes.internalError, 'initialize: the client left');
    }
    this.runtime = runtime;
    runtime.onNotification((event) => {
      if (event.method === 'approval/resolved') this.approvalResolved(event.params.conversationId, event.params.approvalId, event.params.decision);
      else this.translator.translate(event);
    });
    runtime.handleServerRequest('approval/request', (request) => this.askApproval(request));
    runtime.onClose((error) => {
      if (this.closed) return;
      this.options.log(`the runtime server closed the connection (${error.message})`);
      this.peer.close();
    });
    const platformOs = process.platform === 'darwin' ? 'macos' : process.platform;
    return {
      // Codex clients read the server's version from the first word and compare it with their
      // own: the first word names the protocol level spoken (codex-cli 0.171.0), OpenVaala's own version follows.
      userAgent: `codex_app_server_protocol/${CODEX_PROTOCOL_VERSION} (openvaala ${VERSION}; ${os.type()} ${os.release()}; ${os.arch()}) (${params.clientInfo.name}; ${params.clientInfo.version ?? 'unknown'})`,
      codexHome: this.options.home,
      platformFamily: process.platform === 'win32' ? 'windows' : 'unix',
      platformOs,
    };
  }

  private context(runtime: RuntimeClient): CodexMethodContext {
    return {
      runtime,
      cwd: this.options.cwd,
      notify: (method, params) => this.send({ method, params }),
      followed: () => this.translator.followed(),
      follow: async (conversationId) => {
        if (this.translator.follows(conversationId)) return runtime.request('conversation/get', { conversationId });
        const snapshot = await runtime.request('conversation/get', { conversationId });
        // Followed before subscribing, so no event of the subscription finds the thread unknown.
        this.translator.follow(conversationId, snapshot.conversation.rootSessionId, snapshot.conversation.workLocation[0]?.cwd ?? '/', snapshot.conversation.title);
        const subscribed: MethodResult<'conversation/subscribe'> = await runtime.request('conversation/subscribe', { conversationId, afterSeq: 'head' });
        return subscribed;
      },
    };
  }

  /** Forwards a runtime approval request to the Codex client and answers with its decision. */
  private askApproval(request: ApprovalRequest): Promise<ServerRequestResult<'approval/request'>> {
    const { method, params } = codexApprovalRequestOf(request);
    const requestId = this.nextServerRequestId++;
    return new Promise((resolve) => {
      this.approvals.set(request.approvalId, { requestId, conversationId: request.conversationId, resolve });
      this.translator.threadStatus(request.conversationId, ['waitingOnApproval']);
      this.send({ id: requestId, method, params });
    });
  }

  /** A Codex client's answer to one of the adapter's requests. */
  private answer(message: CodexMessage): void {
    const entry = [...this.approvals.values()].find((pending) => pending.requestId === message.id);
    if (!entry) return; // An answer to a request already resolved elsewhere, or to none: nothing waits for it.
    if (message.error) {
      entry.resolve({ decision: 'deny', automatic: true, message: `the Codex client answered with an error: ${message.error.message}` });
      return;
    }
    try {
      entry.resolve(decisionOf(message.result));
    } catch (error) {
      // Nothing can answer an answer: the call is denied and the reason goes to the log.
      this.options.log((error as Error).message);
      entry.resolve({ decision: 'deny', automatic: true, message: 'the Codex client answered with no valid decision' });
    }
  }

  /** The runtime says an approval was decided (by this client or another): the Codex request is resolved. */
  private approvalResolved(conversationId: string, approvalId: string, decision: ApprovalDecision): void {
    const pending = this.approvals.get(approvalId);
    if (!pending) return;
    this.approvals.delete(approvalId);
    // Decided elsewhere: the runtime already has its answer; ours is refused there and harmless.
    pending.resolve({ decision });
    this.send({ method: 'serverRequest/resolved', params: { threadId: toCodexId(conversationId), requestId: pending.requestId } });
    this.translator.threadStatus(conversationId, []);
  }

  private dispose(): void {
    if (this.closed) return;
    this.closed = true;
    // The turns go on in the runtime; only this client's view of them ends.
    const closing = this.runtime?.close().catch(() => undefined) ?? Promise.resolve();
    closing.then(
      () => this.resolveFinished(),
      () => this.resolveFinished(),
    );
  }
}

/** A failure as a Codex JSON-RPC error: the adapter's own, the runtime's (code and message kept, named by the Codex method), or unexpected. */
function errorOf(method: string, error: unknown): { code: number; message: string; data?: unknown } {
  if (error instanceof CodexRpcError) return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) };
  if (error instanceof RuntimeClientError) return { code: error.code, message: `${method}: ${error.message}`, ...(error.data !== undefined ? { data: error.data } : {}) };
  return { code: CodexErrorCodes.internalError, message: `${method}: ${(error as Error).message}` };
}

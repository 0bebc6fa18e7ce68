/**
 * Server-to-client requests of one connection (`approval/request`, `input/request`): sending
 * them, keeping those waiting for the client's answer, and applying the answer to the
 * conversation. Kept apart from the connection, which only routes answers here and says when
 * what a request asks about is resolved.
 */
import type { z } from 'zod';
import { serverRequests, type ApprovalRequest, type UserInputRequest } from '../protocol/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { formatKeyPath } from '../key-path.js';

/** What the server requests need from their connection. */
export interface ServerRequestHost {
  /** Where answers are applied. */
  readonly runtime: Pick<Runtime, 'getConversation'>;
  /** The client's name now (from `initialize`), recorded as who decided. */
  clientName(): string;
  /** Sends a JSON-RPC message to the client. */
  send(message: Record<string, unknown>): void;
  /** Logs an answer that was ignored or could not be applied. */
  warn(details: object, message: string): void;
}

/** A client's answer to a server request: a JSON-RPC response. */
export interface ServerRequestResponse {
  result?: unknown;
  error?: unknown;
}

/** The server-to-client requests sent on one connection and not answered or resolved yet. */
export class ServerRequests {
  private nextRequestId = 1;
  /**
   * Server-to-client requests waiting for this client's answer, by JSON-RPC id. Each is
   * removed when answered, when what it asks about is resolved (by another client, or the turn
   * was interrupted), when the conversation is unsubscribed, and when the connection closes.
   */
  private readonly outgoing = new Map<string, { conversationId: string; subject: string; handle: (response: ServerRequestResponse) => void; abandon?: (reason: Error) => void }>();

  /** @param host the connection the requests go out on */
  constructor(private readonly host: ServerRequestHost) {}

  /** Requests sent and not answered or resolved yet. */
  get size(): number {
    return this.outgoing.size;
  }

  /** Sends `approval/request`; a valid answer decides the approval (first wins). */
  askForApproval(conversationId: string, approval: ApprovalRequest): void {
    const id = `server-${this.nextRequestId++}`;
    this.outgoing.set(id, {
      conversationId,
      subject: approval.approvalId,
      handle: (response) => {
        const answer = serverRequests['approval/request'].result.safeParse(response.result);
        if (!answer.success) {
          if (response.error === undefined) this.host.warn({ approvalId: approval.approvalId, issues: answer.error.issues }, 'invalid answer to approval/request ignored');
          return;
        }
        this.host.runtime
          .getConversation(conversationId)
          .then((conversation) =>
            conversation.approvals.respond(approval.approvalId, { decision: answer.data.decision, decidedBy: `client:${this.host.clientName()}`, ...(answer.data.message ? { message: answer.data.message } : {}), ...(answer.data.prefix ? { prefix: answer.data.prefix } : {}), ...(answer.data.automatic ? { automatic: true } : {}) }),
          )
          .catch((error: unknown) => this.host.warn({ approvalId: approval.approvalId, error: errorMessage(error) }, 'an answer to approval/request could not be applied'));
      },
    });
    this.host.send({ jsonrpc: '2.0', id, method: 'approval/request', params: approval });
  }

  /** Sends `input/request`; a valid answer (or decline) resolves the question (first wins). */
  askForInput(conversationId: string, request: UserInputRequest): void {
    const id = `server-${this.nextRequestId++}`;
    this.outgoing.set(id, {
      conversationId,
      subject: request.requestId,
      handle: (response) => {
        const answer = serverRequests['input/request'].result.safeParse(response.result);
        if (!answer.success) {
          if (response.error === undefined) this.host.warn({ requestId: request.requestId, issues: answer.error.issues }, 'invalid answer to input/request ignored');
          return;
        }
        const decidedBy = `client:${this.host.clientName()}`;
        this.host.runtime
          .getConversation(conversationId)
          .then((conversation) => ('answer' in answer.data ? conversation.userInputs.respond(request.requestId, answer.data.answer, decidedBy) : conversation.userInputs.decline(request.requestId, answer.data.declined, decidedBy)))
          .catch((error: unknown) => this.host.warn({ requestId: request.requestId, error: errorMessage(error) }, 'an answer to input/request could not be applied'));
      },
    });
    this.host.send({ jsonrpc: '2.0', id, method: 'input/request', params: request });
  }

  /**
   * Sends a request whose answer the caller waits for (`client/fs/readTextFile`,
   * `client/fs/writeTextFile`, `client/terminal/run`, `client/terminal/kill`), checked against the method's result schema.
   * @returns the client's result
   * @throws Error with the client's error message, for a result of the wrong shape, or when the
   *   connection ends or the conversation's requests are dropped before the answer
   */
  ask<M extends 'client/fs/readTextFile' | 'client/fs/writeTextFile' | 'client/terminal/run' | 'client/terminal/kill'>(method: M, params: z.infer<(typeof serverRequests)[M]['params']>): Promise<z.infer<(typeof serverRequests)[M]['result']>> {
    const id = `server-${this.nextRequestId++}`;
    return new Promise((resolve, reject) => {
      this.outgoing.set(id, {
        conversationId: params.conversationId,
        subject: id,
        handle: (response) => {
          if (response.error !== undefined) {
            const message = typeof response.error === 'object' && response.error !== null && 'message' in response.error ? String((response.error as { message: unknown }).message) : JSON.stringify(response.error);
            reject(new Error(`the client could not do ${method}: ${message}`));
            return;
          }
          const answer = (serverRequests[method].result as z.ZodType).safeParse(response.result);
          if (answer.success) resolve(answer.data as z.infer<(typeof serverRequests)[M]['result']>);
          else reject(new Error(`the client answered ${method} with a result of the wrong shape: ${answer.error.issues.map((issue) => `${formatKeyPath(issue.path, 'result')}: ${issue.message}`).join('; ')}`));
        },
        abandon: reject,
      });
      this.host.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Applies the client's response to request `id`, if it is still waiting; a response to anything else is ignored. */
  answer(id: string, response: ServerRequestResponse): void {
    const entry = this.outgoing.get(id);
    if (!entry) return;
    this.outgoing.delete(id);
    entry.handle(response);
  }

  /** Forgets the requests about `subject` (an approval or question id) or, without one, about a whole conversation. */
  drop(conversationId: string, subject?: string): void {
    for (const [id, entry] of this.outgoing) {
      if (entry.conversationId === conversationId && (subject === undefined || entry.subject === subject)) {
        this.outgoing.delete(id);
        entry.abandon?.(new Error('the client left the conversation before answering'));
      }
    }
  }

  /** Forgets every request (the connection has ended). */
  clear(): void {
    for (const entry of this.outgoing.values()) entry.abandon?.(new Error('the client connection closed before answering'));
    this.outgoing.clear();
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

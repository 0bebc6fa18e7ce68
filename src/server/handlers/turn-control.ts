/**
 * Handlers of the turn-control methods (`session/dequeue`) and the idempotency of
 * `conversation/create` (docs/protocol.md, "Idempotency").
 */
import { ErrorCodes, RpcError, type MethodName, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { UnknownInputError } from '../../runtime/input-queue.js';
import type { LiveConversation } from '../../runtime/conversation.js';
import type { LiveSession } from '../../runtime/session.js';
import type { RequestContext } from '../method-handlers.js';

/** What the handlers use of a connection: opening conversations. */
export interface TurnControlConnection {
  runtime: { getConversation(conversationId: string): Promise<LiveConversation> };
}

type Handlers<M extends MethodName> = { [K in M]: (params: MethodParams<K>, request: RequestContext) => Promise<MethodResult<K>> };

/** The session a request names (default: the root session). @throws RpcError notFound naming the method and the id */
function sessionOf(conversation: LiveConversation, sessionId: string | undefined, method: string): LiveSession {
  const id = sessionId ?? conversation.state.rootSessionId;
  const session = conversation.sessions.get(id);
  if (!session) throw new RpcError(ErrorCodes.notFound, `${method}: params.sessionId: session "${id}" is not part of conversation ${conversation.id}`);
  return session;
}

/** Builds the turn-control handlers bound to one connection. */
export function turnControlHandlers(connection: TurnControlConnection): Handlers<'session/dequeue'> {
  return {
    async 'session/dequeue'(params) {
      const session = sessionOf(await connection.runtime.getConversation(params.conversationId), params.sessionId, 'session/dequeue');
      try {
        await session.dequeue(params.inputId);
      } catch (error) {
        if (error instanceof UnknownInputError) throw new RpcError(ErrorCodes.notFound, `session/dequeue: params.inputId: ${error.message}`);
        throw error;
      }
      return { sessionId: session.id, inputId: params.inputId, dequeued: true };
    },
  };
}

/**
 * How many `conversation/create` client message ids the server remembers (the most recent;
 * until it restarts): a repeat within them answers the first result.
 */
export const REMEMBERED_CREATES = 1000;

const creates = new WeakMap<object, Map<string, Promise<unknown>>>();

/**
 * Runs `create` once per client message id for one runtime: a repeat (from any connection)
 * gets the first result, or waits for it. A failed attempt is forgotten, so it may be retried.
 * @param owner the runtime (the memory is per runtime)
 */
export function createOnce<T>(owner: object, clientMessageId: string | undefined, create: () => Promise<T>): Promise<T> {
  if (clientMessageId === undefined) return create();
  let known = creates.get(owner);
  if (!known) creates.set(owner, (known = new Map()));
  const earlier = known.get(clientMessageId);
  if (earlier) return earlier as Promise<T>;
  const result = create();
  known.set(clientMessageId, result);
  while (known.size > REMEMBERED_CREATES) {
    const oldest = known.keys().next();
    if (oldest.done) break;
    known.delete(oldest.value);
  }
  const memory = known;
  result.catch(() => {
    if (memory.get(clientMessageId) === result) memory.delete(clientMessageId);
  });
  return result;
}

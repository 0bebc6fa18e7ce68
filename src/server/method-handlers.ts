/**
 * The implementation of each runtime protocol method (SPEC §5) on top of the runtime. Params
 * arrive validated; handlers throw `RpcError`/`NotFoundError` for requests they must refuse.
 */
import { InvalidSearchQueryError } from '../dao/conversation-search-index.js';
import { decodeRecordCursor } from '../storage/record-validation.js';
import { ErrorCodes, PROTOCOL_VERSION, resolveClientCapabilities, RpcError, type ContentPart, type MethodName, type MethodParams, type MethodResult } from '../protocol/index.js';
import { serverCapabilities } from './handlers/capabilities.js';
import { createUserInputHandlers } from './handlers/user-input.js';
import type { LiveConversation } from '../runtime/conversation.js';
import { InvalidWorkLocationError } from '../runtime/runtime.js';
import type { LiveSession } from '../runtime/session.js';
import { ConfigurationUpdateError } from '../config/config-writer.js';
import { redactConfiguration } from './config-service.js';
import { InvalidApprovalAnswerError } from '../runtime/approvals/broker.js';
import type { RpcConnection } from './rpc-connection.js';

/** Per-request helpers given to a handler. */
export interface RequestContext {
  /** Runs a function right after the response to this request has been sent. */
  afterResponse(task: () => void): void;
}

/** One handler per method. */
export type MethodHandlers = { [M in MethodName]: (params: MethodParams<M>, request: RequestContext) => Promise<MethodResult<M>> };

function toContent(input: string | ContentPart[]): ContentPart[] {
  return typeof input === 'string' ? [{ type: 'text', text: input }] : input;
}

/** The session a request names (default: the root session). @throws RpcError notFound naming the method and the id */
function sessionOf(conversation: LiveConversation, sessionId: string | undefined, method: string): LiveSession {
  const id = sessionId ?? conversation.state.rootSessionId;
  const session = conversation.sessions.get(id);
  if (!session) throw new RpcError(ErrorCodes.notFound, `${method}: params.sessionId: session "${id}" is not part of conversation ${conversation.id}`);
  return session;
}

/** Turns an unusable work location into `invalidParams` naming the field. */
async function invalidParamsOnBadLocation<T>(method: string, field: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof InvalidWorkLocationError) throw new RpcError(ErrorCodes.invalidParams, `${method}: params.${field}: ${error.message}`);
    throw error;
  }
}

/** Builds the handlers bound to one connection. */
export function createMethodHandlers(connection: RpcConnection): MethodHandlers {
  const runtime = connection.runtime;
  return {
    ...createUserInputHandlers(connection),
    async initialize(params) {
      if (params.protocolVersion !== undefined && params.protocolVersion !== PROTOCOL_VERSION) {
        throw new RpcError(ErrorCodes.invalidParams, `initialize: params.protocolVersion: this server speaks version ${PROTOCOL_VERSION}, the client asked for ${params.protocolVersion}`);
      }
      connection.markInitialized(params.clientInfo.name, resolveClientCapabilities(params.capabilities));
      return { serverInfo: connection.identity, protocolVersion: PROTOCOL_VERSION, capabilities: serverCapabilities() };
    },

    async 'conversation/create'(params) {
      const conversation = await invalidParamsOnBadLocation('conversation/create', params.cwd !== undefined ? 'cwd' : 'workLocation', runtime.createConversation(params));
      return { conversation: conversation.state, session: conversation.rootSession.state };
    },

    async 'conversation/update'(params) {
      const { conversationId, ...changes } = params;
      return { conversation: await invalidParamsOnBadLocation('conversation/update', 'workLocation', runtime.updateConversation(conversationId, changes)) };
    },

    async 'conversation/list'(params) {
      if (params.cursor !== undefined) {
        try {
          decodeRecordCursor('conversations', params.cursor, 'updatedAt', 'desc');
        } catch {
          throw new RpcError(ErrorCodes.invalidParams, 'conversation/list: params.cursor: not a cursor returned by conversation/list (pass back its nextCursor unchanged)');
        }
      }
      try {
        return await runtime.store.listConversations(params);
      } catch (error) {
        if (error instanceof InvalidSearchQueryError) throw new RpcError(ErrorCodes.invalidParams, `conversation/list: params.query: ${error.message}`);
        throw error;
      }
    },

    async 'conversation/get'(params) {
      return (await runtime.getConversation(params.conversationId)).snapshot();
    },

    async 'conversation/subscribe'(params, request) {
      // Registered now, in the order requests arrive, so an unsubscribe sent right after this
      // request, or the connection closing, ends it even while the replay below still runs.
      const signal = connection.beginSubscription(params.conversationId);
      let conversation: LiveConversation;
      try {
        conversation = await runtime.getConversation(params.conversationId);
      } catch (error) {
        connection.endSubscription(params.conversationId, signal);
        throw error;
      }
      // The result goes out before the replay: the client learns the sessions, then their items.
      request.afterResponse(() => {
        conversation.subscribe((event) => connection.notify(event), params.afterSeq, { signal, ready: () => connection.ready() }).catch((error: unknown) => {
          connection.endSubscription(params.conversationId, signal);
          connection.replayFailed(params.conversationId, error);
        });
      });
      return conversation.snapshot();
    },

    async 'conversation/unsubscribe'(params) {
      connection.endSubscription(params.conversationId);
      return {};
    },

    async 'session/input'(params) {
      const session = sessionOf(await runtime.getConversation(params.conversationId), params.sessionId, 'session/input');
      const outcome = await session.input(toContent(params.input), params.mode ?? 'queue', params.reasoningEffort);
      return { sessionId: session.id, ...outcome };
    },

    async 'session/interrupt'(params) {
      const session = sessionOf(await runtime.getConversation(params.conversationId), params.sessionId, 'session/interrupt');
      const turnId = session.interrupt('user');
      return { interrupted: turnId !== undefined, ...(turnId ? { turnId } : {}) };
    },

    async 'session/setModel'(params) {
      const session = sessionOf(await runtime.getConversation(params.conversationId), params.sessionId, 'session/setModel');
      // Resolving first refuses an unknown model before anything is recorded.
      runtime.models.resolve(params.model);
      return { session: await session.setModel(params.model) };
    },

    async 'session/compact'(params) {
      const session = sessionOf(await runtime.getConversation(params.conversationId), params.sessionId, 'session/compact');
      return { sessionId: session.id, ...(await session.compact()) };
    },

    async 'session/list'(params) {
      return { sessions: (await runtime.getConversation(params.conversationId)).snapshot().sessions };
    },

    async 'executors/list'() {
      return { executors: runtime.listExecutors() };
    },

    async 'models/list'() {
      const defaultModel = runtime.models.defaultModel;
      return { models: runtime.models.list(), ...(defaultModel ? { defaultModel } : {}) };
    },

    async 'approval/respond'(params) {
      const conversation = await runtime.getConversation(params.conversationId);
      try {
        const accepted = conversation.approvals.respond(params.approvalId, {
          decision: params.decision,
          decidedBy: `client:${connection.clientName}`,
          ...(params.message ? { message: params.message } : {}),
          ...(params.prefix ? { prefix: params.prefix } : {}),
        });
        return { accepted };
      } catch (error) {
        if (error instanceof InvalidApprovalAnswerError) throw new RpcError(ErrorCodes.invalidParams, `approval/respond: params.decision: ${error.message}`);
        throw error;
      }
    },

    async 'config/get'() {
      return { configuration: redactConfiguration(connection.config.current), ...(connection.config.error ? { error: connection.config.error } : {}) };
    },

    async 'config/update'(params) {
      try {
        return { configuration: redactConfiguration(await connection.config.update(params.changes)) };
      } catch (error) {
        // Files are named as the client knows them (`server.yaml:3`), not by their place on this machine.
        if (error instanceof ConfigurationUpdateError) throw new RpcError(ErrorCodes.invalidParams, `config/update: ${error.message.replaceAll(`${connection.config.configDir}/`, '')}`);
        throw error;
      }
    },

    async 'config/reload'() {
      return connection.config.reload();
    },

    async 'server/status'(params) {
      const environment = Object.fromEntries((params.environment ?? []).map((name) => [name, (process.env[name] ?? '') !== '']));
      return { pid: process.pid, version: connection.identity.version, configDir: connection.config.configDir, busy: !runtime.isIdle(), environment };
    },

    async 'items/list'(params) {
      const conversation = await runtime.getConversation(params.conversationId);
      const sessionId = sessionOf(conversation, params.sessionId, 'items/list').id;
      const limit = params.limit ?? 100;
      const items = await runtime.store.listItems(params.conversationId, sessionId, {
        direction: params.direction ?? 'forward',
        ...(params.cursor !== undefined ? { cursor: params.cursor } : {}),
        limit,
      });
      const last = items.at(-1);
      return { items, ...(items.length === limit && last ? { nextCursor: last.seq } : {}) };
    },
  };
}

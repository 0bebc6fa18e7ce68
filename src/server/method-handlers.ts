/**
 * The implementation of each runtime protocol method (SPEC §5) on top of the runtime. Params
 * arrive validated; handlers throw `RpcError`/`NotFoundError` for requests they must refuse.
 */
import { InvalidSearchQueryError } from '../dao/conversation-search-index.js';
import { decodeRecordCursor } from '../storage/record-validation.js';
import { ErrorCodes, PROTOCOL_VERSION, resolveClientCapabilities, RpcError, type InputContentPart, type LogDamage, type MethodName, type MethodParams, type MethodResult } from '../protocol/index.js';
import { serverCapabilities } from './handlers/capabilities.js';
import { createUserInputHandlers } from './handlers/user-input.js';
import { createClientFileHandlers } from './handlers/client-files.js';
import { createClientCommandHandlers } from './handlers/client-commands.js';
import type { LiveConversation } from '../runtime/conversation.js';
import { InvalidWorkLocationError } from '../runtime/runtime.js';
import type { LiveSession } from '../runtime/session.js';
import { ConfigurationUpdateError } from '../config/config-writer.js';
import { redactConfiguration } from './config-service.js';
import { InvalidApprovalAnswerError } from '../runtime/approvals/broker.js';
import type { RpcConnection } from './rpc-connection.js';
import { createLifecycleHandlers } from './handlers/lifecycle.js';
import { createTransferHandlers } from './handlers/conversation-transfer.js';
import { subscribeConnection } from './connection-subscription.js';
import { unwrapCursor } from '../dao/conversation-listing.js';
import { createOnce, turnControlHandlers } from './handlers/turn-control.js';
import { UnknownModelError } from '../models/model-registry.js';
import { createAgentHandlers } from './handlers/agents.js';
import { createPluginHandlers } from './handlers/plugins.js';
import { conversationContext } from './handlers/conversation-context.js';
import { checkAttachments, createWorkspaceHandlers } from './handlers/workspace.js';
import { createWorkspaceGitHandlers } from './handlers/workspace-git.js';
import { createBrowserHandlers } from './handlers/browser.js';
import { createPlatformIdentityHandlers } from './handlers/platform-identity.js';
import { createProjectHandlers } from './handlers/projects.js';
import { listForCaller } from './handlers/project-conversations.js';
import { confineNewProjectConversation, confineProjectLocation } from './handlers/project-confinement.js';
import { withConfinedUse } from './handlers/confined-use.js';
import { createScheduleHandlers } from './handlers/schedules.js';
import { createNotificationHandlers } from './handlers/notifications.js';
import { createCostHandlers } from './handlers/costs.js';
import { stateOwner } from '../platform/settings/user-state.js';
import { createWorktreeHandlers, worktreeRpcError } from './handlers/worktrees.js';
import { WorktreeError } from '../runtime/worktree-git.js';
import { hideDataDirectory } from './request-errors.js';

/** Per-request helpers given to a handler. */
export interface RequestContext {
  /** Runs a function right after the response to this request has been sent. */
  afterResponse(task: () => void): void;
  /**
   * Sends this request's result without replacing secret values by `***` (only
   * `projects/secrets/list` to a caller allowed to read the values; docs/platform.md, "Secrets").
   */
  revealSecrets?(): void;
}

/** One handler per method. */
export type MethodHandlers = { [M in MethodName]: (params: MethodParams<M>, request: RequestContext) => Promise<MethodResult<M>> };

function toContent(input: string | InputContentPart[]): InputContentPart[] {
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

/**
 * The params of `conversation/create` for a project: the project's workspace as work location
 * when the request gives none, the project's executor for a `cwd` given without one, and a
 * location the caller may use (`confineProjectLocation`).
 * @throws RpcError notFound for an unknown project; invalidParams naming the param of a
 *   location outside the project's workspace
 */
async function projectWorkLocation(connection: RpcConnection, params: Omit<MethodParams<'conversation/create'>, 'clientMessageId'>): Promise<Omit<MethodParams<'conversation/create'>, 'clientMessageId'>> {
  if (params.projectId === undefined) return params;
  const project = connection.platform?.projects.find(params.projectId);
  if (!project) throw new RpcError(ErrorCodes.notFound, `conversation/create: params.projectId: project "${params.projectId}" does not exist`);
  const { executor, directory } = project.workspace;
  if (params.workLocation !== undefined) {
    await confineProjectLocation(connection, 'conversation/create', project, params.workLocation, 'workLocation');
    return params;
  }
  const location = params.cwd !== undefined ? { executor: params.executor ?? executor, cwd: params.cwd } : { executor, cwd: directory };
  await confineProjectLocation(connection, 'conversation/create', project, [location], params.cwd !== undefined ? 'cwd' : 'projectId');
  return { ...params, ...location };
}

/** Builds the handlers bound to one connection. */
export function createMethodHandlers(connection: RpcConnection): MethodHandlers {
  const runtime = connection.runtime;
  // What reading the conversation's logs skipped, with the machine's data directory hidden; nothing when none.
  const damageOf = (conversationId: string): { damage?: LogDamage[] } => {
    const damage = runtime.store.logDamage(conversationId).map((entry) => ({ ...entry, location: hideDataDirectory(entry.location) }));
    return damage.length > 0 ? { damage } : {};
  };
  return withConfinedUse(connection, {
    ...createLifecycleHandlers(connection),
    ...createTransferHandlers(connection),
    ...turnControlHandlers(connection),
    ...createAgentHandlers(connection),
    ...createPluginHandlers(connection),
    ...createWorkspaceHandlers(connection),
    ...createWorkspaceGitHandlers(connection),
    ...createBrowserHandlers(connection),
    ...createScheduleHandlers(connection),
    ...createNotificationHandlers(connection),
    ...createCostHandlers(connection),
    ...createWorktreeHandlers(connection),
    ...createUserInputHandlers(connection),
    ...createClientFileHandlers(connection),
    ...createClientCommandHandlers(connection),
    ...createPlatformIdentityHandlers(connection),
    ...createProjectHandlers(connection),
    async initialize(params) {
      if (params.protocolVersion !== undefined && params.protocolVersion !== PROTOCOL_VERSION) {
        throw new RpcError(ErrorCodes.invalidParams, `initialize: params.protocolVersion: this server speaks protocol version ${PROTOCOL_VERSION}, the client asked for version ${params.protocolVersion}; use a client for version ${PROTOCOL_VERSION}`);
      }
      connection.markInitialized(params.clientInfo.name, resolveClientCapabilities(params.capabilities));
      return { serverInfo: connection.identity, protocolVersion: PROTOCOL_VERSION, capabilities: serverCapabilities() };
    },

    async 'conversation/create'(params) {
      const { clientMessageId, ...given } = params;
      return createOnce(runtime, clientMessageId, async () => {
        const located = await projectWorkLocation(connection, given);
        const context = conversationContext(located, Object.keys(runtime.mcp?.servers ?? {}));
        const options = await confineNewProjectConversation(connection, 'conversation/create', located, context);
        const created = runtime.createConversation({ ...options, context }).catch((error: unknown) => {
          // A worktree fault in the directory names the field the directory came from.
          if (error instanceof WorktreeError && error.field === 'cwd' && options.cwd === undefined) throw worktreeRpcError('conversation/create', new WorktreeError(error.kind, error.message, 'workLocation[0].cwd'));
          throw worktreeRpcError('conversation/create', error);
        });
        const conversation = await invalidParamsOnBadLocation('conversation/create', options.cwd !== undefined ? 'cwd' : 'workLocation', created);
        // Bound before the answer, so every later event of it is checked against its project.
        if (options.projectId !== undefined) await connection.platform?.projects.bindConversation(conversation.id, options.projectId);
        return { conversation: conversation.state, session: conversation.rootSession.state };
      });
    },

    async 'conversation/update'(params) {
      const { conversationId, ...changes } = params;
      const projectId = connection.platform?.projects.projectOf(conversationId);
      const project = projectId !== undefined ? connection.platform?.projects.find(projectId) : undefined;
      if (project && changes.workLocation) await confineProjectLocation(connection, 'conversation/update', project, changes.workLocation, 'workLocation');
      return { conversation: await invalidParamsOnBadLocation('conversation/update', 'workLocation', runtime.updateConversation(conversationId, changes)) };
    },

    async 'conversation/list'(params) {
      if (params.query !== undefined && params.sort === 'created') throw new RpcError(ErrorCodes.invalidParams, 'conversation/list: params.sort: a search (query) lists by last update only; leave sort out or use "updated"');
      if (params.cursor !== undefined) {
        try {
          decodeRecordCursor('conversations', unwrapCursor(params.sort ?? 'updated', params.cursor), params.sort === 'created' ? 'key' : 'updatedAt', 'desc');
        } catch (error) {
          const detail = /made for sort/.test((error as Error).message) ? `: ${(error as Error).message}` : '';
          throw new RpcError(ErrorCodes.invalidParams, `conversation/list: params.cursor: not a cursor returned by conversation/list (pass back its nextCursor unchanged, with the same sort)${detail}`);
        }
      }
      try {
        return await listForCaller(connection, await runtime.store.listConversations(params));
      } catch (error) {
        if (error instanceof InvalidSearchQueryError) throw new RpcError(ErrorCodes.invalidParams, `conversation/list: params.query: ${error.message}`);
        throw error;
      }
    },

    async 'conversation/get'(params) {
      const snapshot = (await runtime.getConversation(params.conversationId)).snapshot();
      return { ...snapshot, ...damageOf(params.conversationId) };
    },

    async 'conversation/subscribe'(params, request) {
      // Registered now, in the order requests arrive, so an unsubscribe sent right after this
      // request, or the connection closing, ends it even while the replay below still runs.
      // The replay goes out after the result: the client learns the sessions and heads, then their items.
      const from = params.afterSeq === 'head' ? 'head' : { afterSeq: params.afterSeq, historyEpoch: params.historyEpoch };
      const { attached, replay } = await subscribeConnection(connection, params.conversationId, () => runtime.getConversation(params.conversationId), from);
      request.afterResponse(() => {
        // Never rejects: `replay` itself ends the subscription and tells the client of a failure.
        replay().catch(() => undefined);
      });
      return { ...attached.snapshot, heads: attached.heads, metadataSeq: attached.metadataSeq, ...damageOf(params.conversationId) };
    },

    async 'conversation/unsubscribe'(params) {
      connection.endSubscription(params.conversationId);
      return {};
    },

    async 'session/input'(params) {
      const session = sessionOf(await runtime.getConversation(params.conversationId), params.sessionId, 'session/input');
      if (params.model !== undefined) {
        try {
          runtime.models.resolve(params.model);
        } catch (error) {
          if (error instanceof UnknownModelError) throw new RpcError(ErrorCodes.invalidParams, `session/input: params.model: ${error.message}`);
          throw error;
        }
      }
      const outcome = await session.input(checkAttachments(runtime.attachments, params.conversationId, toContent(params.input)), params.mode ?? 'queue', {
        ...(params.reasoningEffort ? { reasoningEffort: params.reasoningEffort } : {}),
        ...(params.model !== undefined ? { model: params.model } : {}),
        ...(params.expectedTurnId !== undefined ? { expectedTurnId: params.expectedTurnId } : {}),
        ...(params.clientMessageId !== undefined ? { clientMessageId: params.clientMessageId } : {}),
        author: { clientName: connection.clientName, connectionId: String(connection.number) },
      });
      // The turn's cost counts for whoever started it (steering joins a turn someone else started).
      if (outcome.turnId !== undefined && !(params.mode === 'steer' && outcome.queued)) connection.platform?.costs.attribute(outcome.turnId, stateOwner(connection.caller));
      return { sessionId: session.id, ...outcome };
    },

    async 'session/interrupt'(params) {
      const session = sessionOf(await runtime.getConversation(params.conversationId), params.sessionId, 'session/interrupt');
      const turnId = session.interruptTurn(params.turnId);
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

    async 'models/list'(params) {
      const defaultModel = runtime.models.defaultModel;
      if (!runtime.modelDiscovery) return { models: runtime.models.list(), ...(defaultModel ? { defaultModel } : {}) };
      // Providers are the server's, so the whole server is one scope.
      const catalog = await runtime.modelDiscovery.catalog('server', params.refresh === true);
      return { models: catalog.models, ...(defaultModel ? { defaultModel } : {}), ...(catalog.warnings.length > 0 ? { warnings: catalog.warnings } : {}), discoveredAt: catalog.discoveredAt };
    },

    async 'approval/respond'(params) {
      const conversation = await runtime.getConversation(params.conversationId);
      try {
        const accepted = conversation.approvals.respond(params.approvalId, {
          decision: params.decision,
          decidedBy: `client:${connection.clientName}`,
          ...(params.message ? { message: params.message } : {}),
          ...(params.prefix ? { prefix: params.prefix } : {}),
          ...(params.automatic ? { automatic: true } : {}),
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
  });
}

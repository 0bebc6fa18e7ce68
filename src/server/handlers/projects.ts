/**
 * Handlers of the platform methods (docs/protocol.md, "Projects"): projects, members, secrets,
 * settings and read markers. The connection's access check has already run (see
 * `platform/access/access-rules.ts`); these handlers only narrow lists to the caller.
 */
import { ErrorCodes, RpcError, type MethodName, type MethodParams, type MethodResult, type Project } from '../../protocol/index.js';
import type { Caller } from '../../platform/caller.js';
import type { Platform } from '../../platform/platform.js';
import { ProjectNotFoundError, type StoredProject } from '../../platform/projects/project-store.js';
import { REDACTED } from '../../platform/secrets/secret-redactor.js';
import { stateOwner } from '../../platform/settings/user-state.js';
import { checkWorkspace, deleteProject, startProject, syncEnvFile, WorkspaceUnavailableError } from '../project-operations.js';
import type { RequestContext } from '../method-handlers.js';
import { confineProjectWorkspace } from './project-confinement.js';
import type { RpcConnection } from '../rpc-connection.js';

type PlatformMethod = Extract<MethodName, `projects/${string}` | `settings/${string}` | 'conversations/markRead'>;
/** The platform handlers, by method. */
export type PlatformHandlers = { [M in PlatformMethod]: (params: MethodParams<M>, request: RequestContext) => Promise<MethodResult<M>> };

/** The platform of a connection. @throws RpcError internal when the server runs without one */
function platformOf(connection: RpcConnection, method: string): Platform {
  if (!connection.platform) throw new RpcError(ErrorCodes.internalError, `${method}: this server runs without its platform database`);
  return connection.platform;
}

/** A project as `caller` sees it (with their role). */
function shown(platform: Platform, caller: Caller, project: StoredProject): Project {
  const access = platform.access.projectAccess(caller, project.id);
  return { ...project, ...(access === 'manager' || access === 'member' ? { role: access } : {}) };
}

/** Turns a project missing under a valid-looking id into `notFound` naming the param. */
async function named<T>(method: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProjectNotFoundError) throw new RpcError(ErrorCodes.notFound, `${method}: params.projectId: ${error.message}`);
    throw error;
  }
}

/** Builds the platform handlers bound to one connection. */
export function createProjectHandlers(connection: RpcConnection): PlatformHandlers {
  const runtime = connection.runtime;
  return {
    async 'projects/list'() {
      const platform = platformOf(connection, 'projects/list');
      const visible = platform.projects.list().filter((project) => platform.access.projectAccess(connection.caller, project.id) !== undefined);
      return { projects: visible.map((project) => shown(platform, connection.caller, project)) };
    },

    async 'projects/create'(params) {
      const platform = platformOf(connection, 'projects/create');
      // Before the workspace check, which opens the directory to a sandboxed executor's file operations.
      await confineProjectWorkspace(connection, 'projects/create', params.workspace);
      try {
        await checkWorkspace(runtime, params.workspace);
      } catch (error) {
        if (error instanceof WorkspaceUnavailableError) throw new RpcError(ErrorCodes.invalidParams, `projects/create: params.workspace: ${error.message}`);
        throw error;
      }
      const project = await platform.projects.create(params);
      // The user who creates a project manages it; the local owner and administrators reach it anyway.
      if (connection.caller.kind !== 'local-owner') await platform.projects.addMember(project.id, connection.caller.userId, 'manager');
      return { project: shown(platform, connection.caller, project) };
    },

    async 'projects/update'(params) {
      const platform = platformOf(connection, 'projects/update');
      const { projectId, ...changes } = params;
      return named('projects/update', async () => ({ project: shown(platform, connection.caller, await platform.projects.update(projectId, changes)) }));
    },

    async 'projects/delete'(params) {
      const platform = platformOf(connection, 'projects/delete');
      const deletedConversations = await named('projects/delete', () => deleteProject(platform, runtime, params.projectId));
      return { projectId: params.projectId, deletedConversations };
    },

    async 'projects/start'(params) {
      const platform = platformOf(connection, 'projects/start');
      return named('projects/start', async () => ({ project: shown(platform, connection.caller, await startProject(platform, runtime, params.projectId)) }));
    },

    async 'projects/stop'(params) {
      const platform = platformOf(connection, 'projects/stop');
      return named('projects/stop', async () => ({ project: shown(platform, connection.caller, await platform.projects.setStatus(params.projectId, 'stopped')) }));
    },

    async 'projects/members/list'(params) {
      const platform = platformOf(connection, 'projects/members/list');
      return { members: platform.projects.membersOf(params.projectId).map(({ userId, role, addedAt }) => ({ userId, role, addedAt })) };
    },

    async 'projects/members/add'(params) {
      const platform = platformOf(connection, 'projects/members/add');
      const member = await named('projects/members/add', async () => {
        platform.projects.get(params.projectId);
        // With platform mode on, members are accounts; without it there are none to name.
        if (platform.signInEnabled && !(await platform.users.get(params.userId))) {
          throw new RpcError(ErrorCodes.notFound, `projects/members/add: params.userId: no user ${JSON.stringify(params.userId.slice(0, 100))}`);
        }
        return platform.projects.addMember(params.projectId, params.userId, params.role ?? 'member');
      });
      return { userId: member.userId, role: member.role };
    },

    async 'projects/members/remove'(params) {
      const platform = platformOf(connection, 'projects/members/remove');
      return { removed: await platform.projects.removeMember(params.projectId, params.userId) };
    },

    async 'projects/secrets/list'(params, request) {
      const platform = platformOf(connection, 'projects/secrets/list');
      const access = platform.access.projectAccess(connection.caller, params.projectId);
      // Values go only to those who may change them; for everyone else they are `***` here and in every other answer.
      const reveal = access === 'administrator' || access === 'manager';
      if (reveal) request.revealSecrets?.();
      const secrets = platform.secrets.list(params.projectId).map((secret) => ({ name: secret.name, value: reveal ? secret.value : REDACTED, updatedAt: secret.updatedAt }));
      return { secrets };
    },

    async 'projects/secrets/set'(params) {
      const platform = platformOf(connection, 'projects/secrets/set');
      await named('projects/secrets/set', async () => {
        platform.projects.get(params.projectId);
        await platform.secrets.set(params.projectId, params.name, params.value);
        await syncEnvFile(platform, runtime, params.projectId);
      });
      return { name: params.name };
    },

    async 'projects/secrets/remove'(params) {
      const platform = platformOf(connection, 'projects/secrets/remove');
      const removed = await platform.secrets.remove(params.projectId, params.name);
      if (removed) await syncEnvFile(platform, runtime, params.projectId);
      return { removed };
    },

    async 'settings/get'() {
      const platform = platformOf(connection, 'settings/get');
      return { settings: await platform.userState.settings(stateOwner(connection.caller)) };
    },

    async 'settings/update'(params) {
      const platform = platformOf(connection, 'settings/update');
      const { changes } = params;
      if (changes.defaultAgent != null && !Object.hasOwn(runtime.agentDefinitions, changes.defaultAgent)) {
        throw new RpcError(ErrorCodes.invalidParams, `settings/update: params.changes.defaultAgent: agent "${changes.defaultAgent}" is not defined in agents.yaml`);
      }
      if (changes.model != null && !runtime.models.list().some((model) => model.id === changes.model)) {
        throw new RpcError(ErrorCodes.invalidParams, `settings/update: params.changes.model: model "${changes.model}" is not in the catalog (see models/list)`);
      }
      return { settings: await platform.userState.updateSettings(stateOwner(connection.caller), changes) };
    },

    async 'conversations/markRead'(params) {
      const platform = platformOf(connection, 'conversations/markRead');
      // Refuses an unknown conversation like every other method naming one.
      await runtime.getConversation(params.conversationId);
      return { conversationId: params.conversationId, readAt: await platform.userState.markRead(stateOwner(connection.caller), params.conversationId) };
    },
  };
}

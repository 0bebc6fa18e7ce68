/**
 * The one place that decides what a caller may reach (SPEC §9: "every live event sent to a
 * member is filtered by that member's access"). Consulted at two choke points: the method
 * dispatch of each connection (`checkRequest`, before any handler runs) and its notification
 * path (`admitsNotification`, for every event it would send, the conversation list feed
 * included). Both read the live project store, so a member removed now is refused now.
 *
 * Rules: the local owner and administrators reach everything. Other callers reach a
 * conversation through the project it is bound to, when they are a member of it (and, for a
 * project-scoped API token, when it is that token's project). Conversations outside every
 * project are the administrators'. Read-only tokens never write. A scheduled task named only by
 * its id is reached through its conversation, found by a {@link TaskConversationLookup}.
 */
import { ErrorCodes, RpcError, type AnyNotification, type MethodName } from '../../protocol/index.js';
import type { ProjectRole } from '../../protocol/projects.js';
import { isAdministrator, mayWrite, tokenProject, type Caller } from '../caller.js';
import type { ProjectStore } from '../projects/project-store.js';
import { UnknownTaskError } from '../schedules/schedule-service.js';
import { METHOD_RULES, NOTIFICATION_RULES, methodChangesState } from './access-rules.js';

/**
 * Finds the conversation of a scheduled task, for methods that name only `params.taskId`
 * (rule `task-conversation`). Given by the server when it starts the scheduled tasks.
 */
export interface TaskConversationLookup {
  /** The id of the conversation the task `taskId` belongs to; undefined when no such task exists. */
  taskConversation(taskId: string): Promise<string | undefined>;
}

/** What a caller is in a project: an administrator, a manager or a member; undefined for no access. */
export type ProjectAccess = 'administrator' | ProjectRole | undefined;

function refuse(method: string, why: string): RpcError {
  return new RpcError(ErrorCodes.forbidden, `${method}: forbidden: ${why}`);
}

function readOnlyRefusal(method: string): RpcError {
  return new RpcError(ErrorCodes.forbidden, `${method}: this API token is read-only; the method changes state`);
}

function stringParam(params: unknown, key: string): string | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const value = (params as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** Access decisions over the project store. */
export class AccessControl {
  /**
   * Where the conversation of a scheduled task is found. Without one (a server without
   * scheduled tasks), methods naming a task id are for administrators only.
   */
  taskConversations: TaskConversationLookup | undefined;

  constructor(private readonly projects: ProjectStore) {}

  /** What `caller` is in a project (see {@link ProjectAccess}); undefined for a project that does not exist. */
  projectAccess(caller: Caller, projectId: string): ProjectAccess {
    if (!this.projects.find(projectId)) return undefined;
    if (caller.kind === 'api-token' && caller.scope.kind === 'project' && caller.scope.projectId !== projectId) return undefined;
    if (isAdministrator(caller)) return 'administrator';
    if (caller.kind === 'local-owner') return 'administrator';
    return this.projects.roleOf(projectId, caller.userId);
  }

  /**
   * Whether `caller` may see a conversation.
   * @param projectHint the project the event itself names (a conversation just created, not bound yet)
   */
  mayReadConversation(caller: Caller, conversationId: string, projectHint?: string): boolean {
    const projectId = this.projects.projectOf(conversationId) ?? projectHint;
    if (projectId === undefined) return isAdministrator(caller) && !(caller.kind === 'api-token' && caller.scope.kind === 'project');
    return this.projectAccess(caller, projectId) !== undefined;
  }

  /**
   * Why `caller` may not reach a conversation, for a refusal (the conversation's id is given
   * as the caller wrote it: an unknown one and one of another project get the same words).
   * A project-scoped API token is told that it is limited to its project, which is true
   * whatever its user's memberships; anyone else, that the conversation is not in a project
   * they are a member of.
   * @returns the reason, or undefined when the caller may read the conversation
   */
  conversationRefusal(caller: Caller, conversationId: string): string | undefined {
    if (this.mayReadConversation(caller, conversationId)) return undefined;
    const scope = tokenProject(caller);
    const projectId = this.projects.projectOf(conversationId);
    if (scope !== undefined && projectId !== scope) return `this API token is limited to project ${scope}; conversation ${conversationId} is not in it`;
    return `conversation ${conversationId} is not in a project you are a member of`;
  }

  /**
   * Why `caller` may not reach project `projectId`, for a refusal: a project-scoped API token
   * used on another project is told that it is limited to its own (its user may well be a
   * member of both); anyone else, that they are not a member.
   * @returns the reason, or undefined when the caller reaches the project
   */
  projectRefusal(caller: Caller, projectId: string): string | undefined {
    if (this.projectAccess(caller, projectId) !== undefined) return undefined;
    const scope = tokenProject(caller);
    if (scope !== undefined && scope !== projectId) return `this API token is limited to project ${scope}; project ${projectId} is outside it`;
    return `you are not a member of project ${projectId}`;
  }

  /**
   * Refuses to a read-only API token every method that changes state (its rule's `write` in
   * access-rules.ts, which every method must have). Cheap and independent of the params, so
   * the connection runs it before validating them.
   * @throws RpcError forbidden (-32003) naming the method
   */
  checkReadOnly(caller: Caller, method: MethodName): void {
    if (!mayWrite(caller) && methodChangesState(method)) throw readOnlyRefusal(method);
  }

  /**
   * Refuses a request the caller may not make, before its handler runs: a read-only token
   * anything that writes (by {@link checkReadOnly} and by the method's rule), a project-scoped
   * token anything outside its project (creating a project included; the refusal says the
   * token is limited to its project, docs/platform.md "Sessions and tokens"), a member
   * anything outside their projects.
   *
   * A method naming only a scheduled task (`params.taskId`) follows the task's conversation.
   * A task the caller may not reach is answered as if it did not exist, with the handler's own
   * not-found error, so its existence in another project is never revealed (as a conversation
   * of another project gets the same refusal as a missing one).
   * @param method a method name (validated)
   * @param params its validated params
   * @returns undefined when the check is done (it is synchronous for every rule but one, so a
   *   request is handled in the tick it arrived in, in order with the ones after it); for a
   *   task named by id, a promise settled once the task's conversation was looked up
   * @throws RpcError forbidden (-32003) naming the method and what was missing; not found
   *   (-32004) `<method>: params.taskId: scheduled task "<id>" does not exist` for a task that
   *   does not exist or that the caller may not reach, and `<method>: params.projectId: project
   *   "<id>" does not exist` for a missing project named by an administrator or the local owner
   *   (see {@link checkProjectExists})
   */
  checkRequest(caller: Caller, method: MethodName, params: unknown): Promise<void> | undefined {
    const rule = METHOD_RULES[method];
    const namedProject = rule.kind === 'project' || rule.kind === 'create-conversation' ? stringParam(params, 'projectId') : undefined;
    // Before everything else, so every method naming a project answers the local owner alike.
    if (namedProject !== undefined) this.checkProjectExists(caller, method, namedProject, 'projectId');
    if (caller.kind === 'local-owner') return;
    this.checkReadOnly(caller, method);
    const scope = tokenProject(caller);
    switch (rule.kind) {
      case 'open':
        // A project token reaches one project: a new one would be outside it.
        if (method === 'projects/create' && scope !== undefined) throw refuse(method, `this API token is limited to project ${scope}; it cannot create projects`);
        return;
      case 'own-terminal':
        return;
      case 'administrator':
        if (!isAdministrator(caller)) {
          // An administrator's project token is not an administrator's token: say what limits it.
          throw refuse(method, scope !== undefined ? `this API token is limited to project ${scope}; only administrators, signed in or with an admin-scoped token, may do this` : 'only administrators may do this');
        }
        return;
      case 'conversation': {
        const refusal = this.conversationRefusal(caller, stringParam(params, 'conversationId') ?? '');
        if (refusal !== undefined) throw refuse(method, `params.conversationId: ${refusal}`);
        return;
      }
      case 'task-conversation': {
        const lookup = this.taskConversations;
        if (!lookup) {
          if (!isAdministrator(caller)) throw refuse(method, 'scheduled tasks are not available to members on this server');
          return;
        }
        return this.checkTask(lookup, caller, method, stringParam(params, 'taskId') ?? '');
      }
      case 'create-conversation': {
        const projectId = stringParam(params, 'projectId');
        if (projectId === undefined) {
          if (scope !== undefined) throw refuse(method, `params.projectId: this API token is limited to project ${scope}; give projectId ${scope}`);
          if (!isAdministrator(caller)) throw refuse(method, 'params.projectId: only administrators create conversations outside a project; name a project you are a member of');
          return;
        }
        const refusal = this.projectRefusal(caller, projectId);
        if (refusal !== undefined) throw refuse(method, `params.projectId: ${refusal}`);
        return;
      }
      case 'project': {
        const projectId = stringParam(params, 'projectId') ?? '';
        const access = this.projectAccess(caller, projectId);
        if (access === undefined) throw refuse(method, `params.projectId: ${this.projectRefusal(caller, projectId) ?? `you are not a member of project ${projectId}`}`);
        if (rule.need === 'manager' && access === 'member') throw refuse(method, `only managers of project ${projectId} may do this`);
        return;
      }
    }
  }

  /**
   * Tells an administrator (or the local owner) that a project they name does not exist, as
   * they are told of an unknown conversation. Anyone else is left to the refusal they get for
   * a project of others, the same words whether it exists or not, so that a member cannot learn
   * which project ids exist.
   * @param keyPath where the id is in the params, e.g. `projectId` or `scope.projectId`
   * @throws RpcError not found (-32004) `<method>: params.<keyPath>: project "<id>" does not exist`
   */
  checkProjectExists(caller: Caller, method: string, projectId: string, keyPath: string): void {
    if (!isAdministrator(caller) || this.projects.find(projectId)) return;
    throw new RpcError(ErrorCodes.notFound, `${method}: params.${keyPath}: project "${projectId}" does not exist`);
  }

  /** @throws RpcError not found when the task does not exist or its conversation is out of the caller's reach */
  private async checkTask(lookup: TaskConversationLookup, caller: Caller, method: MethodName, taskId: string): Promise<void> {
    const conversationId = await lookup.taskConversation(taskId);
    if (conversationId === undefined || !this.mayReadConversation(caller, conversationId)) {
      throw new RpcError(ErrorCodes.notFound, `${method}: params.taskId: ${new UnknownTaskError(taskId).message}`);
    }
  }

  /** Whether `caller` may hear an event (see `NOTIFICATION_RULES`). */
  admitsNotification(caller: Caller, event: AnyNotification): boolean {
    if (caller.kind === 'local-owner') return true;
    const rule = NOTIFICATION_RULES[event.method];
    if (rule === 'connection') return true;
    if (rule === 'administrator') return isAdministrator(caller);
    const params = event.params as { conversationId?: unknown; conversation?: { id?: unknown; projectId?: unknown } };
    const conversationId = typeof params.conversationId === 'string' ? params.conversationId : params.conversation?.id;
    if (typeof conversationId !== 'string') return false;
    const hint = typeof params.conversation?.projectId === 'string' ? params.conversation.projectId : undefined;
    return this.mayReadConversation(caller, conversationId, hint);
  }
}

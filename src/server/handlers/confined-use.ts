/**
 * Where members work, checked at use (docs/platform.md, "Where members work"): before a caller
 * held to projects acts in a project conversation — starts a turn, reads its files, opens a
 * terminal, works on its worktree, forks it, schedules a prompt — the conversation's stored
 * work location is checked again against the project's workspace, and for the methods that
 * start turns the session's agent against the project's executor. A location set before the
 * rules existed, or by an administrator, and an agent an administrator chose, are thereby held
 * to the caller's own rules, whoever set them. A scheduled run acting for such a caller goes
 * through the checks of a turn's start too (`turnStartRefusal`), just before its delivery.
 */
import { confinedToProjects, storedLocationRefusal, type ConfinementContext } from '../../platform/access/workspace-confinement.js';
import type { Caller } from '../../platform/caller.js';
import type { Platform } from '../../platform/platform.js';
import { ErrorCodes, RpcError, type MethodName } from '../../protocol/index.js';
import type { LiveConversation } from '../../runtime/conversation.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { MethodHandlers } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';
import { agentRefusal, confinementContext } from './project-confinement.js';

/** What a method's use of a conversation is checked for. */
interface UseCheck {
  /** The session whose agent a turn would run (`params.sessionId`, default the root session). */
  agent?: boolean;
  /** The conversation's git worktree and main checkout, which the method works in. */
  worktree?: boolean;
}

/** What starting a turn is checked for, whether a person or a scheduled run starts it. */
const TURN_START: UseCheck = { agent: true };

/**
 * The methods that act in a conversation's work location, or start turns there. Methods that
 * only read what is recorded (items, sessions, costs) or act on the client's machine
 * (`conversation/serveFiles`, `conversation/serveCommands`) are not listed.
 */
const CONFINED_USE: Partial<Record<MethodName, UseCheck>> = {
  'session/input': TURN_START,
  'session/compact': TURN_START,
  'schedules/create': { agent: true },
  'fs/list': {},
  'fs/read': {},
  'fs/stat': {},
  'terminal/create': {},
  'workspace/gitLog': {},
  'workspace/gitShow': {},
  'browser/input': {},
  'browser/screenshot': {},
  'conversation/fork': {},
  'worktree/diff': { worktree: true },
  'worktree/merge': { worktree: true },
  'worktree/rebase': { worktree: true },
  'worktree/discard': { worktree: true },
};

function refuse(method: string, why: string): RpcError {
  return new RpcError(ErrorCodes.forbidden, `${method}: forbidden: ${why}`);
}

/** What the checks at use read of the server. */
export interface ConfinedUseServer {
  /** The projects a conversation belongs to. */
  platform: Platform;
  /** The agents' definitions and the executors, as configured now. */
  runtime: Runtime;
  /** The executors and the server's own directories, as the location rules need them. */
  context: ConfinementContext;
}

/**
 * Why `caller` may not use `conversation` as `check` says: its work location (or worktree) lies
 * where the caller may not work, or the session's agent may not run for them.
 * @param sessionId the session whose agent a turn would run (default the root session)
 * @returns the reason, or undefined when the caller may (always for a conversation in no project)
 */
async function confinedUseRefusal(caller: Caller, server: ConfinedUseServer, conversation: LiveConversation, check: UseCheck, sessionId: string | undefined): Promise<string | undefined> {
  if (!confinedToProjects(caller)) return undefined;
  const projectId = server.platform.projects.projectOf(conversation.id);
  const project = projectId !== undefined ? server.platform.projects.find(projectId) : undefined;
  // Conversations outside every project are refused to such callers by the access rules.
  if (!project) return undefined;
  const location = await storedLocationRefusal(caller, project, conversation.state.workLocation, `conversation ${conversation.id} works in`, server.context);
  if (location !== undefined) return location;
  const worktree = conversation.state.worktree;
  if (check.worktree && worktree && worktree.removedAt === undefined) {
    const checkout = [{ executor: worktree.executor, cwd: worktree.repositoryRoot }];
    const refusal = await storedLocationRefusal(caller, project, checkout, `the worktree of conversation ${conversation.id} belongs to the checkout`, server.context);
    if (refusal !== undefined) return refusal;
  }
  if (check.agent) {
    const session = conversation.sessions.get(sessionId ?? conversation.state.rootSessionId);
    if (!session) return undefined;
    const refusal = agentRefusal(server.runtime, caller, project, session.state.agent, conversation.workspaces.map((workspace) => workspace.executor));
    if (refusal !== undefined) return `session ${session.id}: ${refusal}`;
  }
  return undefined;
}

/**
 * Refuses `method` on `conversation` to the connection's caller (see `confinedUseRefusal`).
 * @throws RpcError forbidden (-32003) naming the method, the conversation, the location or agent and why
 */
async function checkConfinedUse(connection: RpcConnection, method: MethodName, conversation: LiveConversation, sessionId: string | undefined): Promise<void> {
  const check = CONFINED_USE[method];
  const platform = connection.platform;
  if (!check || !platform) return;
  const refusal = await confinedUseRefusal(connection.caller, { platform, runtime: connection.runtime, context: confinementContext(connection) }, conversation, check, sessionId);
  if (refusal !== undefined) throw refuse(method, refusal);
}

/**
 * Why a turn `caller` started in a conversation's root session would be refused at use, by the
 * checks `session/input` goes through: for work done in a caller's name without a connection
 * (a scheduled run acting for its user), so that it is held to what the caller's own input is.
 * @param server the platform, the runtime (which loads the conversation) and the confinement's view of the server
 * @returns the reason (`conversation … works in …`, `session …: agent …`), or undefined when the
 *   turn may start (always for the local owner and administrators, and in no project)
 * @throws Error when the conversation cannot be loaded, or a location check fails otherwise than by refusing
 */
export async function turnStartRefusal(caller: Caller, server: ConfinedUseServer, conversationId: string): Promise<string | undefined> {
  if (!confinedToProjects(caller) || server.platform.projects.projectOf(conversationId) === undefined) return undefined;
  const conversation = await server.runtime.getConversation(conversationId);
  return confinedUseRefusal(caller, server, conversation, TURN_START, undefined);
}

/**
 * Wraps the handlers of {@link CONFINED_USE} so each checks the conversation it names first
 * (`checkConfinedUse`); the other handlers are returned as they are.
 */
export function withConfinedUse(connection: RpcConnection, handlers: MethodHandlers): MethodHandlers {
  const wrapped: Record<string, unknown> = { ...handlers };
  for (const method of Object.keys(CONFINED_USE) as MethodName[]) {
    const handler = handlers[method] as (params: { conversationId: string; sessionId?: string }, request: unknown) => Promise<unknown>;
    wrapped[method] = async (params: { conversationId: string; sessionId?: string }, request: unknown) => {
      if (connection.platform && confinedToProjects(connection.caller)) {
        await checkConfinedUse(connection, method, await connection.runtime.getConversation(params.conversationId), params.sessionId);
      }
      return handler(params, request);
    };
  }
  return wrapped as MethodHandlers;
}

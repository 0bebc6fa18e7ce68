/**
 * Where members work, checked at use (docs/platform.md, "Where members work"): before a caller
 * held to projects acts in a project conversation — starts a turn, reads its files, opens a
 * terminal, works on its worktree, forks it, schedules a prompt — the conversation's stored
 * work location is checked again against the project's workspace, and for the methods that
 * start turns the session's agent against the project's executor. A location set before the
 * rules existed, or by an administrator, and an agent an administrator chose, are thereby held
 * to the caller's own rules, whoever set them.
 */
import { confinedToProjects, storedLocationRefusal } from '../../platform/access/workspace-confinement.js';
import { ErrorCodes, RpcError, type MethodName } from '../../protocol/index.js';
import type { LiveConversation } from '../../runtime/conversation.js';
import type { MethodHandlers } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';
import { confineAgent, confinementContext } from './project-confinement.js';

/** What a method's use of a conversation is checked for. */
interface UseCheck {
  /** The session whose agent a turn would run (`params.sessionId`, default the root session). */
  agent?: boolean;
  /** The conversation's git worktree and main checkout, which the method works in. */
  worktree?: boolean;
}

/**
 * The methods that act in a conversation's work location, or start turns there. Methods that
 * only read what is recorded (items, sessions, costs) or act on the client's machine
 * (`conversation/serveFiles`, `conversation/serveCommands`) are not listed.
 */
const CONFINED_USE: Partial<Record<MethodName, UseCheck>> = {
  'session/input': { agent: true },
  'session/compact': { agent: true },
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

/**
 * Refuses `method` on `conversation` to the connection's caller when its work location (or
 * worktree) lies where the caller may not work, or the session's agent may not run for them.
 * @throws RpcError forbidden (-32003) naming the method, the conversation, the location or agent and why
 */
async function checkConfinedUse(connection: RpcConnection, method: MethodName, conversation: LiveConversation, sessionId: string | undefined): Promise<void> {
  const check = CONFINED_USE[method];
  const platform = connection.platform;
  if (!check || !platform || !confinedToProjects(connection.caller)) return;
  const projectId = platform.projects.projectOf(conversation.id);
  const project = projectId !== undefined ? platform.projects.find(projectId) : undefined;
  // Conversations outside every project are refused to such callers by the access rules.
  if (!project) return;
  const context = confinementContext(connection);
  const location = await storedLocationRefusal(connection.caller, project, conversation.state.workLocation, `conversation ${conversation.id} works in`, context);
  if (location !== undefined) throw refuse(method, location);
  const worktree = conversation.state.worktree;
  if (check.worktree && worktree && worktree.removedAt === undefined) {
    const checkout = [{ executor: worktree.executor, cwd: worktree.repositoryRoot }];
    const refusal = await storedLocationRefusal(connection.caller, project, checkout, `the worktree of conversation ${conversation.id} belongs to the checkout`, context);
    if (refusal !== undefined) throw refuse(method, refusal);
  }
  if (check.agent) {
    const session = conversation.sessions.get(sessionId ?? conversation.state.rootSessionId);
    if (!session) return;
    confineAgent(connection, method, `session ${session.id}`, project, session.state.agent, conversation.workspaces.map((workspace) => workspace.executor));
  }
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

/**
 * `worktree/diff`, `worktree/merge`, `worktree/rebase` and `worktree/discard` (docs/protocol.md,
 * "Worktrees"), and the translation of worktree failures into protocol errors, shared with
 * `conversation/create` and `conversation/delete`.
 */
import { ErrorCodes, RpcError, type ConversationWorktree, type MethodName, type MethodParams, type MethodResult } from '../../protocol/index.js';
import type { LiveConversation } from '../../runtime/conversation.js';
import { mergeWorktree, rebaseWorktree, removeWorktree, worktreeDiff, WorktreeError } from '../../runtime/worktree-git.js';
import type { RpcConnection } from '../rpc-connection.js';

type WorktreeMethod = 'worktree/diff' | 'worktree/merge' | 'worktree/rebase' | 'worktree/discard';
/** The worktree handlers, bound to one connection. */
export type WorktreeHandlers = { [M in WorktreeMethod & MethodName]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/**
 * The protocol error for a worktree failure: bad input names `params.<field>`; refusals are
 * conflicts with their reason (a merge conflict carries `data.files`).
 * @param method the method that failed
 * @param error what was thrown; anything but a `WorktreeError` is returned unchanged
 */
export function worktreeRpcError(method: string, error: unknown): unknown {
  if (!(error instanceof WorktreeError)) return error;
  const message = `${method}: ${error.field !== undefined ? `params.${error.field}: ` : ''}${error.message}`;
  switch (error.kind) {
    case 'invalid':
      return new RpcError(error.field !== undefined ? ErrorCodes.invalidParams : ErrorCodes.conflict, message, error.field !== undefined ? undefined : { reason: 'no_worktree' });
    case 'dirty':
      return new RpcError(ErrorCodes.conflict, message, { reason: 'worktree_dirty', files: error.conflictingFiles });
    case 'conflict':
      return new RpcError(ErrorCodes.conflict, message, { reason: 'merge_conflict', files: error.conflictingFiles });
    case 'not_on_base':
      return RpcError.conflict(message, 'worktree_not_on_base');
    case 'git_unavailable':
      return RpcError.conflict(message, 'git_unavailable');
    default:
      // git failing for a reason of its own is the server's problem: logged, not shown.
      return new Error(message);
  }
}

/** Runs a worktree operation, turning its failures into protocol errors. */
async function translated<T>(method: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw worktreeRpcError(method, error);
  }
}

/** The conversation's live worktree and its executor. @throws RpcError conflict `no_worktree` */
function worktreeOf(method: string, conversation: LiveConversation): ConversationWorktree {
  const worktree = conversation.state.worktree;
  if (!worktree) throw RpcError.conflict(`${method}: conversation ${conversation.id} does not work in a git worktree (it was made without conversation/create "worktree")`, 'no_worktree');
  if (worktree.removedAt !== undefined) throw RpcError.conflict(`${method}: the worktree ${worktree.path} of conversation ${conversation.id} was discarded`, 'no_worktree');
  return worktree;
}

/**
 * Removes a conversation's worktree before `conversation/delete` deletes it: only with
 * `removeWorktree: true`; otherwise refused, naming the worktree and branch.
 * @throws RpcError conflict `worktree_present` without confirmation
 */
export async function removeWorktreeBeforeDelete(connection: RpcConnection, conversationId: string, removeConfirmed: boolean | undefined): Promise<void> {
  const method = 'conversation/delete';
  const conversation = await connection.runtime.getConversation(conversationId);
  const worktree = conversation.state.worktree;
  if (!worktree || worktree.removedAt !== undefined) return;
  if (removeConfirmed !== true) {
    throw RpcError.conflict(`${method}: conversation ${conversationId} works in the git worktree ${worktree.path} (branch ${worktree.branch}) on executor "${worktree.executor}"; pass params.removeWorktree: true to remove the worktree and its branch with the conversation`, 'worktree_present');
  }
  const executor = connection.runtime.findExecutor(worktree.executor);
  if (!executor) throw RpcError.conflict(`${method}: executor "${worktree.executor}" of the worktree ${worktree.path} is no longer configured`, 'no_worktree');
  await translated(method, () => removeWorktree(executor, worktree));
}

/** Builds the worktree handlers of one connection. */
export function createWorktreeHandlers(connection: RpcConnection): WorktreeHandlers {
  const runtime = connection.runtime;
  async function target(method: string, conversationId: string) {
    const conversation = await runtime.getConversation(conversationId);
    const worktree = worktreeOf(method, conversation);
    const executor = runtime.findExecutor(worktree.executor);
    if (!executor) throw RpcError.conflict(`${method}: executor "${worktree.executor}" of the worktree ${worktree.path} is no longer configured`, 'no_worktree');
    return { conversation, worktree, executor };
  }
  /** As `target`, for the methods that change the worktree: not while the agent may be writing in it. */
  async function idleTarget(method: string, conversationId: string) {
    const found = await target(method, conversationId);
    if (found.conversation.isBusy) throw RpcError.conflict(`${method}: a turn is running in conversation ${conversationId}; interrupt it or wait for turn/completed`, 'turn_running');
    return found;
  }
  return {
    async 'worktree/diff'(params) {
      const method = 'worktree/diff';
      const { worktree, executor } = await target(method, params.conversationId);
      const diff = await translated(method, () => worktreeDiff(executor, worktree));
      return { ...(worktree.baseBranch !== undefined ? { baseBranch: worktree.baseBranch } : {}), ...diff };
    },

    async 'worktree/merge'(params) {
      const method = 'worktree/merge';
      const { conversation, worktree, executor } = await idleTarget(method, params.conversationId);
      const message = params.message ?? `Merge ${worktree.branch} (${conversation.state.title})`;
      return translated(method, () => mergeWorktree(executor, worktree, message));
    },

    async 'worktree/rebase'(params) {
      const method = 'worktree/rebase';
      const { worktree, executor } = await idleTarget(method, params.conversationId);
      return translated(method, () => rebaseWorktree(executor, worktree));
    },

    async 'worktree/discard'(params) {
      const method = 'worktree/discard';
      const { conversation, worktree, executor } = await idleTarget(method, params.conversationId);
      await translated(method, () => removeWorktree(executor, worktree));
      return { conversation: await conversation.update({ worktree: { ...worktree, removedAt: Date.now() } }) };
    },
  };
}

/**
 * Handlers of the conversation lifecycle methods (SPEC §5; docs/protocol.md): delete,
 * archive, unarchive, fork, rewind, and the live conversation list feed.
 */
import type { MethodName, MethodParams, MethodResult } from '../../protocol/index.js';
import { deleteConversation, forkConversation, rewindSession, setArchived } from '../../runtime/lifecycle.js';
import type { RequestContext } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';
import { removeWorktreeBeforeDelete } from './worktrees.js';

type LifecycleMethod = 'conversation/delete' | 'conversation/archive' | 'conversation/unarchive' | 'conversation/fork' | 'conversation/rewind' | 'conversations/subscribe' | 'conversations/unsubscribe';

/** The lifecycle handlers, by method. */
export type LifecycleHandlers = { [M in LifecycleMethod & MethodName]: (params: MethodParams<M>, request: RequestContext) => Promise<MethodResult<M>> };

/** Builds the lifecycle handlers bound to one connection. */
export function createLifecycleHandlers(connection: RpcConnection): LifecycleHandlers {
  const runtime = connection.runtime;
  /** Ends this connection's list feed; set while it is on. */
  let stopFeed: (() => void) | undefined;
  return {
    async 'conversation/delete'(params) {
      await removeWorktreeBeforeDelete(connection, params.conversationId, params.removeWorktree);
      await deleteConversation(runtime, params.conversationId);
      // What the platform keeps of it goes with it (read markers, project binding).
      await connection.platform?.userState.forgetConversation(params.conversationId);
      await connection.platform?.projects.unbindConversation(params.conversationId);
      return { conversationId: params.conversationId };
    },

    async 'conversation/archive'(params) {
      return { conversation: await setArchived(runtime, params.conversationId, true) };
    },

    async 'conversation/unarchive'(params) {
      return { conversation: await setArchived(runtime, params.conversationId, false) };
    },

    async 'conversation/fork'(params) {
      // A fork stays in its source's project (and so with the same members).
      const projectId = connection.platform?.projects.projectOf(params.conversationId);
      const fork = await forkConversation(runtime, params, projectId);
      if (projectId !== undefined) await connection.platform?.projects.bindConversation(fork.id, projectId);
      return { conversation: fork.state, session: fork.rootSession.state };
    },

    async 'conversation/rewind'(params) {
      return rewindSession(runtime, params);
    },

    async 'conversations/subscribe'() {
      if (stopFeed) return {};
      // Every change goes to the connection, whose notification path filters it by the caller's access.
      const unsubscribe = runtime.conversationFeed.subscribe((event) => connection.notify(event), () => true);
      const cancel = connection.onDispose(() => unsubscribe());
      stopFeed = () => {
        unsubscribe();
        cancel();
        stopFeed = undefined;
      };
      return {};
    },

    async 'conversations/unsubscribe'() {
      stopFeed?.();
      return {};
    },
  };
}

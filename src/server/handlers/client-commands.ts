/**
 * `conversation/serveCommands`: a client declares that it runs a conversation's commands
 * (protocol `client-commands.ts`); `exec_command` then runs through the server-to-client
 * requests `client/terminal/run` and `client/terminal/kill` sent to it.
 */
import type { MethodHandlers } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';

/**
 * The client-command handlers bound to one connection. What a connection serves ends when it
 * calls again with `run` false, or when it closes.
 * @returns `conversation/serveCommands`, which answers -32004 for an unknown conversation
 */
export function createClientCommandHandlers(connection: RpcConnection): Pick<MethodHandlers, 'conversation/serveCommands'> {
  /** Per conversation, the function that withdraws what this connection serves. */
  const served = new Map<string, () => void>();
  return {
    async 'conversation/serveCommands'({ conversationId, run }) {
      const conversation = await connection.runtime.getConversation(conversationId);
      served.get(conversationId)?.();
      served.delete(conversationId);
      if (!run) return {};
      const detach = conversation.clientCommands.attach({
        run: (request) => connection.askClient('client/terminal/run', { conversationId, ...request }),
        kill: async (request) => {
          await connection.askClient('client/terminal/kill', { conversationId, ...request });
        },
      });
      const cancelOnClose = connection.onDispose(detach);
      served.set(conversationId, () => {
        detach();
        cancelOnClose();
      });
      return {};
    },
  };
}

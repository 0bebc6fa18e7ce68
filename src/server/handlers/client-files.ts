/**
 * `conversation/serveFiles`: a client declares that it serves a conversation's text files
 * (protocol `client-files.ts`); the conversation's tools then read and write through the
 * server-to-client requests `client/fs/readTextFile` and `client/fs/writeTextFile` sent to it.
 */
import type { MethodHandlers } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';

/**
 * The client-file handlers bound to one connection. What a connection serves ends when it calls
 * again with both `read` and `write` false, or when it closes.
 * @returns `conversation/serveFiles`, which answers -32004 for an unknown conversation
 */
export function createClientFileHandlers(connection: RpcConnection): Pick<MethodHandlers, 'conversation/serveFiles'> {
  /** Per conversation, the function that withdraws what this connection serves. */
  const served = new Map<string, () => void>();
  return {
    async 'conversation/serveFiles'({ conversationId, read, write }) {
      const conversation = await connection.runtime.getConversation(conversationId);
      served.get(conversationId)?.();
      served.delete(conversationId);
      if (!read && !write) return {};
      const detach = conversation.clientFiles.attach({
        read,
        write,
        readTextFile: async ({ sessionId, path }) => (await connection.askClient('client/fs/readTextFile', { conversationId, sessionId, path })).content,
        writeTextFile: async ({ sessionId, path, content }) => {
          await connection.askClient('client/fs/writeTextFile', { conversationId, sessionId, path, content });
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

/**
 * The runtime's reads and writes of text files done by the editor: `client/fs/readTextFile` and
 * `client/fs/writeTextFile` (protocol `conversation/serveFiles`) as ACP's `fs/read_text_file` and
 * `fs/write_text_file` (https://agentclientprotocol.com/protocol/v1/file-system), so the agent
 * sees the editor's buffers, saved or not.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { RuntimeClient } from '../../client/runtime-client.js';

/**
 * Answers the runtime's file requests through the editor (the ACP session id is the conversation id).
 * @param editor the editor connection; throws when none is connected, which fails the request
 */
export function handleFileRequests(runtime: RuntimeClient, editor: () => acp.AgentContext): void {
  runtime.handleServerRequest('client/fs/readTextFile', async ({ conversationId, path }) => {
    const { content } = await editor().request('fs/read_text_file', { sessionId: conversationId, path });
    return { content };
  });
  runtime.handleServerRequest('client/fs/writeTextFile', async ({ conversationId, path, content }) => {
    await editor().request('fs/write_text_file', { sessionId: conversationId, path, content });
    return {};
  });
}

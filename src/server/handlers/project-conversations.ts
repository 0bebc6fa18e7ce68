/**
 * The conversation list as a caller sees it (docs/platform.md, "Members and access"): only
 * the conversations of projects the caller reaches, each with its project and whether it
 * changed since the caller last read it.
 */
import type { ConversationSummary } from '../../protocol/index.js';
import { stateOwner } from '../../platform/settings/user-state.js';
import type { RpcConnection } from '../rpc-connection.js';

/**
 * A `conversation/list` page narrowed to what the caller may see. A page may hold fewer than
 * `limit` conversations; `nextCursor` still continues after the last one the index returned.
 */
export async function listForCaller<T extends { conversations: ConversationSummary[] }>(connection: RpcConnection, page: T): Promise<T> {
  const platform = connection.platform;
  if (!platform) return page;
  const visible = page.conversations.filter((summary) => platform.access.mayReadConversation(connection.caller, summary.id));
  const readTimes = await platform.userState.readTimes(stateOwner(connection.caller), visible.map((summary) => summary.id));
  const conversations = visible.map((summary) => {
    const projectId = platform.projects.projectOf(summary.id);
    const readAt = readTimes.get(summary.id);
    return { ...summary, ...(projectId !== undefined ? { projectId } : {}), unread: readAt === undefined || summary.updatedAt > readAt };
  });
  return { ...page, conversations };
}

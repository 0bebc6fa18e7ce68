/**
 * The conversation list feed (`conversations/subscribe`) across the servers of a cluster
 * (docs/deployment.md, "Several servers on PostgreSQL"): each change of the conversation index
 * a server makes is announced on the cluster channel (`NOTIFY`), and each server tells its own
 * list subscribers about the changes the others announced. A change too large for a notice is
 * announced by id and read back from the shared database by the receivers.
 */
import { summarize, type ConversationIndexChange } from '../../dao/conversation-store.js';
import type { Runtime } from '../../runtime/runtime.js';
import { SerialQueue } from '../../runtime/serial-queue.js';
import type { ClusterNotice, ConversationOwnership } from './conversation-ownership.js';

/**
 * Announces this server's index changes to the other servers.
 * @returns the function that stops it
 */
export function announceListChanges(runtime: Runtime, ownership: ConversationOwnership, logger: { warn(details: object, message: string): void }): () => void {
  return runtime.store.onIndexChange((change) => {
    const send = async (): Promise<void> => {
      if (await ownership.announce({ event: 'conversation-changed', change })) return;
      const conversationId = change.kind === 'deleted' ? change.conversationId : change.conversation.id;
      await ownership.announce({ event: 'conversation-changed', conversationId, kind: change.kind });
    };
    send().catch((error: unknown) => logger.warn({ error: (error as Error).message }, 'could not announce a conversation list change to the other servers'));
  });
}

/** A list change another server announced. */
export type ListChangeNotice = Extract<ClusterNotice, { event: 'conversation-changed' }>;

/** What receiving list changes needs of the runtime. */
export type ListChangeTarget = Pick<Runtime, 'store' | 'conversationFeed'>;

/**
 * Makes the function that tells this server's list subscribers about the changes other
 * servers announce, in the order they are given to it.
 * @returns the receiver; it rejects when a change announced by id cannot be read from the database
 */
export function createListChangeReceiver(runtime: ListChangeTarget): (notice: ListChangeNotice) => Promise<void> {
  // One after another: a change read back by id finishes after the notices behind it, and
  // published late it would undo them (a deleted conversation put back in the lists).
  const queue = new SerialQueue();
  return (notice) => queue.run(() => receiveListChange(runtime, notice));
}

/**
 * Tells this server's list subscribers about a change another server announced.
 * @throws Error when a change announced by id cannot be read from the database
 */
async function receiveListChange(runtime: ListChangeTarget, notice: ListChangeNotice): Promise<void> {
  if ('change' in notice) {
    runtime.conversationFeed.publish(notice.change);
    return;
  }
  if (notice.kind === 'deleted') {
    runtime.conversationFeed.publish({ kind: 'deleted', conversationId: notice.conversationId, summary: undefined });
    return;
  }
  const state = await runtime.store.loadConversation(notice.conversationId);
  if (!state) return;
  const change: ConversationIndexChange = { kind: notice.kind, conversation: state.conversation, summary: summarize(state) };
  runtime.conversationFeed.publish(change);
}

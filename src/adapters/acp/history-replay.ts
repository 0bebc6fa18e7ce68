/**
 * The stored history of a session as `session/load` replays it to the editor: the items up to
 * the seq where the bridge's subscription began (later ones arrive as live events).
 */
import type { RuntimeClient } from '../../client/runtime-client.js';
import type { Item } from '../../protocol/index.js';

/** Items listed per `items/list` page while replaying. */
const REPLAY_PAGE = 500;

/**
 * The items of one session, oldest first, whose seq is at most `head`; read in pages of
 * {@link REPLAY_PAGE} with `items/list`.
 * @param head the seq of the session's last stored item when the subscription began
 * @throws RuntimeClientError when the server refuses a page (the conversation is gone, …)
 */
export async function* storedItemsUpTo(runtime: RuntimeClient, conversationId: string, sessionId: string, head: number): AsyncGenerator<Item> {
  let cursor: number | undefined;
  for (;;) {
    const page = await runtime.request('items/list', { conversationId, sessionId, direction: 'forward', limit: REPLAY_PAGE, ...(cursor !== undefined ? { cursor } : {}) });
    for (const { seq, item } of page.items) {
      if (seq > head) return;
      yield item;
    }
    const last = page.items.at(-1)?.seq;
    if (page.nextCursor === undefined || last === undefined || last >= head) return;
    cursor = page.nextCursor;
  }
}

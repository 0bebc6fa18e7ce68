/**
 * An opening of a conversation that finishes after the conversation was taken out of the
 * table (it is being deleted) must not put its result back, nor remove the opening that
 * replaced it. It used to do both: the copy handed to the deletion (and shut down) came back
 * into the open conversations in place of the fresh one, and a failed old opening made the
 * next request open a second live copy of a conversation already open.
 *
 * The openings are held by hand, so each interleaving is exact; the conversations are plain
 * stand-ins, since the table only keeps, hands out and shuts down what `open` gives it.
 */
import { expect, it } from 'vitest';
import type { LiveConversation } from '../../src/runtime/conversation.js';
import { OpenConversations } from '../../src/runtime/open-conversations.js';

/** A stand-in live conversation: what the table reads of one. */
interface StandIn {
  id: string;
  copy: number;
  shutDown: boolean;
  isEvictable: boolean;
  historyChars: number;
  shutdown(): Promise<void>;
}

/** A table whose every opening waits until the test settles it. */
function heldTable(): {
  table: OpenConversations;
  openings: { conversationId: string; resolve: () => StandIn; reject: (error: Error) => void }[];
} {
  const openings: { conversationId: string; resolve: () => StandIn; reject: (error: Error) => void }[] = [];
  const table = new OpenConversations({
    open: (conversationId) =>
      new Promise<LiveConversation>((resolve, reject) => {
        const copy = openings.length + 1;
        openings.push({
          conversationId,
          resolve: () => {
            const live: StandIn = {
              id: conversationId,
              copy,
              shutDown: false,
              isEvictable: true,
              historyChars: 0,
              shutdown: async () => {
                live.shutDown = true;
              },
            };
            resolve(live as unknown as LiveConversation);
            return live;
          },
          reject,
        });
      }),
    bounds: () => ({ maxIdleOpenConversations: 16, maxIdleHistoryChars: 1_000_000, idleConversationMs: 3_600_000 }),
  });
  return { table, openings };
}

const copies = (table: OpenConversations): number[] => [...table.values()].map((live) => (live as unknown as StandIn).copy);

it('an opening that finishes after the conversation was taken does not replace the copy opened since', async () => {
  const { table, openings } = heldTable();
  const first = table.get('conv_1');
  const taken = table.take('conv_1');
  const second = table.get('conv_1');
  expect(openings).toHaveLength(2);
  const [old, fresh] = openings as [(typeof openings)[0], (typeof openings)[0]];
  fresh.resolve();
  await second;
  old.resolve();
  expect(await first).toMatchObject({ copy: 1 });
  expect(await taken).toMatchObject({ copy: 1 });
  expect(copies(table)).toEqual([2]);
  expect(await table.get('conv_1')).toMatchObject({ copy: 2 });
  // The idle pass closes the copy in use, not the one the deletion already shut down.
  expect(await table.evictIdle(Date.now() + 3_600_000)).toEqual(['conv_1']);
  expect((await second as unknown as StandIn).shutDown).toBe(true);
  expect(table.size).toBe(0);
});

it('an opening that finishes after the conversation was taken does not come back into the table', async () => {
  const { table, openings } = heldTable();
  const first = table.get('conv_1');
  const taken = table.take('conv_1');
  openings[0]?.resolve();
  expect(await first).toMatchObject({ copy: 1 });
  expect(await taken).toMatchObject({ copy: 1 });
  expect(table.size).toBe(0);
  expect(copies(table)).toEqual([]);
});

it('a failed opening of a taken conversation does not drop the opening that replaced it', async () => {
  const { table, openings } = heldTable();
  const first = table.get('conv_1');
  const taken = table.take('conv_1');
  const second = table.get('conv_1');
  openings[0]?.reject(new Error('storage went away'));
  await expect(first).rejects.toThrow('storage went away');
  expect(await taken).toBeUndefined();
  const third = table.get('conv_1');
  // The opening in progress is shared: no second live copy of the same conversation.
  expect(openings).toHaveLength(2);
  openings[1]?.resolve();
  expect(await third).toBe(await second);
  expect(copies(table)).toEqual([2]);
});

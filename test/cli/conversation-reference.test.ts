/**
 * How commands name a conversation (`exec --resume`, `export`, `conversations show`): an id,
 * a unique prefix of one, or `last`; an ambiguous or unknown reference is a usage error that
 * says what to do.
 */
import { afterEach, expect, it } from 'vitest';
import { resolveConversationId } from '../../src/cli/conversation-reference.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let server: InProcessServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

it('resolves an id, a unique prefix, last, and refuses an ambiguous prefix or an unknown id', async () => {
  server = await startInProcessServer('responses: []\n');
  const { client } = server;
  await expect(resolveConversationId(client, 'last')).rejects.toThrow(/there is no conversation yet/);
  await expect(resolveConversationId(client, 'last', { archived: true })).rejects.toThrow(/there is no archived conversation/);
  const first = await server.conversation();
  const second = await server.conversation();
  await client.request('conversation/archive', { conversationId: first });
  expect(await resolveConversationId(client, first)).toBe(first);
  expect(await resolveConversationId(client, 'last')).toBe(second);
  // `unarchive last` means the archived one.
  expect(await resolveConversationId(client, 'last', { archived: true })).toBe(first);
  // ULIDs made in one millisecond share a long prefix: take the shortest one that tells them apart.
  let length = 5;
  while (first.slice(0, length) === second.slice(0, length)) length += 1;
  // An archived conversation is found by its prefix too.
  expect(await resolveConversationId(client, first.slice(0, length + 1))).toBe(first);
  expect(await resolveConversationId(client, second.slice(0, length + 1))).toBe(second);
  const ambiguous = await resolveConversationId(client, 'conv_').catch((error: unknown) => error);
  expect(ambiguous).toBeInstanceOf(UsageError);
  expect((ambiguous as Error).message).toBe(`"conv_" fits several conversations (${[second, first].join(', ')}); give more of the id`);
  await expect(resolveConversationId(client, 'conv_zzzz')).rejects.toThrow('there is no conversation "conv_zzzz" (list them with: openvaala conversations)');
});

/**
 * How commands name a conversation: its id, a unique prefix of its id, or `last` for the most
 * recently updated one (any working directory).
 */
import { RuntimeClientError, type RuntimeClient } from '../client/runtime-client.js';
import { ErrorCodes } from '../protocol/error-codes.js';
import { UsageError } from './usage-error.js';

/** A whole conversation id (the protocol's `conversationId` param rule). */
const CONVERSATION_ID = /^conv_[0-9A-Za-z]{1,64}$/;

/** Conversations listed per page while looking for a prefix. */
const PREFIX_PAGE = 500;

/** The ids of every listed conversation (archived ones too) starting with `prefix`, at most 2 are needed to tell. */
async function idsWithPrefix(client: RuntimeClient, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for (const archived of [false, true]) {
    for (let cursor: string | undefined; ; ) {
      const page = await client.request('conversation/list', { limit: PREFIX_PAGE, sort: 'created', ...(archived ? { archived: true } : {}), ...(cursor ? { cursor } : {}) });
      for (const conversation of page.conversations) if (conversation.id.startsWith(prefix) && !found.includes(conversation.id)) found.push(conversation.id);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
  }
  return found;
}

/**
 * Turns `last`, an id or a unique id prefix into an existing conversation's id. An id or a
 * prefix finds archived conversations too; `last` is the most recently updated one of those
 * the conversation list shows (archived ones are left out of it).
 * @param options.archived `last` means the most recently updated archived conversation instead
 *   (what `conversations unarchive last` brings back: archiving updates a conversation)
 * @throws UsageError when there is no conversation yet, none with that id or prefix, or the prefix fits several
 */
export async function resolveConversationId(client: RuntimeClient, reference: string, options: { archived?: boolean } = {}): Promise<string> {
  if (reference === 'last') {
    const [latest] = (await client.request('conversation/list', { limit: 1, ...(options.archived ? { archived: true } : {}) })).conversations;
    if (!latest) throw new UsageError(options.archived ? 'there is no archived conversation (archive one with: openvaala conversations archive <id>)' : 'there is no conversation yet to continue (start one with: openvaala exec "…")');
    return latest.id;
  }
  // Only a well-formed id is asked for; anything else can only be a prefix.
  if (CONVERSATION_ID.test(reference)) {
    try {
      await client.request('conversation/get', { conversationId: reference });
      return reference;
    } catch (error) {
      if (!(error instanceof RuntimeClientError && (error.code === ErrorCodes.notFound || error.code === ErrorCodes.invalidParams))) throw error;
    }
  }
  const matches = reference.length > 0 ? await idsWithPrefix(client, reference) : [];
  if (matches.length === 1) return matches[0] as string;
  if (matches.length > 1) throw new UsageError(`"${reference}" fits several conversations (${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}); give more of the id`);
  throw new UsageError(`there is no conversation "${reference}" (list them with: openvaala conversations)`);
}

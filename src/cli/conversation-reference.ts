/**
 * How commands name a conversation: its id, or `last` for the most recently updated one
 * (any working directory).
 */
import { RuntimeClientError, type RuntimeClient } from '../client/runtime-client.js';
import { ErrorCodes } from '../protocol/error-codes.js';
import { UsageError } from './usage-error.js';

/**
 * Turns `last` or an id into an existing conversation's id.
 * @throws UsageError when there is no conversation yet, or none with that id
 */
export async function resolveConversationId(client: RuntimeClient, reference: string): Promise<string> {
  if (reference === 'last') {
    const [latest] = (await client.request('conversation/list', { limit: 1 })).conversations;
    if (!latest) throw new UsageError('there is no conversation yet to continue (start one with: openvaala exec "…")');
    return latest.id;
  }
  try {
    await client.request('conversation/get', { conversationId: reference });
  } catch (error) {
    if (error instanceof RuntimeClientError && (error.code === ErrorCodes.notFound || error.code === ErrorCodes.invalidParams)) {
      throw new UsageError(`there is no conversation "${reference}" (list them with: openvaala conversations)`);
    }
    throw error;
  }
  return reference;
}

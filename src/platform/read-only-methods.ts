/**
 * Protocol methods that change nothing (SPEC §5, §9): the only ones a read-only API token may
 * call. A method missing here is refused to such a token, so a new method is safe by default.
 * Subscriptions count as reading: they only deliver events.
 */
const READ_ONLY_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'server/status',
  'config/get',
  'agents/list',
  'models/list',
  'executors/list',
  'conversation/list',
  'conversation/get',
  'conversation/subscribe',
  'conversation/unsubscribe',
  'conversations/subscribe',
  'conversations/unsubscribe',
  'items/list',
  'session/list',
  'session/usage',
  'fs/list',
  'fs/read',
  'fs/stat',
  'workspace/gitLog',
  'workspace/gitShow',
  'account/get',
  'account/sessions/list',
  'account/tokens/list',
  'users/list',
  'conversation/export',
  'projects/list',
  'projects/members/list',
  'projects/secrets/list',
  'settings/get',
]);

/** Whether `method` only reads (a read-only API token may call it). */
export function isReadOnlyMethod(method: string): boolean {
  return READ_ONLY_METHODS.has(method);
}

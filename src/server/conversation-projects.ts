/**
 * The project of a conversation as clients see it (docs/platform.md, "Members and access"):
 * every result and notification that carries a conversation (and a list summary) carries the
 * `projectId` of the project it is bound to in `platform.db`, the one `conversation/list` shows
 * and access is checked against. The runtime's stored conversation may lack it (a fork made
 * before forks kept it) or name a project it is not bound to here (an imported archive).
 */
import type { AnyNotification } from '../protocol/index.js';

/** The project a conversation is bound to, or undefined for one outside every project. */
export type ProjectOf = (conversationId: string) => string | undefined;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `entity` (a conversation or summary) with `projectId` set to `projectId`, or the same object when it already says so. */
function withProject(entity: Record<string, unknown>, projectId: string | undefined): Record<string, unknown> {
  if (entity.projectId === projectId) return entity;
  const { projectId: _stored, ...rest } = entity;
  return projectId === undefined ? rest : { ...rest, projectId };
}

/**
 * A result or notification params with its `conversation` and `summary` showing the binding.
 * @param payload a method result or notification params (not changed)
 * @param projectOf the binding
 * @param keepUnbound keep a `projectId` the conversation itself names when it is not bound
 *   (yet): a notification may go out between a conversation's creation and its binding
 * @returns the same object when nothing changes
 */
export function withConversationProject<T>(payload: T, projectOf: ProjectOf, keepUnbound = false): T {
  if (!isRecord(payload)) return payload;
  let changed: Record<string, unknown> | undefined;
  // A summary sent with its conversation (the list feed) shows what the conversation names.
  const named = isRecord(payload.conversation) && typeof payload.conversation.projectId === 'string' ? payload.conversation.projectId : undefined;
  for (const key of ['conversation', 'summary'] as const) {
    const entity = payload[key];
    if (!isRecord(entity) || typeof entity.id !== 'string') continue;
    const own = typeof entity.projectId === 'string' ? entity.projectId : named;
    const projectId = projectOf(entity.id) ?? (keepUnbound ? own : undefined);
    const shown = withProject(entity, projectId);
    if (shown !== entity) (changed ??= { ...payload })[key] = shown;
  }
  return (changed ?? payload) as T;
}

const shownNotifications = new WeakMap<AnyNotification, AnyNotification>();

/**
 * A notification with its conversation's project (see {@link withConversationProject}). The
 * answer does not depend on the caller, so it is made once per event and shared by every
 * connection (their JSON too).
 */
export function notificationWithProject(event: AnyNotification, projectOf: ProjectOf): AnyNotification {
  const known = shownNotifications.get(event);
  if (known) return known;
  const params = withConversationProject(event.params, projectOf, true);
  const shown = params === event.params ? event : ({ method: event.method, params } as AnyNotification);
  shownNotifications.set(event, shown);
  return shown;
}

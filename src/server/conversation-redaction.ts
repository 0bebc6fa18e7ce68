/**
 * What clients see of a conversation: its own MCP servers (`conversation/create` `mcpServers`)
 * with literal `env` and `headers` values replaced by `"***"`, as `config/get` shows `mcp.yaml`.
 * `env:NAME` references stay visible. The runtime keeps and uses the real values; only what
 * leaves the server is redacted, by {@link redactOutgoing} on every result and notification.
 */
import type { AnyNotification, Conversation } from '../protocol/index.js';
import { hideSecretValues } from './config-service.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hideValues(values: unknown): unknown {
  if (!isRecord(values)) return values;
  return hideSecretValues(Object.fromEntries(Object.entries(values).map(([key, value]) => [key, String(value)])));
}

/**
 * A conversation as clients see it: each of its own MCP servers keeps its keys, with `env` and
 * `headers` literal values replaced by `"***"` (`env:NAME` references kept).
 * @param conversation the conversation as the runtime holds it (not changed)
 */
export function redactConversation(conversation: Conversation): Conversation {
  if (conversation.mcpServers === undefined) return conversation;
  const mcpServers = Object.fromEntries(
    Object.entries(conversation.mcpServers).map(([name, server]) => [
      name,
      {
        ...server,
        ...(server.env !== undefined ? { env: hideValues(server.env) } : {}),
        ...(server.headers !== undefined ? { headers: hideValues(server.headers) } : {}),
      },
    ]),
  );
  return { ...conversation, mcpServers };
}

/**
 * A result or notification params as it may leave the server: when it carries a
 * `conversation` (the results of `conversation/create`, `conversation/update`,
 * `conversation/get`, `conversation/subscribe`, the `conversation/updated` notification, and
 * any other that does), that conversation redacted by {@link redactConversation}.
 * @param payload a method result or notification params (not changed)
 */
export function redactOutgoing<T>(payload: T): T {
  if (!isRecord(payload) || !isRecord(payload.conversation) || payload.conversation.mcpServers === undefined) return payload;
  return { ...payload, conversation: redactConversation(payload.conversation as Conversation) };
}

/**
 * A notification as it may leave the server: the same object when it carries no conversation
 * with MCP servers (so its JSON, computed once, is shared by every connection), otherwise a copy
 * with the conversation redacted (see `redactOutgoing`).
 */
export function redactOutgoingNotification(event: AnyNotification): AnyNotification {
  const params = redactOutgoing(event.params);
  return params === event.params ? event : ({ method: event.method, params } as AnyNotification);
}

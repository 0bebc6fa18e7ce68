/**
 * OpenVaala items and events as Agent Client Protocol `session/update`s
 * (https://agentclientprotocol.com/protocol/v1/prompt-turn#3-agent-reports-output): message and
 * thought chunks, tool calls, plans and context usage. The same translation serves live events
 * and the history replayed by `session/load`.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { AnyNotification, Item, NotificationParams, PlanStep } from '../../protocol/index.js';
import { contentBlock } from './content.js';
import { toolCallEnd, toolCallStart } from './tool-calls.js';

/** What the translation needs to know of the connection. */
export interface UpdateContext {
  /** Absolute working directory of the conversation's default executor (file changes are relative to it). */
  root: string;
  /** Whether a user message was sent by this adapter (its `clientMessageId`): the editor shows those already. */
  isOwnInput(clientMessageId: string | undefined): boolean;
  /** Items whose text arrived as `item/delta`s, so their completion does not repeat it. */
  streamed: Set<string>;
}

/** A plan's steps as ACP plan entries (OpenVaala steps have no priority; all are `medium`). */
export function planUpdate(steps: PlanStep[]): acp.SessionUpdate {
  return { sessionUpdate: 'plan', entries: steps.map((step) => ({ content: step.step, priority: 'medium', status: step.status })) };
}

/**
 * The updates a stored item gives. `replay`: the item is history sent by `session/load`, shown
 * whole (every user message, every tool call announced with its final state); otherwise it has
 * just completed live, and only what the live events did not already show is sent.
 */
export function itemUpdates(item: Item, context: UpdateContext, replay: boolean): acp.SessionUpdate[] {
  switch (item.kind) {
    case 'user_message':
      if (!replay && context.isOwnInput(item.clientMessageId)) return [];
      return item.content.map((part) => ({ sessionUpdate: 'user_message_chunk', content: contentBlock(part), messageId: item.id }));
    case 'assistant_message':
      if (!replay && context.streamed.delete(item.id)) return [];
      return item.text ? [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: item.text }, messageId: item.id }] : [];
    case 'reasoning': {
      if (!replay && context.streamed.delete(item.id)) return [];
      const text = item.summary || item.rawText || '';
      return text ? [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text }, messageId: item.id }] : [];
    }
    case 'tool_call':
      if (!replay) return [toolCallEnd(item, context.root)];
      return [toolCallStart(item.id, item, context.root, 'in_progress'), toolCallEnd(item, context.root)];
    case 'plan':
      // Live plans come with `plan/updated`.
      return replay ? [planUpdate(item.steps)] : [];
    case 'model_error':
      return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n\nModel error (${item.model}${item.httpStatus !== null ? `, HTTP ${item.httpStatus}` : ''}): ${item.message}` }, messageId: item.id }];
    default:
      // Approvals, interruptions, model and agent changes, instructions, hooks, summaries and
      // messages between sessions have no ACP update of their own.
      return [];
  }
}

/** The usage update of a model call, when the model's context window is known (ACP requires its size). */
export function usageUpdate(params: NotificationParams<'session/usage'>): acp.SessionUpdate | undefined {
  if (params.contextWindow === undefined) return undefined;
  return {
    sessionUpdate: 'usage_update',
    used: params.contextTokens,
    size: params.contextWindow,
    ...(params.costUsd !== undefined ? { cost: { amount: params.costUsd, currency: 'USD' } } : {}),
  };
}

/**
 * The updates of a live event of a conversation's root session (the caller filters by session):
 * streamed text as chunks, a starting tool call, a completed item, a new plan, usage.
 */
export function eventUpdates(event: AnyNotification, context: UpdateContext): acp.SessionUpdate[] {
  switch (event.method) {
    case 'item/started': {
      if (event.params.kind !== 'tool_call') return [];
      const partial = event.params.partial as { toolName?: string; arguments?: unknown; details?: Parameters<typeof toolCallStart>[1]['details'] };
      return [toolCallStart(event.params.itemId, { toolName: partial.toolName ?? 'tool', arguments: partial.arguments, details: partial.details }, context.root, 'in_progress')];
    }
    case 'item/delta': {
      const { delta, itemId, kind } = event.params;
      if (kind === 'assistant_message' && delta.text) {
        context.streamed.add(itemId);
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: delta.text }, messageId: itemId }];
      }
      const thought = delta.reasoning ?? delta.reasoningRaw;
      if (kind === 'reasoning' && thought) {
        context.streamed.add(itemId);
        return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: thought }, messageId: itemId }];
      }
      return [];
    }
    case 'item/completed':
      return itemUpdates(event.params.item, context, false);
    case 'plan/updated':
      return [planUpdate(event.params.steps)];
    case 'session/usage': {
      const update = usageUpdate(event.params);
      return update ? [update] : [];
    }
    default:
      return [];
  }
}

/** The session an event belongs to, for those tied to one session. */
export function eventSessionId(event: AnyNotification): string | undefined {
  const params = event.params as { sessionId?: unknown; item?: { sessionId?: unknown } };
  if (typeof params.sessionId === 'string') return params.sessionId;
  if (typeof params.item?.sessionId === 'string') return params.item.sessionId;
  return undefined;
}

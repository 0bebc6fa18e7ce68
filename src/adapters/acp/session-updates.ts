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
  /** Output of running tool calls so far, by item id (ACP replaces a call's content as a whole). */
  outputs: Map<string, string>;
  /** Editor terminals embedded in running tool calls, by item id (their updates keep showing them). */
  terminals?: Map<string, string>;
  /** Whether the editor shows `notice` updates (`clientCapabilities.session.notices`). */
  notices: boolean;
}

/** Most output of a running call shown in its live content, characters (its tail). */
const LIVE_OUTPUT_CHARACTERS = 64 * 1024;

/** A notice, when the editor shows them. */
function notice(context: UpdateContext, severity: 'info' | 'warning', title: string, description?: string): acp.SessionUpdate[] {
  return context.notices ? [{ sessionUpdate: 'notice', severity, title, ...(description ? { description } : {}) }] : [];
}

/** A plan's steps as ACP plan entries (OpenVaala steps have no priority; all are `medium`). */
export function planUpdate(steps: PlanStep[]): acp.SessionUpdate {
  return { sessionUpdate: 'plan', entries: steps.map((step) => ({ content: step.step, priority: 'medium', status: step.status })) };
}

/**
 * The chunk that ends text the provider's stream cut off (a `failed` answer or reasoning, which
 * the turn retried or failed with): ACP has no way to take streamed text back, and an editor
 * joining chunks would otherwise show the cut-off part run into the retried answer.
 */
function cutOffMark(item: Item, sessionUpdate: 'agent_message_chunk' | 'agent_thought_chunk'): acp.SessionUpdate[] {
  return item.status === 'failed' ? [{ sessionUpdate, content: { type: 'text', text: ' [cut off]\n\n' }, messageId: item.id }] : [];
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
      if (!replay && context.streamed.delete(item.id)) return cutOffMark(item, 'agent_message_chunk');
      return item.text ? [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: item.text }, messageId: item.id }, ...cutOffMark(item, 'agent_message_chunk')] : [];
    case 'reasoning': {
      if (!replay && context.streamed.delete(item.id)) return cutOffMark(item, 'agent_thought_chunk');
      const text = item.summary || item.rawText || '';
      return text ? [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text }, messageId: item.id }, ...cutOffMark(item, 'agent_thought_chunk')] : [];
    }
    case 'tool_call':
      context.outputs.delete(item.id);
      if (!replay) {
        const terminalShown = context.terminals?.delete(item.id) ?? false;
        return [toolCallEnd(item, context.root, terminalShown)];
      }
      return [toolCallStart(item.id, item, context.root, 'in_progress'), toolCallEnd(item, context.root)];
    case 'plan':
      // Live plans come with `plan/updated`.
      return replay ? [planUpdate(item.steps)] : [];
    case 'model_error':
      return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n\n[model error: ${item.provider} ${item.httpStatus ?? 'no HTTP status'}] ${item.message}` }, messageId: item.id }];
    case 'agent_message':
      return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n\n[message from ${item.fromSessionId}]\n${item.text}` }, messageId: item.id }];
    case 'executor_change':
      return replay ? [] : notice(context, 'info', `Executor changed from ${item.from} to ${item.to}`);
    case 'hook_run':
      return replay ? [] : notice(context, item.exitCode === 0 ? 'info' : 'warning', `Hook ${item.event}: ${item.command}`, `exit code ${item.exitCode ?? 'none (killed)'}${item.decision ? `, decision ${item.decision}` : ''}`);
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
      if (kind === 'tool_call' && delta.output) {
        const output = ((context.outputs.get(itemId) ?? '') + delta.output).slice(-LIVE_OUTPUT_CHARACTERS);
        context.outputs.set(itemId, output);
        return [{ sessionUpdate: 'tool_call_update', toolCallId: itemId, content: [{ type: 'content', content: { type: 'text', text: output } }] }];
      }
      return [];
    }
    case 'approval/resolved': {
      const allowed = event.params.decision.startsWith('allow');
      return [{ sessionUpdate: 'tool_call_update', toolCallId: event.params.itemId, status: allowed ? 'in_progress' : 'failed' }];
    }
    case 'input/requested': {
      const { request } = event.params;
      const choices = request.choices?.length ? `\nChoices: ${request.choices.join(' | ')}` : '';
      return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n\n[input requested] ${request.question}${choices}\n(Answer with your next message.)` }, messageId: request.requestId }];
    }
    case 'turn/warning':
      return notice(context, 'warning', event.params.message);
    case 'turn/retrying':
      return notice(context, 'warning', `Retrying in ${event.params.delayMs} ms: ${event.params.message}`, `retry ${event.params.attempt} of ${event.params.maxRetries}`);
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
  const params = event.params as { sessionId?: unknown; item?: { sessionId?: unknown }; request?: { sessionId?: unknown }; session?: { id?: unknown } };
  if (typeof params.sessionId === 'string') return params.sessionId;
  if (typeof params.item?.sessionId === 'string') return params.item.sessionId;
  if (typeof params.request?.sessionId === 'string') return params.request.sessionId;
  if (typeof params.session?.id === 'string') return params.session.id;
  return undefined;
}

/**
 * Runtime notifications as Codex app-server notifications (docs/protocol.md, "Mapping to
 * Codex app-server", notifications), in the order Codex sends them: a turn starts with
 * `thread/status/changed` (active) and `turn/started`; items go `item/started`, deltas,
 * `item/completed`; a turn ends with `thread/status/changed` (idle) and `turn/completed`.
 *
 * Only the root session of a conversation is its Codex thread: the events of subagent sessions
 * are dropped here (their work shows as the `collabAgentToolCall` items of the root session).
 * What the translator keeps lives as long as the connection: each subscribed conversation's
 * root session, the Codex type of each item in progress, and each running turn's file diffs.
 */
import { toCodexId } from '../../protocol/codex-ids.js';
import type { AnyNotification } from '../../protocol/index.js';
import { incompleteTurnError, tokenBreakdownOf, turnOf } from './entities.js';
import { startedThreadItemOf, threadItemOf, type ItemPlace } from './items.js';

/** Sends one Codex notification. */
export type EmitNotification = (method: string, params: Record<string, unknown>) => void;

const PLAN_STATUS = { pending: 'pending', in_progress: 'inProgress', completed: 'completed' } as const;

/** Translates one connection's runtime notifications. */
export class EventTranslator {
  /** Root session id, working directory and title of each conversation the connection follows. */
  private readonly roots = new Map<string, { rootSessionId: string; cwd: string; title: string }>();
  /** Codex item type of each item announced and not yet completed, by OpenVaala item id. */
  private readonly started = new Map<string, string>();
  /** Unified diffs of the file changes of each running turn, in order (for `turn/diff/updated`). */
  private readonly turnDiffs = new Map<string, string[]>();
  /**
   * The last model call's token usage of each conversation, not sent yet. The runtime reports
   * usage when the model's answer ends; Codex sends it once the call's items are done (its tool
   * calls run included), so it waits for the next model output, the next usage or the turn's end.
   */
  private readonly pendingUsage = new Map<string, Record<string, unknown>>();

  constructor(private readonly emit: EmitNotification) {}

  /** Follows a conversation whose root session is `rootSessionId`, working in `cwd`, titled `title`. */
  follow(conversationId: string, rootSessionId: string, cwd: string, title: string): void {
    this.roots.set(conversationId, { rootSessionId, cwd, title });
  }

  private place(conversationId: string, sessionId: string): ItemPlace {
    return { sessionThreadId: toCodexId(sessionId), cwd: this.roots.get(conversationId)?.cwd ?? '/' };
  }

  /** The conversations followed, in the order they were first followed. */
  followed(): string[] {
    return [...this.roots.keys()];
  }

  /** Whether the connection follows the conversation. */
  follows(conversationId: string): boolean {
    return this.roots.has(conversationId);
  }

  private isRoot(conversationId: string, sessionId: string): boolean {
    return this.roots.get(conversationId)?.rootSessionId === sessionId;
  }

  private flushUsage(conversationId: string): void {
    const usage = this.pendingUsage.get(conversationId);
    if (!usage) return;
    this.pendingUsage.delete(conversationId);
    this.emit('thread/tokenUsage/updated', usage);
  }

  /** Sends the thread's status (for approvals: waiting on one, or no longer). */
  threadStatus(conversationId: string, activeFlags: ('waitingOnApproval' | 'waitingOnUserInput')[]): void {
    this.emit('thread/status/changed', { threadId: toCodexId(conversationId), status: { type: 'active', activeFlags } });
  }

  /** Translates one runtime notification into zero or more Codex notifications. */
  translate(event: AnyNotification): void {
    switch (event.method) {
      case 'turn/started': {
        const { conversationId, turn } = event.params;
        if (!this.isRoot(conversationId, turn.sessionId)) return;
        const threadId = toCodexId(conversationId);
        this.emit('thread/status/changed', { threadId, status: { type: 'active', activeFlags: [] } });
        this.emit('turn/started', { threadId, turn: turnOf(turn) });
        return;
      }
      case 'turn/completed': {
        const { conversationId, turn } = event.params;
        if (!this.isRoot(conversationId, turn.sessionId)) return;
        this.flushUsage(conversationId);
        this.turnDiffs.delete(turn.id);
        const threadId = toCodexId(conversationId);
        // As Codex announces the error of an incomplete model response before the turn ends.
        const incomplete = incompleteTurnError(turn);
        if (incomplete) this.emit('error', { threadId, turnId: toCodexId(turn.id), willRetry: false, error: incomplete });
        this.emit('thread/status/changed', { threadId, status: { type: 'idle' } });
        this.emit('turn/completed', { threadId, turn: turnOf(turn) });
        return;
      }
      case 'item/started': {
        const { conversationId, sessionId, turnId, itemId, kind, partial } = event.params;
        if (!this.isRoot(conversationId, sessionId)) return;
        const item = startedThreadItemOf(itemId, kind, partial, this.place(conversationId, sessionId));
        if (!item) return;
        // New model output: the previous call is done.
        if (kind === 'assistant_message' || kind === 'reasoning') this.flushUsage(conversationId);
        this.started.set(itemId, item.type);
        this.emit('item/started', { item, threadId: toCodexId(conversationId), turnId: toCodexId(turnId), startedAtMs: Date.now() });
        return;
      }
      case 'item/delta':
        this.translateDelta(event.params);
        return;
      case 'item/completed':
        this.translateCompleted(event.params);
        return;
      case 'plan/updated': {
        const { conversationId, sessionId, turnId, explanation, steps } = event.params;
        if (!this.isRoot(conversationId, sessionId)) return;
        this.emit('turn/plan/updated', { threadId: toCodexId(conversationId), turnId: toCodexId(turnId), explanation: explanation ?? null, plan: steps.map((step) => ({ step: step.step, status: PLAN_STATUS[step.status] })) });
        return;
      }
      case 'session/usage': {
        const { conversationId, sessionId, turnId, lastCall, turnTotal, contextWindow } = event.params;
        if (!this.isRoot(conversationId, sessionId)) return;
        this.flushUsage(conversationId);
        // Codex's `total` counts the thread; the runtime reports the turn's total, the nearest it has.
        this.pendingUsage.set(conversationId, {
          threadId: toCodexId(conversationId),
          turnId: toCodexId(turnId),
          tokenUsage: { total: tokenBreakdownOf(turnTotal), last: tokenBreakdownOf(lastCall), modelContextWindow: contextWindow ?? null },
        });
        return;
      }
      case 'turn/warning': {
        // Codex's own `warning` notification: a message for the user, about a thread.
        const { conversationId, sessionId, message } = event.params;
        if (!this.isRoot(conversationId, sessionId)) return;
        this.emit('warning', { threadId: toCodexId(conversationId), message });
        return;
      }
      case 'turn/retrying': {
        const { conversationId, sessionId, turnId, message } = event.params;
        if (!this.isRoot(conversationId, sessionId)) return;
        this.emit('error', { threadId: toCodexId(conversationId), turnId: toCodexId(turnId), willRetry: true, error: { message } });
        return;
      }
      case 'conversation/updated': {
        // Only a new title has a Codex counterpart.
        const { conversation } = event.params;
        const followed = this.roots.get(conversation.id);
        if (!followed || followed.title === conversation.title) return;
        followed.title = conversation.title;
        this.emit('thread/name/updated', { threadId: toCodexId(conversation.id), threadName: conversation.title });
        return;
      }
      case 'session/rewound':
        if (!this.isRoot(event.params.conversationId, event.params.sessionId)) return;
        this.emit('thread/reverted', { threadId: toCodexId(event.params.conversationId) });
        return;
      case 'conversation/deleted':
        if (!this.roots.delete(event.params.conversationId)) return;
        this.emit('thread/deleted', { threadId: toCodexId(event.params.conversationId) });
        return;
      default:
        // The rest has no Codex counterpart on this connection or is sent by the request that
        // caused it (archiving); approvals are server requests (see connection.ts).
        return;
    }
  }

  private translateDelta(params: Extract<AnyNotification, { method: 'item/delta' }>['params']): void {
    const { conversationId, sessionId, turnId, itemId, delta } = params;
    if (!this.isRoot(conversationId, sessionId)) return;
    const base = { threadId: toCodexId(conversationId), turnId: toCodexId(turnId), itemId: toCodexId(itemId) };
    if (delta.text !== undefined) this.emit('item/agentMessage/delta', { ...base, delta: delta.text });
    if (delta.reasoning !== undefined) this.emit('item/reasoning/summaryTextDelta', { ...base, delta: delta.reasoning, summaryIndex: delta.partIndex ?? 0 });
    if (delta.reasoningRaw !== undefined) this.emit('item/reasoning/textDelta', { ...base, delta: delta.reasoningRaw, contentIndex: 0 });
    // Output streams only for commands: Codex has no output delta for the other tool items.
    if (delta.output !== undefined && this.started.get(itemId) === 'commandExecution') this.emit('item/commandExecution/outputDelta', { ...base, delta: delta.output });
  }

  private translateCompleted(params: Extract<AnyNotification, { method: 'item/completed' }>['params']): void {
    const { conversationId, sessionId, item } = params;
    if (!this.isRoot(conversationId, sessionId)) return;
    const threadId = toCodexId(conversationId);
    const turnId = toCodexId(item.turnId);
    if (item.kind === 'model_error') {
      const status = item.httpStatus === null ? '' : ` ${item.httpStatus}`;
      this.emit('error', { threadId, turnId, willRetry: false, error: { message: `${item.provider}${status}: ${item.message}` } });
      return;
    }
    const codexItem = threadItemOf(item, this.place(conversationId, sessionId));
    if (!codexItem) return;
    // Items recorded whole (user messages, plans) are announced here, as Codex announces every item before completing it.
    if (!this.started.delete(item.id)) this.emit('item/started', { item: { ...codexItem, ...(inProgressStatus(codexItem.type) ? { status: 'inProgress' } : {}) }, threadId, turnId, startedAtMs: Math.round(item.createdAt) });
    this.emit('item/completed', { item: codexItem, threadId, turnId, completedAtMs: Math.round(item.completedAt) });
    if (item.kind === 'tool_call' && item.details?.kind === 'fileChange' && item.status === 'completed') {
      // The turn's diff is a unified diff with file headers (as `git diff` writes it), unlike the per-change `diff`.
      const diffs = this.turnDiffs.get(item.turnId) ?? [];
      diffs.push(...item.details.changes.map((change) => change.unifiedDiff));
      this.turnDiffs.set(item.turnId, diffs);
      this.emit('turn/diff/updated', { threadId, turnId, diff: diffs.join('') });
    }
  }
}

/** Whether a Codex item type carries a `status` (an in-progress copy is announced with `inProgress`). */
function inProgressStatus(type: string): boolean {
  return type === 'commandExecution' || type === 'fileChange' || type === 'mcpToolCall' || type === 'dynamicToolCall' || type === 'collabAgentToolCall';
}

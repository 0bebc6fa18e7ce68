/**
 * OpenVaala entities as Codex app-server entities (v2 schema of codex-cli 0.171.0): a
 * conversation is a `Thread`, its root session's turns are `Turn`s, token counts are a
 * `ThreadTokenUsage`. Ids follow the Codex id rule (docs/protocol.md, "Codex ids").
 * Times: Codex threads and turns carry Unix seconds; items and notifications milliseconds.
 */
import { toCodexId } from '../../protocol/codex-ids.js';
import type { Conversation, ConversationSummary, Session, TokenUsage, Turn } from '../../protocol/index.js';
import { turnEndNotice } from '../../protocol/stop-reasons.js';
import { VERSION } from '../../package-info.js';

/** A Codex `ThreadStatus`. */
export type CodexThreadStatus = { type: 'idle' } | { type: 'notLoaded' } | { type: 'active'; activeFlags: ('waitingOnApproval' | 'waitingOnUserInput')[] };

/** Unix seconds of a time in ms since the epoch (Codex threads and turns count seconds). */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** The provider part of `provider/model` (Codex's `modelProvider`). */
export function providerOf(model: string): string {
  const slash = model.indexOf('/');
  return slash === -1 ? model : model.slice(0, slash);
}

/** A root session's state as a Codex thread status: running → active (flags for what it waits on), else idle. */
export function threadStatusOf(session: Session | undefined): CodexThreadStatus {
  if (!session || session.status !== 'running') return { type: 'idle' };
  const activeFlags: ('waitingOnApproval' | 'waitingOnUserInput')[] = [];
  if (session.pendingApprovals.length > 0) activeFlags.push('waitingOnApproval');
  if (session.pendingUserInputs.length > 0) activeFlags.push('waitingOnUserInput');
  return { type: 'active', activeFlags };
}

/** What a thread is built from: the conversation, its root session when known, and its list preview. */
export interface ThreadSource {
  conversation: Conversation;
  rootSession?: Session;
  preview?: string;
  /** Codex `Turn`s already mapped (for `thread/read` with turns, `thread/resume`); default none. */
  turns?: object[];
}

/** A conversation as a Codex `Thread`. */
export function threadOf(source: ThreadSource): Record<string, unknown> {
  const { conversation, rootSession } = source;
  const cwd = conversation.workLocation[0]?.cwd ?? '/';
  const model = rootSession?.model;
  return {
    id: toCodexId(conversation.id),
    sessionId: toCodexId(conversation.rootSessionId),
    forkedFromId: conversation.forkedFrom ? toCodexId(conversation.forkedFrom.conversationId) : null,
    parentThreadId: null,
    preview: source.preview ?? '',
    ephemeral: false,
    projectId: null,
    modelProvider: model ? providerOf(model) : 'openvaala',
    model: model ?? null,
    createdAt: unixSeconds(conversation.createdAt),
    updatedAt: unixSeconds(conversation.updatedAt),
    status: threadStatusOf(rootSession),
    path: null,
    cwd,
    cliVersion: VERSION,
    source: 'appServer',
    name: conversation.title === '' ? null : conversation.title,
    turns: source.turns ?? [],
  };
}

/** A listed conversation as a Codex `Thread` (`thread/list`): no session, so no model. */
export function threadOfSummary(summary: ConversationSummary): Record<string, unknown> {
  return {
    id: toCodexId(summary.id),
    sessionId: toCodexId(summary.id),
    preview: summary.preview,
    ephemeral: false,
    projectId: null,
    modelProvider: 'openvaala',
    model: null,
    createdAt: unixSeconds(summary.createdAt),
    updatedAt: unixSeconds(summary.updatedAt),
    status: summary.running ? { type: 'active', activeFlags: [] } : { type: 'idle' },
    path: null,
    cwd: summary.cwd,
    cliVersion: VERSION,
    source: 'appServer',
    name: summary.title === '' ? null : summary.title,
    turns: [],
  };
}

const TURN_STATUS = { running: 'inProgress', completed: 'completed', failed: 'failed', interrupted: 'interrupted' } as const;

/**
 * The Codex `TurnError` of a turn that completed with an answer that may be incomplete (cut at
 * the model's output limit, stopped by the content filter, an external agent's step limit:
 * `turnEndNotice`), else undefined. The Codex protocol has no stop reason: Codex itself ends a
 * turn whose model response came back incomplete (`response.incomplete`) as `failed`, with an
 * `error` notification and the turn's `error` of kind `other`, keeping the text it streamed;
 * the adapter does the same, with OpenVaala's wording of the reason.
 */
export function incompleteTurnError(turn: Turn): { message: string; codexErrorInfo: 'other'; additionalDetails: null } | undefined {
  if (turn.status !== 'completed') return undefined;
  const notice = turnEndNotice(turn);
  return notice === undefined ? undefined : { message: notice, codexErrorInfo: 'other', additionalDetails: null };
}

/**
 * A turn as a Codex `Turn`. `items` are the turn's Codex items when known; without them the
 * turn says `itemsView: "notLoaded"` (what Codex itself sends in `turn/started`). A turn whose
 * answer may be incomplete is `failed`, with its error (see {@link incompleteTurnError}).
 */
export function turnOf(turn: Turn, items?: object[]): Record<string, unknown> {
  const completedAt = turn.completedAt ?? null;
  const incomplete = incompleteTurnError(turn);
  return {
    id: toCodexId(turn.id),
    items: items ?? [],
    itemsView: items ? 'full' : 'notLoaded',
    status: incomplete ? 'failed' : TURN_STATUS[turn.status],
    error: incomplete ?? (turn.error !== undefined && turn.status === 'failed' ? { message: turn.error } : null),
    startedAt: unixSeconds(turn.startedAt),
    completedAt: completedAt === null ? null : unixSeconds(completedAt),
    durationMs: completedAt === null ? null : Math.max(0, Math.round(completedAt - turn.startedAt)),
  };
}

/** A turn known only by its id, just started (`turn/start` answers before the runtime's `turn/started`). */
export function startingTurnOf(turnId: string): Record<string, unknown> {
  return { id: toCodexId(turnId), items: [], itemsView: 'notLoaded', status: 'inProgress', error: null, startedAt: null, completedAt: null, durationMs: null };
}

/** OpenVaala token counts as a Codex `TokenUsageBreakdown` (cached input and reasoning output are parts of input and output in both). */
export function tokenBreakdownOf(usage: TokenUsage): Record<string, number> {
  return {
    totalTokens: usage.totalTokens,
    inputTokens: usage.inputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    outputTokens: usage.outputTokens,
    reasoningOutputTokens: usage.reasoningTokens ?? 0,
  };
}

/**
 * Codex `approvalPolicy` as an OpenVaala conversation approval policy. `never` runs every
 * call; `untrusted`, `on-request` and a granular policy ask before every call with side effects
 * (OpenVaala has no sandbox to fall back on, so asking is the safe reading of both). The
 * read-only tools are allowed, as Codex runs read-only commands without asking under `untrusted`.
 */
export function approvalPolicyOf(policy: unknown): { default: 'allow' | 'ask'; rules?: { tool: string; decision: 'allow' }[] } | undefined {
  if (policy === undefined || policy === null) return undefined;
  if (policy === 'never') return { default: 'allow' };
  return { default: 'ask', rules: ['read_file', 'list_dir', 'glob', 'grep'].map((tool) => ({ tool, decision: 'allow' as const })) };
}

/** The Codex `approvalPolicy` a thread reports back: what the client asked, else `on-request` (OpenVaala's agents ask by their own policy). */
export function reportedApprovalPolicy(policy: unknown): unknown {
  return policy ?? 'on-request';
}

/**
 * Codex's `sandbox` answer: OpenVaala runs commands on its executors without Codex's sandbox,
 * which Codex names `dangerFullAccess`; said as it is rather than claiming a sandbox.
 */
export const REPORTED_SANDBOX = { type: 'dangerFullAccess' } as const;

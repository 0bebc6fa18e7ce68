/**
 * The conversation lifecycle (SPEC §3, §4): deletion, archiving, forking and rewinding, and
 * the replay start of a subscriber whose items predate a rewind. Each operation works on the
 * few things of the runtime it needs ({@link LifecycleHost}).
 */
import type { ConversationStore, MetadataEntry } from '../dao/conversation-store.js';
import { newId } from '../ids.js';
import type { Conversation, Item, Session, StateConflictReason, Turn } from '../protocol/index.js';
import { fitConversationTitle } from '../protocol/conversations.js';
import type { LiveConversation } from './conversation.js';
import { NotFoundError } from './runtime.js';
import type { LiveSession } from './session.js';
import { StateConflictError } from './state-conflict-error.js';

/** What the lifecycle operations use of the runtime. */
export interface LifecycleHost {
  readonly store: ConversationStore;
  getConversation(conversationId: string): Promise<LiveConversation>;
  takeOpenConversation(conversationId: string): Promise<LiveConversation | undefined>;
  /** Work to do once a conversation is deleted (its scheduled tasks go). */
  conversationDeleted?(conversationId: string): Promise<void>;
}

/** `data.reason` of a rewind refused because work runs or waits. */
export const TURN_RUNNING = 'turn_running' satisfies StateConflictReason;
/** `data.reason` of a request refused because the session is being rewound. */
export const REWIND_IN_PROGRESS = 'rewind_in_progress' satisfies StateConflictReason;

/**
 * Deletes a conversation: its sessions' work is interrupted and waited for (new input is
 * refused meanwhile), the store records the deletion and moves the files to the trash, and
 * the conversation's subscribers hear `conversation/deleted` (the list feed hears it from
 * the store).
 * @throws NotFoundError when the conversation does not exist
 */
export async function deleteConversation(host: LifecycleHost, conversationId: string): Promise<void> {
  const live = await host.takeOpenConversation(conversationId);
  if (live) {
    for (const session of live.sessions.values()) session.historyLock = 'conversation_deleted';
    await live.shutdown();
  }
  const summary = await host.store.deleteConversation(conversationId, Date.now());
  // A request that reopened it from storage during the shutdown above gets it closed too.
  const reopened = await host.takeOpenConversation(conversationId);
  if (reopened && reopened !== live) await reopened.shutdown();
  if (summary || live) await host.conversationDeleted?.(conversationId);
  if (!summary && !live) throw new NotFoundError(`conversation "${conversationId}" does not exist`);
  live?.publish({ method: 'conversation/deleted', params: { conversationId, ...(summary ? { summary } : {}) } });
}

/**
 * Sets or clears a conversation's `archived` flag (stored as a conversation entry; the last
 * one wins) and tells its subscribers and the list feed.
 * @throws NotFoundError when the conversation does not exist
 */
export async function setArchived(host: LifecycleHost, conversationId: string, archived: boolean): Promise<Conversation> {
  const live = await host.getConversation(conversationId);
  return live.update({ archived });
}

/** The session a request names (default: the root session). @throws NotFoundError naming `params.sessionId` */
function sessionOf(live: LiveConversation, sessionId: string | undefined): LiveSession {
  const id = sessionId ?? live.state.rootSessionId;
  const session = live.sessions.get(id);
  if (!session) throw new NotFoundError(`params.sessionId: session "${id}" is not part of conversation ${live.id}`);
  return session;
}

/**
 * Forks a conversation: a new conversation (same work location, title with ` (fork)`,
 * `forkedFrom` set) whose root session starts with a copy of the source root session's
 * stored items up to and including `fromItemId`, or up to the last item of turn `lastTurnId`.
 * Items are found by id only, never by time. Copies get new item, session and turn ids and
 * keep everything else; the turns they belong to are copied too (one still running in the
 * source is copied as interrupted). Works while the source runs: it copies what is stored.
 * @param projectId the project the fork belongs to (the source's binding); default the source's own `projectId`
 * @returns the new conversation, opened
 * @throws NotFoundError for an unknown conversation, item or turn (naming the param)
 * @throws DamagedConversationError when the source's metadata or root session log is damaged
 *   beyond what reads skip
 */
export async function forkConversation(host: LifecycleHost, source: { conversationId: string; fromItemId?: string; lastTurnId?: string }, projectId?: string): Promise<LiveConversation> {
  const state = await host.store.openConversationState(source.conversationId);
  if (!state) throw new NotFoundError(`conversation "${source.conversationId}" does not exist`);
  const rootSession = state.sessions.find((session) => session.id === state.conversation.rootSessionId);
  if (!rootSession) throw new NotFoundError(`conversation "${source.conversationId}" has no root session`);
  const stored = await host.store.listItems(source.conversationId, rootSession.id).catch((error: unknown) => {
    throw host.store.damagedBy(source.conversationId, error);
  });
  const end =
    source.fromItemId !== undefined
      ? stored.findIndex((entry) => entry.item.id === source.fromItemId)
      : stored.findLastIndex((entry) => entry.item.turnId === source.lastTurnId);
  if (end < 0) {
    throw new NotFoundError(
      source.fromItemId !== undefined
        ? `params.fromItemId: item "${source.fromItemId}" is not stored in the root session of conversation ${source.conversationId}`
        : state.turns.some((turn) => turn.id === source.lastTurnId)
          ? `params.lastTurnId: turn "${String(source.lastTurnId)}" has no items stored in the root session of conversation ${source.conversationId}`
          : `params.lastTurnId: conversation ${source.conversationId} has no turn "${String(source.lastTurnId)}"`,
    );
  }
  const copied = stored.slice(0, end + 1).map((entry) => entry.item);
  const last = copied.at(-1) as Item;
  const now = Date.now();
  const conversationId = newId('conv');
  const session: Session = { id: newId('sess'), conversationId, parentSessionId: null, agent: rootSession.agent, model: rootSession.model, status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], createdAt: now, updatedAt: now };
  const conversation: Conversation = {
    id: conversationId,
    title: fitConversationTitle(state.conversation.title, ' (fork)'),
    workLocation: state.conversation.workLocation,
    rootSessionId: session.id,
    createdAt: now,
    updatedAt: now,
    forkedFrom: { conversationId: source.conversationId, itemId: last.id },
  };
  // What was given for the source conversation only (its MCP servers, instructions and approval
  // policy) goes on in the fork, as the history it was given for does.
  for (const key of FORKED_SETTINGS) if (state.conversation[key] !== undefined) Object.assign(conversation, { [key]: state.conversation[key] });
  // A fork stays in its source's project: kept with it, so its creation is heard by the project's members.
  const project = projectId ?? state.conversation.projectId;
  if (project !== undefined) conversation.projectId = project;
  const turnIds = new Map<string, string>();
  for (const item of copied) if (!turnIds.has(item.turnId)) turnIds.set(item.turnId, newId('turn'));
  const items = copied.map((item) => copyItem(item, session.id, rootSession.id, turnIds));
  const turns: MetadataEntry[] = state.turns.flatMap((turn): MetadataEntry[] => {
    const id = turnIds.get(turn.id);
    if (id === undefined) return [];
    const copy: Turn = { ...turn, id, sessionId: session.id, conversationId, ...(turn.status === 'running' ? { status: 'interrupted' as const, completedAt: now } : {}) };
    return [{ type: 'turn', turn: copy }];
  });
  await host.store.createConversation(conversation, session);
  // A fork has history from the start: it is written to disk at once (no staging).
  await host.store.ensureDurable(conversationId);
  await host.store.appendItems(conversationId, session.id, items);
  if (turns.length > 0) await host.store.appendMetadata(conversationId, [...turns, { type: 'conversation', conversation }]);
  return host.getConversation(conversationId);
}

/** The settings of a conversation, given at its creation for it alone, that its forks keep. */
const FORKED_SETTINGS = ['mcpServers', 'instructions', 'approvalPolicy'] as const satisfies readonly (keyof Conversation)[];

/** A copy of an item for a fork: new item id, the new session and turn ids; references to the source root session follow it. */
function copyItem(item: Item, sessionId: string, sourceSessionId: string, turnIds: Map<string, string>): Item {
  const copy: Record<string, unknown> = { ...item, id: newId('item'), sessionId, turnId: turnIds.get(item.turnId) ?? item.turnId };
  for (const key of ['fromSessionId', 'toSessionId']) if (copy[key] === sourceSessionId) copy[key] = sessionId;
  return copy as Item;
}

/** What a rewind did. */
export interface RewindOutcome {
  session: Session;
  afterSeq: number;
  dropped: number;
  rewoundTurnIds: string[];
}

/**
 * Rewinds a session (SPEC §3): keeps its stored items up to and including `afterItemId` and
 * drops the rest, atomically (the log is replaced by a temporary file renamed over it). Turns
 * left without items are marked `rewound`; what the session derived from its history is
 * reset; the session's `historyEpoch` goes up by one and subscribers hear `session/rewound`.
 * Nothing changes when `afterItemId` is the last item.
 * @throws StateConflictError (`turn_running`) while any session of the conversation runs a
 *   turn or has input waiting; (`rewind_in_progress`) during another rewind of the session
 * @throws NotFoundError for an unknown conversation, session or item (naming the param)
 */
export async function rewindSession(host: LifecycleHost, request: { conversationId: string; sessionId?: string; afterItemId: string }): Promise<RewindOutcome> {
  const live = await host.getConversation(request.conversationId);
  const session = sessionOf(live, request.sessionId);
  if (session.historyLock !== undefined) throw new StateConflictError(`session ${session.id} is being rewound already`, session.historyLock);
  if ([...live.sessions.values()].some((other) => other.hasWork)) {
    throw new StateConflictError(`conversation ${live.id} has a turn running or input queued; interrupt it or wait until it ends`, TURN_RUNNING);
  }
  // Taken in the same step as the check above: input arriving from now on is refused.
  session.historyLock = REWIND_IN_PROGRESS;
  try {
    const stored = await host.store.listItems(live.id, session.id);
    const target = stored.find((entry) => entry.item.id === request.afterItemId);
    if (!target) throw new NotFoundError(`params.afterItemId: item "${request.afterItemId}" is not stored in session ${session.id}`);
    const afterSeq = target.seq;
    const keptTurns = new Set(stored.filter((entry) => entry.seq <= afterSeq).map((entry) => entry.item.turnId));
    const rewoundTurnIds = [...new Set(stored.filter((entry) => entry.seq > afterSeq).map((entry) => entry.item.turnId))].filter((turnId) => !keptTurns.has(turnId));
    const dropped = await host.store.rewindItems(live.id, session.id, afterSeq);
    if (dropped === 0) return { session: session.state, afterSeq, dropped, rewoundTurnIds: [] };
    const historyEpoch = (session.state.historyEpoch ?? 0) + 1;
    const kept = stored.filter((entry) => entry.seq <= afterSeq).map((entry) => entry.item);
    const state = await session.applyRewind(kept, { historyEpoch, rewoundAfterSeq: afterSeq });
    live.rewoundHead(session.id, afterSeq);
    await live.markTurnsRewound(rewoundTurnIds);
    live.publish({ method: 'session/rewound', params: { conversationId: live.id, sessionId: session.id, afterSeq, historyEpoch, rewoundTurnIds } });
    return { session: state, afterSeq, dropped, rewoundTurnIds };
  } finally {
    session.historyLock = undefined;
  }
}

/**
 * Where a subscriber's replay starts per session, given what it holds (`afterSeq`) and the
 * history epochs its items belong to: unchanged for a session never rewound or one whose
 * epoch the client gives as current; no later than the last rewind point when the client is
 * one epoch behind or gives none (items it holds past that point were dropped, and new ones
 * reuse their seq numbers); from the start when it is further behind.
 */
export function replayStart(sessions: Session[], afterSeq: Record<string, number> = {}, epochs: Record<string, number> = {}): Record<string, number> {
  const start: Record<string, number> = { ...afterSeq };
  for (const session of sessions) {
    const held = afterSeq[session.id];
    const current = session.historyEpoch ?? 0;
    if (held === undefined || current === 0) continue;
    const known = epochs[session.id];
    if (known === current) continue;
    start[session.id] = known === undefined || known === current - 1 ? Math.min(held, session.rewoundAfterSeq ?? 0) : 0;
  }
  return start;
}

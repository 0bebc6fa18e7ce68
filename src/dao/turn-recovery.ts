/**
 * Recovery of turns left `running` by a server that died (SPEC §3: every turn ends
 * `completed`, `failed` or `interrupted`). Only one server owns a data directory (the lock),
 * so a turn found running when a server starts, or while `reindex` holds the lock, belongs
 * to a dead one: it is recorded `interrupted` with an `interruption` item of reason
 * `crash_recovery`, and its session goes back to idle. The approvals and questions the session
 * listed as waiting are dropped with it: waiting lives in the dead server's memory, so nobody
 * can answer them any more (answering one gives `accepted: false`). The interruption item says
 * how many were dropped.
 */
import { newId } from '../ids.js';
import type { Item, Session, Turn } from '../protocol/index.js';
import type { ConversationStore } from './conversation-store.js';
import type { ConversationState, MetadataEntry } from './metadata-log.js';

/** What the turn's `error` and the interruption item say. */
export const CRASH_RECOVERY_MESSAGE = 'the server stopped during this turn';

/** What recovering one conversation writes: interruption items per session, then state entries. */
export interface TurnRecoveryPlan {
  /** One `interruption` item (reason `crash_recovery`) per recovered turn, for its session's log. */
  markers: Item[];
  /** The recovered turns and sessions, for the metadata log. */
  entries: MetadataEntry[];
  /** The state once the plan is written. */
  state: ConversationState;
  /** Approval requests the recovered sessions listed as waiting, now dropped. */
  droppedApprovals: number;
  /** `request_user_input` questions the recovered sessions listed as waiting, now dropped. */
  droppedUserInputs: number;
}

/** True when a stored session is left running or lists approvals or questions as waiting. */
function isStaleSession(session: Session): boolean {
  return session.status === 'running' || session.pendingApprovals.length > 0 || session.pendingUserInputs.length > 0;
}

/**
 * True when the state has a turn or a session still marked running, or a session listing
 * approvals or questions as waiting (read from storage, these belong to a server that died).
 */
export function hasStaleTurns(state: ConversationState): boolean {
  return state.turns.some((turn) => turn.status === 'running') || state.sessions.some(isStaleSession);
}

/** What the interruption item of a turn says: the crash, and the requests that went unanswered. */
function recoveryMessage(approvals: number, userInputs: number): string {
  const dropped = [
    ...(approvals > 0 ? [`${approvals} ${approvals === 1 ? 'approval request' : 'approval requests'}`] : []),
    ...(userInputs > 0 ? [`${userInputs} ${userInputs === 1 ? 'question' : 'questions'} for the user`] : []),
  ];
  return dropped.length === 0 ? CRASH_RECOVERY_MESSAGE : `${CRASH_RECOVERY_MESSAGE}; dropped unanswered: ${dropped.join(', ')}`;
}

/**
 * Plans the recovery of a conversation's running turns and sessions; undefined when there is
 * nothing to recover.
 * @param now the time recorded as the turns' end, ms since the epoch
 */
export function planTurnRecovery(state: ConversationState, now = Date.now()): TurnRecoveryPlan | undefined {
  if (!hasStaleTurns(state)) return undefined;
  const turns: Turn[] = state.turns.map((turn) => (turn.status === 'running' ? { ...turn, status: 'interrupted', stopReason: 'crash_recovery', completedAt: now, error: CRASH_RECOVERY_MESSAGE } : turn));
  const sessions: Session[] = state.sessions.map((session) =>
    isStaleSession(session) ? { ...session, status: session.status === 'running' ? 'idle' : session.status, activeTurnId: null, pendingApprovals: [], pendingUserInputs: [], updatedAt: now } : session,
  );
  const recoveredTurns = turns.filter((_, index) => state.turns[index]?.status === 'running');
  const staleSessions = state.sessions.filter(isStaleSession);
  const recoveredSessions = sessions.filter((_, index) => isStaleSession(state.sessions[index] as Session));
  const droppedFor = (turnId: string) => ({
    approvals: staleSessions.reduce((sum, session) => sum + session.pendingApprovals.filter((request) => request.turnId === turnId).length, 0),
    userInputs: staleSessions.reduce((sum, session) => sum + session.pendingUserInputs.filter((request) => request.turnId === turnId).length, 0),
  });
  const markers: Item[] = recoveredTurns.map((turn) => {
    const dropped = droppedFor(turn.id);
    return { id: newId('item'), sessionId: turn.sessionId, turnId: turn.id, createdAt: now, completedAt: now, status: 'completed', kind: 'interruption', reason: 'crash_recovery', message: recoveryMessage(dropped.approvals, dropped.userInputs) };
  });
  const entries: MetadataEntry[] = [...recoveredTurns.map((turn) => ({ type: 'turn' as const, turn })), ...recoveredSessions.map((session) => ({ type: 'session' as const, session }))];
  const droppedApprovals = staleSessions.reduce((sum, session) => sum + session.pendingApprovals.length, 0);
  const droppedUserInputs = staleSessions.reduce((sum, session) => sum + session.pendingUserInputs.length, 0);
  return { markers, entries, state: { ...state, turns, sessions }, droppedApprovals, droppedUserInputs };
}

/**
 * Writes a recovery plan: the interruption items first (each session's log), then the
 * metadata entries, which also update the listing index.
 * @returns the state after recovery, and the items appended per session id
 * @throws Error when a write fails (nothing later is written; running it again completes it)
 */
export async function writeTurnRecovery(store: ConversationStore, conversationId: string, plan: TurnRecoveryPlan): Promise<Map<string, Item[]>> {
  const appended = new Map<string, Item[]>();
  for (const marker of plan.markers) {
    await store.appendItems(conversationId, marker.sessionId, [marker]);
    appended.set(marker.sessionId, [...(appended.get(marker.sessionId) ?? []), marker]);
  }
  if (plan.entries.length > 0) await store.appendMetadata(conversationId, plan.entries);
  return appended;
}

/** What recovering one conversation did. */
export interface ConversationRecovery {
  /** Turns recorded interrupted. */
  turns: number;
  /** Waiting approval requests dropped. */
  approvals: number;
  /** Waiting questions for the user dropped. */
  userInputs: number;
}

/**
 * Loads a conversation and records its stale turns as interrupted, dropping the approvals
 * and questions its sessions listed as waiting (see the module comment).
 * @returns what was recovered (all 0 when nothing was, or when the conversation is gone)
 * @throws Error when a write fails
 */
export async function recoverConversation(store: ConversationStore, conversationId: string, now = Date.now()): Promise<ConversationRecovery> {
  const state = await store.loadConversation(conversationId);
  if (!state) {
    await store.refreshIndexRecord(conversationId);
    return { turns: 0, approvals: 0, userInputs: 0 };
  }
  const plan = planTurnRecovery(state, now);
  if (!plan) {
    // The log says the turn ended; only the index missed that last write.
    await store.refreshIndexRecord(conversationId);
    return { turns: 0, approvals: 0, userInputs: 0 };
  }
  await writeTurnRecovery(store, conversationId, plan);
  return { turns: plan.markers.length, approvals: plan.droppedApprovals, userInputs: plan.droppedUserInputs };
}

/** What {@link recoverStaleTurns} did. */
export interface StaleTurnReport {
  /** Conversations that had a turn or a session left running. */
  conversations: string[];
  /** Turns recorded interrupted. */
  turns: number;
  /** Waiting approval requests dropped (nobody can answer them after the crash). */
  approvals: number;
  /** Waiting questions for the user dropped. */
  userInputs: number;
  /** Conversations that could not be recovered, with why (they are recovered when opened). */
  failures: { conversationId: string; message: string }[];
}

/**
 * Recovers every conversation whose listing shows a running last turn. Run on start, before
 * the server accepts clients. A conversation that fails is reported, not thrown: the others
 * are still recovered, and opening it tries again.
 * @param claim decides whether this server may recover a conversation (several servers on one
 *   PostgreSQL schema: only one no live server owns, which this server then owns); default: every one
 */
export async function recoverStaleTurns(store: ConversationStore, claim: (conversationId: string) => Promise<boolean> = () => Promise.resolve(true)): Promise<StaleTurnReport> {
  const report: StaleTurnReport = { conversations: [], turns: 0, approvals: 0, userInputs: 0, failures: [] };
  for (const conversationId of await store.listRunningConversationIds()) {
    try {
      if (!(await claim(conversationId))) continue;
      const recovered = await recoverConversation(store, conversationId);
      report.conversations.push(conversationId);
      report.turns += recovered.turns;
      report.approvals += recovered.approvals;
      report.userInputs += recovered.userInputs;
    } catch (error) {
      report.failures.push({ conversationId, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return report;
}

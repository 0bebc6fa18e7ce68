/**
 * Recovery of turns left `running` by a server that died (SPEC §3: every turn ends
 * `completed`, `failed` or `interrupted`). Only one server owns a data directory (the lock),
 * so a turn found running when a server starts, or while `reindex` holds the lock, belongs
 * to a dead one: it is recorded `interrupted` with an `interruption` item of reason
 * `crash_recovery`, and its session goes back to idle.
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
}

/** True when the state has a turn or a session still marked running. */
export function hasStaleTurns(state: ConversationState): boolean {
  return state.turns.some((turn) => turn.status === 'running') || state.sessions.some((session) => session.status === 'running');
}

/**
 * Plans the recovery of a conversation's running turns and sessions; undefined when there is
 * nothing to recover.
 * @param now the time recorded as the turns' end, ms since the epoch
 */
export function planTurnRecovery(state: ConversationState, now = Date.now()): TurnRecoveryPlan | undefined {
  if (!hasStaleTurns(state)) return undefined;
  const turns: Turn[] = state.turns.map((turn) => (turn.status === 'running' ? { ...turn, status: 'interrupted', stopReason: 'crash_recovery', completedAt: now, error: CRASH_RECOVERY_MESSAGE } : turn));
  const sessions: Session[] = state.sessions.map((session) => (session.status === 'running' ? { ...session, status: 'idle', activeTurnId: null, updatedAt: now } : session));
  const recoveredTurns = turns.filter((_, index) => state.turns[index]?.status === 'running');
  const recoveredSessions = sessions.filter((_, index) => state.sessions[index]?.status === 'running');
  const markers: Item[] = recoveredTurns.map((turn) => ({ id: newId('item'), sessionId: turn.sessionId, turnId: turn.id, createdAt: now, completedAt: now, status: 'completed', kind: 'interruption', reason: 'crash_recovery', message: CRASH_RECOVERY_MESSAGE }));
  const entries: MetadataEntry[] = [...recoveredTurns.map((turn) => ({ type: 'turn' as const, turn })), ...recoveredSessions.map((session) => ({ type: 'session' as const, session }))];
  return { markers, entries, state: { ...state, turns, sessions } };
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

/**
 * Loads a conversation and records its stale turns as interrupted (see the module comment).
 * @returns the number of turns recovered (0 when none, or when the conversation is gone)
 * @throws Error when a write fails
 */
export async function recoverConversation(store: ConversationStore, conversationId: string, now = Date.now()): Promise<number> {
  const state = await store.loadConversation(conversationId);
  if (!state) {
    await store.refreshIndexRecord(conversationId);
    return 0;
  }
  const plan = planTurnRecovery(state, now);
  if (!plan) {
    // The log says the turn ended; only the index missed that last write.
    await store.refreshIndexRecord(conversationId);
    return 0;
  }
  await writeTurnRecovery(store, conversationId, plan);
  return plan.markers.length;
}

/** What {@link recoverStaleTurns} did. */
export interface StaleTurnReport {
  /** Conversations that had a turn or a session left running. */
  conversations: string[];
  /** Turns recorded interrupted. */
  turns: number;
  /** Conversations that could not be recovered, with why (they are recovered when opened). */
  failures: { conversationId: string; message: string }[];
}

/**
 * Recovers every conversation whose listing shows a running last turn. Run on start, before
 * the server accepts clients. A conversation that fails is reported, not thrown: the others
 * are still recovered, and opening it tries again.
 */
export async function recoverStaleTurns(store: ConversationStore): Promise<StaleTurnReport> {
  const report: StaleTurnReport = { conversations: [], turns: 0, failures: [] };
  for (const conversationId of await store.listRunningConversationIds()) {
    try {
      const turns = await recoverConversation(store, conversationId);
      report.conversations.push(conversationId);
      report.turns += turns;
    } catch (error) {
      report.failures.push({ conversationId, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return report;
}

/**
 * Planning the recovery of a conversation a dead server left behind: running turns end
 * interrupted, and the approvals and questions its sessions listed as waiting are dropped
 * (nobody can answer them any more), counted in the interruption item's message.
 */
import { describe, expect, it } from 'vitest';
import { hasStaleTurns, planTurnRecovery } from '../../src/dao/turn-recovery.js';
import type { ConversationState } from '../../src/dao/metadata-log.js';
import type { ApprovalRequest, Session, Turn, UserInputRequest } from '../../src/protocol/index.js';

const request = { conversationId: 'conv_1', callId: 'call_1', itemId: 'item_1', requestedAt: 1 };
const approval = { ...request, approvalId: 'appr_1', sessionId: 'sess_1', turnId: 'turn_1', toolName: 'exec_command', arguments: {}, options: [], reason: 'asked' } as ApprovalRequest;
const question = { ...request, requestId: 'input_1', sessionId: 'sess_2', turnId: 'turn_2', question: 'Which?', allowFreeText: true } as UserInputRequest;

function session(id: string, changes: Partial<Session>): Session {
  return { id, conversationId: 'conv_1', parentSessionId: null, agent: 'default', model: 'mock/m', status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], createdAt: 1, updatedAt: 1, ...changes };
}

function turn(id: string, sessionId: string): Turn {
  return { id, sessionId, conversationId: 'conv_1', status: 'running', startedAt: 1 } as Turn;
}

function state(sessions: Session[], turns: Turn[]): ConversationState {
  return { conversation: { id: 'conv_1', title: 't', workLocation: [{ executor: 'local', cwd: '/' }], rootSessionId: 'sess_1', createdAt: 1, updatedAt: 1 }, sessions, turns, metadataSeq: 1 };
}

describe('turn recovery', () => {
  it('drops the waiting approvals and questions of running sessions and says so in the markers', () => {
    const plan = planTurnRecovery(
      state([session('sess_1', { status: 'running', activeTurnId: 'turn_1', pendingApprovals: [approval] }), session('sess_2', { status: 'running', activeTurnId: 'turn_2', pendingUserInputs: [question] })], [turn('turn_1', 'sess_1'), turn('turn_2', 'sess_2')]),
      5,
    );
    expect(plan?.state.sessions.map((entry) => [entry.status, entry.pendingApprovals, entry.pendingUserInputs])).toEqual([['idle', [], []], ['idle', [], []]]);
    expect(plan?.entries.filter((entry) => entry.type === 'session')).toHaveLength(2);
    expect(plan?.markers.map((marker) => (marker.kind === 'interruption' ? marker.message : ''))).toEqual([
      'the server stopped during this turn; dropped unanswered: 1 approval request',
      'the server stopped during this turn; dropped unanswered: 1 question for the user',
    ]);
    expect([plan?.droppedApprovals, plan?.droppedUserInputs]).toEqual([1, 1]);
  });

  it('clears a stored idle session that still lists waiting requests', () => {
    const stale = state([session('sess_1', { pendingApprovals: [approval] })], []);
    expect(hasStaleTurns(stale)).toBe(true);
    const plan = planTurnRecovery(stale, 5);
    expect(plan?.markers).toEqual([]);
    expect(plan?.entries).toEqual([{ type: 'session', session: expect.objectContaining({ status: 'idle', pendingApprovals: [], pendingUserInputs: [] }) }]);
    expect(planTurnRecovery(state([session('sess_1', {})], []))).toBeUndefined();
  });
});

/**
 * Session state stored before approval requests carried `itemId` and `options` still reads:
 * its waiting lists (meaningless after a restart) read as empty, the rest as stored.
 */
import { describe, expect, it } from 'vitest';
import { SessionSchema } from '../../src/protocol/index.js';

const stored = {
  id: 'sess_1',
  conversationId: 'conv_1',
  parentSessionId: null,
  agent: 'default',
  model: 'mock/mock-model',
  status: 'running',
  activeTurnId: 'turn_1',
  queuedInputs: [],
  createdAt: 1,
  updatedAt: 2,
};

describe('stored session state', () => {
  it('reads pending approvals in the older shape as none, keeping everything else', () => {
    const oldApproval = { approvalId: 'appr_1', conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', callId: 'call_1', toolName: 'exec_command', arguments: { command: 'ls' }, executor: 'local', reason: 'asked', requestedAt: 3 };
    const session = SessionSchema.parse({ ...stored, pendingApprovals: [oldApproval] });
    expect(session.pendingApprovals).toEqual([]);
    expect(session.pendingUserInputs).toEqual([]);
    expect(session).toMatchObject({ status: 'running', activeTurnId: 'turn_1' });
  });

  it('keeps pending approvals and questions in the current shape', () => {
    const approval = { approvalId: 'appr_1', conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', callId: 'call_1', itemId: 'item_1', toolName: 'exec_command', arguments: {}, options: [{ decision: 'deny', label: 'Deny' }], reason: 'asked', requestedAt: 3 };
    const question = { requestId: 'input_1', conversationId: 'conv_1', sessionId: 'sess_1', turnId: 'turn_1', callId: 'call_2', itemId: 'item_2', question: 'Why?', allowFreeText: true, requestedAt: 4 };
    const session = SessionSchema.parse({ ...stored, pendingApprovals: [approval], pendingUserInputs: [question] });
    expect(session.pendingApprovals).toEqual([approval]);
    expect(session.pendingUserInputs).toEqual([question]);
  });
});

/**
 * foldMetadata (SPEC §4: last entry wins; deletions are entries): the last valid entry of
 * each state wins, invalid ones are reported and the one before is used.
 */
import { describe, expect, it } from 'vitest';
import { foldMetadata, type InvalidEntryReport } from '../../src/dao/metadata-log.js';
import type { LogEntry } from '../../src/storage/log-storage.js';
import { newConversation } from './fixtures.js';

function entries(values: unknown[]): LogEntry[] {
  return values.map((value, index) => ({ seq: index + 1, value }));
}

describe('foldMetadata', () => {
  const { conversation, session } = newConversation(1, 'First');
  const turn = { id: 'turn_1', sessionId: session.id, conversationId: conversation.id, status: 'running', steps: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, startedAt: 1, completedAt: null };

  it('takes the last valid entry of each state, keeping the order of first appearance', () => {
    const reports: InvalidEntryReport[] = [];
    const second = { ...session, id: 'sess_2' };
    const state = foldMetadata('conv_0001', entries([
      { type: 'conversation', conversation },
      { type: 'session', session: second },
      { type: 'session', session },
      { type: 'turn', turn },
      { type: 'conversation', conversation: { ...conversation, title: 'Second' } },
      { type: 'turn', turn: { ...turn, status: 'completed', completedAt: 2 } },
      { type: 'session', session: { ...second, status: 'running' } },
    ]), (report) => reports.push(report));
    expect(reports).toEqual([]);
    expect(state?.conversation.title).toBe('Second');
    expect(state?.sessions.map((entry) => [entry.id, entry.status])).toEqual([['sess_2', 'running'], [session.id, 'idle']]);
    expect(state?.turns.map((entry) => entry.status)).toEqual(['completed']);
    expect(state?.metadataSeq).toBe(7);
  });

  it('falls back to the previous valid entry when the last is invalid, and reports every bad entry it looks at in seq order', () => {
    const reports: InvalidEntryReport[] = [];
    const state = foldMetadata('conv_0001', entries([
      { type: 'conversation', conversation },
      { type: 'session', session },
      { type: 'conversation', conversation: { ...conversation, workLocation: [] } },
      'not an object',
      { type: 'session', session: { id: session.id, status: 'weird' } },
      { type: 'unknown_kind' },
    ]), (report) => reports.push(report));
    expect(state?.conversation).toEqual(conversation);
    expect(state?.sessions).toEqual([session]);
    expect(reports.map((report) => report.seq)).toEqual([3, 4, 5, 6]);
    expect(reports[0]?.message).toMatch(/conversation\.workLocation/);
    expect(reports.every((report) => report.stream === 'metadata' && report.conversationId === 'conv_0001')).toBe(true);
  });

  it('treats a deletion as the end of the conversation, and a later conversation entry as its return', () => {
    const deleted = entries([{ type: 'conversation', conversation }, { type: 'session', session }, { type: 'conversation_deleted', conversationId: conversation.id, deletedAt: 5 }]);
    expect(foldMetadata('conv_0001', deleted, () => undefined)).toBeUndefined();
    const restored = entries([...deleted.map((entry) => entry.value), { type: 'conversation', conversation }]);
    expect(foldMetadata('conv_0001', restored, () => undefined)?.sessions).toEqual([session]);
    expect(foldMetadata('conv_0001', [], () => undefined)).toBeUndefined();
  });
});

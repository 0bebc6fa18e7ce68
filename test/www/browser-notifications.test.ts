/**
 * The text of the web UI's browser notification at a turn's end: a turn that completed with an
 * answer that may be incomplete (cut at the output limit, stopped by the content filter) is not
 * announced as a plain completion.
 */
import { describe, expect, it } from 'vitest';
import type { AnyNotification, Turn } from '../../src/protocol/index.js';
import { notificationText } from '../../src/www/client/notification-text.js';

const base: Turn = { id: 'turn_1', sessionId: 'sess_1', conversationId: 'conv_1', status: 'completed', steps: 1, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, startedAt: 1, completedAt: 2 };
const ended = (turn: Partial<Turn>): AnyNotification => ({ method: 'turn/completed', params: { conversationId: 'conv_1', turn: { ...base, ...turn } } }) as AnyNotification;

describe('browser notification of a turn end', () => {
  it('names why a completed turn may be incomplete', () => {
    expect(notificationText(ended({ stopReason: 'max_tokens' }))).toBe('Turn completed: output limit reached');
    expect(notificationText(ended({ stopReason: 'refusal' }))).toBe('Turn completed: refused by the provider');
  });

  it('says a normal finish and a failure as before', () => {
    expect(notificationText(ended({ stopReason: 'end_turn' }))).toBe('Turn completed');
    expect(notificationText(ended({}))).toBe('Turn completed');
    expect(notificationText(ended({ status: 'failed', stopReason: 'model_error', error: 'HTTP 500' }))).toBe('Turn failed: HTTP 500');
  });
});

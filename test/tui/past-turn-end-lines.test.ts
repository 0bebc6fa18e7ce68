/**
 * A conversation opened again in the terminal UI shows the end line of each past turn (and the
 * stop reason of one whose answer may be incomplete) after that turn's last item, as it was
 * shown live, whichever page of older items brings the turn in; a turn that ends while watched
 * gets one line, never two.
 */
import { describe, expect, it } from 'vitest';
import type { Item, StoredItem, Turn } from '../../src/protocol/index.js';
import { TranscriptModel } from '../../src/tui/transcript-model.js';

const CONVERSATION = { id: 'conv_1', title: 't', workLocation: [{ executor: 'local', cwd: '/' }], rootSessionId: 'sess_1', createdAt: 0, updatedAt: 0 };

function turn(id: string, fields: Partial<Turn> = {}): Turn {
  return { id, sessionId: 'sess_1', conversationId: 'conv_1', status: 'completed', steps: 1, usage: { inputTokens: 10, outputTokens: 5 }, startedAt: 0, completedAt: 2_000, ...fields } as Turn;
}

function stored(seq: number, turnId: string, kind: 'user_message' | 'assistant_message'): StoredItem {
  const item = kind === 'user_message' ? { kind, text: `question ${seq}` } : { kind, model: 'm', text: `answer ${seq}` };
  return { seq, item: { id: `item_${seq}`, sessionId: 'sess_1', turnId, createdAt: 0, completedAt: 0, status: 'completed', ...item } as Item };
}

/** What the transcript shows, one string per entry: item texts and notice texts. */
function shown(model: TranscriptModel): string[] {
  return model.entries.map((entry) => entry.notice?.text ?? (entry.item as { text: string }).text);
}

describe('end lines of past turns', () => {
  it('follow each turn’s last item, with the stop reason, across pages loaded backward', () => {
    const model = new TranscriptModel();
    model.reset({ conversation: CONVERSATION, sessions: [], turns: [turn('turn_1', { stopReason: 'max_tokens' }), turn('turn_2', { status: 'failed', error: 'the model is unavailable' }), turn('turn_3', { status: 'running', completedAt: null })] });
    // The newest page: the end of turn 2 and the running turn 3.
    model.prependStored([stored(3, 'turn_2', 'user_message'), stored(4, 'turn_2', 'assistant_message'), stored(5, 'turn_3', 'user_message')], true);
    expect(shown(model)).toEqual(['question 3', 'answer 4', 'turn failed · 1 model call · 10 in / 5 out · 2.0 s · the model is unavailable', 'question 5']);
    expect(model.entries[2]?.notice?.tone).toBe('error');
    // The page before: turn 1, cut at the output limit.
    model.prependStored([stored(1, 'turn_1', 'user_message'), stored(2, 'turn_1', 'assistant_message')], false);
    expect(shown(model).slice(0, 3)).toEqual(['question 1', 'answer 2', "turn completed · 1 model call · 10 in / 5 out · 2.0 s\nthe answer was cut at the model's output limit (max_tokens) and may be incomplete"]);
    expect(model.entries[2]?.notice?.tone).toBe('warning');
    // The running turn ends while watched: its line comes once, at the end.
    const ended = turn('turn_3', { completedAt: 3_000 });
    model.apply({ method: 'turn/completed', params: { conversationId: 'conv_1', turn: ended } } as never);
    model.apply({ method: 'turn/completed', params: { conversationId: 'conv_1', turn: ended } } as never);
    expect(shown(model).filter((text) => text.startsWith('turn '))).toHaveLength(3);
    expect(shown(model).at(-1)).toMatch(/^turn completed · 1 model call · 10 in \/ 5 out · 3\.0 s$/);
  });

  it('is placed once even when a page splits a turn: after its last item, in the newer page', () => {
    const model = new TranscriptModel();
    model.reset({ conversation: CONVERSATION, sessions: [], turns: [turn('turn_1')] });
    model.prependStored([stored(3, 'turn_1', 'assistant_message')], true);
    model.prependStored([stored(1, 'turn_1', 'user_message'), stored(2, 'turn_1', 'assistant_message')], false);
    expect(shown(model)).toEqual(['question 1', 'answer 2', 'answer 3', 'turn completed · 1 model call · 10 in / 5 out · 2.0 s']);
  });
});

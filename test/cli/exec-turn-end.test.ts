/** The lines plain `openvaala exec` ends a turn with, for every way a turn ends. */
import { describe, expect, it } from 'vitest';
import { describeTurnEnd } from '../../src/cli/exec-turn-end.js';
import type { Turn } from '../../src/protocol/index.js';

const base: Turn = { id: 'turn_1', sessionId: 'sess_1', conversationId: 'conv_1', status: 'completed', steps: 1, usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 }, startedAt: 1, completedAt: 2 };
const context = { conversationId: 'conv_1', resumeCommand: 'openvaala exec --resume conv_1 "…"', shown: (reason: string) => reason === 'said already' };

describe('describeTurnEnd', () => {
  it('says only the status line for a completed turn', () => {
    expect(describeTurnEnd(base, context)).toBe('turn completed · 1 model call · 10 input + 2 output tokens · conversation conv_1\n');
  });

  it('says why a turn failed when nothing said it during the turn, and how to go on', () => {
    const turn: Turn = { ...base, status: 'failed', steps: 0, stopReason: 'model_error', error: 'the turn could not continue: disk full' };
    expect(describeTurnEnd(turn, context)).toBe(
      'turn failed · 0 model calls · 10 input + 2 output tokens · conversation conv_1\nerror: the turn could not continue: disk full\ncontinue it with: openvaala exec --resume conv_1 "…"\n',
    );
  });

  it('does not repeat a reason said during the turn', () => {
    const turn: Turn = { ...base, status: 'failed', stopReason: 'model_error', error: 'said already' };
    expect(describeTurnEnd(turn, context)).not.toContain('said already');
  });

  it('says why an interrupted turn stopped', () => {
    const turn: Turn = { ...base, status: 'interrupted', stopReason: 'step_limit', error: 'step limit of 3 reached' };
    expect(describeTurnEnd(turn, context).split('\n').slice(1)).toEqual(['step limit of 3 reached', 'continue it with: openvaala exec --resume conv_1 "…"', '']);
  });

  it('does not offer a refused prompt as if sending it again would work', () => {
    const turn: Turn = { ...base, status: 'failed', steps: 0, stopReason: 'hook_refused', error: 'the prompt was refused by a user_prompt_submit hook: no' };
    const text = describeTurnEnd(turn, context);
    expect(text).toContain('error: the prompt was refused by a user_prompt_submit hook: no\n');
    expect(text).toContain('the prompt was not run; to go on, send another prompt: openvaala exec --resume conv_1 "…"\n');
    expect(text).not.toContain('continue it with');
  });
});

/** The lines plain `openvaala exec` ends a turn with, and its exit code, for every way a turn ends. */
import { describe, expect, it } from 'vitest';
import { describeTurnEnd, execExitCodeOf } from '../../src/cli/exec-turn-end.js';
import { TurnStopReasonSchema, type Turn, type TurnStopReason } from '../../src/protocol/index.js';

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

  it.each<[TurnStopReason, string]>([
    ['max_tokens', "warning: the answer was cut at the model's output limit (max_tokens) and may be incomplete"],
    ['refusal', "warning: the provider's content filter stopped the answer (refusal); it may be incomplete"],
    ['step_limit', 'warning: the agent stopped at its step limit (step_limit) before it finished; the work may be incomplete'],
  ])('says when a completed turn ended with %s, and how to go on', (stopReason, warning) => {
    expect(describeTurnEnd({ ...base, stopReason }, context).split('\n')).toEqual([
      'turn completed · 1 model call · 10 input + 2 output tokens · conversation conv_1',
      warning,
      'continue it with: openvaala exec --resume conv_1 "…"',
      '',
    ]);
  });

  it('says why a turn that the server stopped was interrupted, having no error of its own', () => {
    const turn: Turn = { ...base, status: 'interrupted', stopReason: 'shutdown' };
    expect(describeTurnEnd(turn, context).split('\n').slice(1)).toEqual(['warning: the server stopped during the turn (shutdown) before the agent finished', 'continue it with: openvaala exec --resume conv_1 "…"', '']);
  });
});

describe('execExitCodeOf', () => {
  /** The status each reason is recorded with (docs/protocol.md, "Stop reasons"), and the code exec exits with. */
  const cases: Record<TurnStopReason, [Turn['status'], number]> = {
    end_turn: ['completed', 0],
    max_tokens: ['completed', 1],
    refusal: ['completed', 1],
    model_error: ['failed', 1],
    hook_refused: ['failed', 1],
    user_interrupt: ['interrupted', 2],
    shutdown: ['interrupted', 2],
    step_limit: ['interrupted', 2],
    crash_recovery: ['interrupted', 2],
  };

  it.each(TurnStopReasonSchema.options)('%s', (stopReason) => {
    const [status, code] = cases[stopReason];
    expect(execExitCodeOf({ status, stopReason })).toBe(code);
  });

  it('exits 2 for an external agent that completed at its step limit, as for the built-in one, and by the status for an older turn', () => {
    expect(execExitCodeOf({ status: 'completed', stopReason: 'step_limit' })).toBe(2);
    expect(execExitCodeOf({ status: 'completed' })).toBe(0);
    expect(execExitCodeOf({ status: 'failed' })).toBe(1);
    expect(execExitCodeOf({ status: 'interrupted' })).toBe(2);
  });
});

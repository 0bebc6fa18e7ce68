/**
 * The one rule every client words a turn's end by (src/protocol/stop-reasons.ts): every stop
 * reason of the protocol has words, and a client says more than the status exactly when the
 * status and error would let a reader take the turn for a normal finish or leave them without
 * the reason.
 */
import { describe, expect, it } from 'vitest';
import { TurnStopReasonSchema, type Turn, type TurnStopReason } from '../../src/protocol/index.js';
import { describeStopReason, lastTurnMark, STOP_REASON_TEXT, turnEndNotice } from '../../src/protocol/stop-reasons.js';

/** The status and error each reason is recorded with by the runtime (docs/protocol.md, "Stop reasons"). */
const RECORDED: Record<TurnStopReason, Pick<Turn, 'status' | 'error'>> = {
  end_turn: { status: 'completed' },
  max_tokens: { status: 'completed' },
  refusal: { status: 'completed' },
  user_interrupt: { status: 'interrupted' },
  shutdown: { status: 'interrupted' },
  step_limit: { status: 'interrupted', error: 'step limit of 3 reached' },
  crash_recovery: { status: 'interrupted', error: 'the server stopped while the turn ran' },
  model_error: { status: 'failed', error: 'HTTP 500: down' },
  hook_refused: { status: 'failed', error: 'the prompt was refused by a user_prompt_submit hook' },
};

describe('stop reasons in words', () => {
  it('words every reason of the protocol, and gives a consequence to every one but a normal finish', () => {
    expect(Object.keys(STOP_REASON_TEXT).sort()).toEqual([...TurnStopReasonSchema.options].sort());
    for (const reason of TurnStopReasonSchema.options) {
      expect(describeStopReason(reason).label).not.toBe('');
      if (reason === 'end_turn') expect(describeStopReason(reason).consequence).toBeUndefined();
      else expect(describeStopReason(reason).consequence).toContain(`(${reason})`);
    }
  });

  it('reads a reason it does not know as its code, as no normal finish', () => {
    expect(describeStopReason('pause_turn')).toEqual({ label: 'pause_turn', consequence: 'the turn ended for a reason this client does not know (pause_turn)' });
    expect(turnEndNotice({ status: 'completed', stopReason: 'pause_turn' as TurnStopReason })).toContain('(pause_turn)');
  });
});

describe('what a turn end adds to its status and error', () => {
  it.each(TurnStopReasonSchema.options)('%s, as the runtime records it', (reason) => {
    const notice = turnEndNotice({ ...RECORDED[reason], stopReason: reason });
    // A completed turn cut short reads as whole without it; a shutdown has no error to say why; the rest say it themselves.
    const expected: TurnStopReason[] = ['max_tokens', 'refusal', 'shutdown'];
    expect(notice).toBe(expected.includes(reason) ? STOP_REASON_TEXT[reason].consequence : undefined);
  });

  it('tells an external agent that completed at its step limit, and a turn of an older log nothing', () => {
    expect(turnEndNotice({ status: 'completed', stopReason: 'step_limit' })).toBe(STOP_REASON_TEXT.step_limit.consequence);
    expect(turnEndNotice({ status: 'completed' })).toBeUndefined();
    expect(turnEndNotice({ status: 'failed', error: 'x' })).toBeUndefined();
  });
});

describe('how a conversation list marks a conversation by its last turn', () => {
  it.each(TurnStopReasonSchema.options)('%s, as the runtime records it', (reason) => {
    const mark = lastTurnMark({ lastTurnStatus: RECORDED[reason].status, lastTurnStopReason: reason });
    if (RECORDED[reason].status === 'failed') expect(mark).toEqual({ kind: 'failed', text: STOP_REASON_TEXT[reason].label });
    else if (RECORDED[reason].status === 'completed' && reason !== 'end_turn') expect(mark).toEqual({ kind: 'incomplete', text: STOP_REASON_TEXT[reason].label });
    else expect(mark).toBeUndefined();
  });

  it('marks a failed turn of a record without a reason, and nothing else without one', () => {
    expect(lastTurnMark({ lastTurnStatus: 'failed' })).toEqual({ kind: 'failed', text: 'failed' });
    expect(lastTurnMark({ lastTurnStatus: 'completed' })).toBeUndefined();
    expect(lastTurnMark({ lastTurnStatus: null })).toBeUndefined();
    expect(lastTurnMark({ lastTurnStatus: 'completed', lastTurnStopReason: 'max_tokens' })).toEqual({ kind: 'incomplete', text: 'output limit reached' });
  });
});

/**
 * What each way a turn can end (`Turn.stopReason`, `TurnStopReasonSchema` in entities.ts;
 * docs/protocol.md "Stop reasons") means to a person, and when a client must say more than the
 * turn's status: a turn that `completed` with its answer cut at the model's output limit or
 * stopped by the provider's content filter reads as whole unless the client says otherwise.
 * Every client words a turn's end from here (exec, `conversations show`, the terminal UI, the
 * web UI, notifications, the Codex app-server adapter), so they say the same thing.
 *
 * Imports types only: the exec client loads this module without the protocol's schemas.
 */
import type { Turn, TurnStopReason } from './entities.js';

/** How one stop reason reads. */
export interface StopReasonText {
  /** A few words for a turn's end line: `output limit reached`. */
  label: string;
  /**
   * What the end means for the answer or the work, as a sentence without a capital or a full
   * stop, naming the reason's code in parentheses: `the answer was cut at the model's output
   * limit (max_tokens) and may be incomplete`. Absent for a normal finish (`end_turn`).
   */
  consequence?: string;
}

/** Each stop reason of the protocol, in words. */
export const STOP_REASON_TEXT: Readonly<Record<TurnStopReason, StopReasonText>> = {
  end_turn: { label: 'finished' },
  max_tokens: { label: 'output limit reached', consequence: "the answer was cut at the model's output limit (max_tokens) and may be incomplete" },
  refusal: { label: 'refused by the provider', consequence: "the provider's content filter stopped the answer (refusal); it may be incomplete" },
  step_limit: { label: 'step limit reached', consequence: 'the agent stopped at its step limit (step_limit) before it finished; the work may be incomplete' },
  user_interrupt: { label: 'interrupted', consequence: 'the turn was interrupted (user_interrupt) before the agent finished' },
  shutdown: { label: 'server stopped', consequence: 'the server stopped during the turn (shutdown) before the agent finished' },
  model_error: { label: 'model error', consequence: 'the model call failed (model_error)' },
  hook_refused: { label: 'refused by a hook', consequence: 'a user_prompt_submit hook refused the prompt (hook_refused); it was not run' },
  crash_recovery: { label: 'server crashed', consequence: 'the server running the turn stopped unexpectedly (crash_recovery) before the agent finished' },
};

/**
 * A stop reason in words. A reason this code does not know (a newer server's) reads as its
 * code, and as a turn that did not finish normally.
 * @param reason `Turn.stopReason`
 */
export function describeStopReason(reason: string): StopReasonText {
  const known = (STOP_REASON_TEXT as Readonly<Record<string, StopReasonText>>)[reason];
  return known ?? { label: reason, consequence: `the turn ended for a reason this client does not know (${reason})` };
}

/**
 * What a client adds to a turn's end, beyond its status and error, about why it ended; the
 * rule every client follows:
 * - a turn that `completed` for any reason but `end_turn` (cut at the output limit, stopped by
 *   the content filter, an external agent stopped at its step limit): the reason's consequence,
 *   since the status alone says the answer is whole;
 * - a turn that failed or was interrupted: its status says it did not finish, and its `error`
 *   says why when it has one (a model error, the step limit, a refused prompt, a crash); the
 *   consequence only when it has none and another party ended it (`shutdown`). A person's own
 *   interruption (`user_interrupt`) needs no more words.
 * @returns the sentence ({@link StopReasonText.consequence}), or undefined when nothing more is to be said
 *   (a normal finish, or a turn recorded before stop reasons were: no `stopReason`)
 */
export function turnEndNotice(turn: Pick<Turn, 'status' | 'stopReason' | 'error'>): string | undefined {
  const reason = turn.stopReason;
  if (reason === undefined || reason === 'end_turn' || turn.status === 'running') return undefined;
  if (turn.status !== 'completed' && (turn.error?.trim() || reason === 'user_interrupt')) return undefined;
  return describeStopReason(reason).consequence;
}

/** How a conversation list marks a conversation by the end of its last turn; see {@link lastTurnMark}. */
export interface LastTurnMark {
  /** `failed`: the last turn failed; `incomplete`: it completed, but its answer may be cut. */
  kind: 'failed' | 'incomplete';
  /** A few words: the stop reason's label (`output limit reached`, `model error`), or `failed` without one. */
  text: string;
}

/**
 * The mark a conversation list (the terminal UI's picker, the web UI's list) shows for a
 * conversation's last turn, from `ConversationSummary.lastTurnStatus` and `lastTurnStopReason`:
 * a failed turn, with its reason when known; a turn that completed but not normally (cut at the
 * output limit, stopped by the content filter), since its status alone reads as whole. None for
 * a normal finish, an interruption, or a turn still running (lists show that on their own).
 * `openvaala conversations list` writes the same label beside the status.
 * @param summary the two fields of a `ConversationSummary` (a record written before stop reasons were kept has no reason)
 */
export function lastTurnMark(summary: { lastTurnStatus?: string | null | undefined; lastTurnStopReason?: string | undefined }): LastTurnMark | undefined {
  const label = summary.lastTurnStopReason === undefined || summary.lastTurnStopReason === 'end_turn' ? undefined : describeStopReason(summary.lastTurnStopReason).label;
  if (summary.lastTurnStatus === 'failed') return { kind: 'failed', text: label ?? 'failed' };
  if (summary.lastTurnStatus === 'completed' && label !== undefined) return { kind: 'incomplete', text: label };
  return undefined;
}

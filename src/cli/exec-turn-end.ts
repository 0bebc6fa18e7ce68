/**
 * What plain `openvaala exec` says on stderr when its turn ends: how it ended, why when it did
 * not complete (every kind of failure: a model error, a refused prompt, a context that does not
 * fit, the step limit…) or completed with an answer that may be incomplete (cut at the model's
 * output limit, stopped by the content filter), and how to go on; and the exit code it ends with.
 */
import type { Turn } from '../protocol/index.js';
import { turnEndNotice } from '../protocol/stop-reasons.js';
import { ExecExitCode } from './exit-codes.js';

/** What {@link describeTurnEnd} needs besides the turn. */
export interface TurnEndContext {
  /** The conversation the turn is in. */
  conversationId: string;
  /** The command that continues the conversation (`openvaala exec --resume <id> "…"`). */
  resumeCommand: string;
  /**
   * Whether the reason was printed already during the turn (a failed model call says its
   * message when it is recorded): it is said once.
   */
  shown(reason: string): boolean;
}

/**
 * The lines (each ending with a newline) that close a turn's output: status, model calls,
 * tokens and conversation; the turn's error when it failed or was interrupted and had not been
 * said; a warning when it ended for a reason other than a normal finish that its status and
 * error do not tell (`turnEndNotice`: an answer cut at the output limit or stopped by the
 * content filter); and, unless it finished normally, the command to go on with.
 */
export function describeTurnEnd(turn: Turn, context: TurnEndContext): string {
  const usage = turn.usage;
  const calls = `${turn.steps} model ${turn.steps === 1 ? 'call' : 'calls'}`;
  const lines = [`turn ${turn.status} · ${calls} · ${usage.inputTokens} input + ${usage.outputTokens} output tokens · conversation ${context.conversationId}`];
  const reason = turn.error?.trim();
  if (turn.status !== 'completed' && reason && !context.shown(reason)) lines.push(turn.status === 'failed' ? `error: ${reason}` : reason);
  const notice = turnEndNotice(turn);
  if (notice) lines.push(`warning: ${notice}`);
  // Sending the same prompt again would be refused the same way.
  if (turn.stopReason === 'hook_refused') lines.push(`the prompt was not run; to go on, send another prompt: ${context.resumeCommand}`);
  else if (turn.status !== 'completed' || notice) lines.push(`continue it with: ${context.resumeCommand}`);
  return lines.map((line) => `${line}\n`).join('');
}

/**
 * The exit code exec ends with for its turn (README.md, "Commands"): 0 for a normal finish;
 * 1 for a failed turn and for a completed one whose answer may be incomplete (`max_tokens`,
 * `refusal`), as Codex's `exec` fails a turn whose model response came back incomplete, so a
 * script never takes a cut answer for a whole one; 2 for an interrupted turn and for one an
 * external agent stopped at its step limit (as the built-in loop's step limit).
 */
export function execExitCodeOf(turn: Pick<Turn, 'status' | 'stopReason'>): number {
  if (turn.status === 'completed') {
    if (turn.stopReason === undefined || turn.stopReason === 'end_turn') return ExecExitCode.completed;
    return turn.stopReason === 'step_limit' ? ExecExitCode.interrupted : ExecExitCode.failed;
  }
  return turn.status === 'interrupted' ? ExecExitCode.interrupted : ExecExitCode.failed;
}

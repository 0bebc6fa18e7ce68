/**
 * What plain `openvaala exec` says on stderr when its turn ends: how it ended, why when it did
 * not complete (every kind of failure: a model error, a refused prompt, a context that does not
 * fit, the step limit…), and how to go on.
 */
import type { Turn } from '../protocol/index.js';

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
 * said; and, unless it completed, the command to go on with.
 */
export function describeTurnEnd(turn: Turn, context: TurnEndContext): string {
  const usage = turn.usage;
  const calls = `${turn.steps} model ${turn.steps === 1 ? 'call' : 'calls'}`;
  const lines = [`turn ${turn.status} · ${calls} · ${usage.inputTokens} input + ${usage.outputTokens} output tokens · conversation ${context.conversationId}`];
  const reason = turn.error?.trim();
  if (turn.status !== 'completed' && reason && !context.shown(reason)) lines.push(turn.status === 'failed' ? `error: ${reason}` : reason);
  // Sending the same prompt again would be refused the same way.
  if (turn.stopReason === 'hook_refused') lines.push(`the prompt was not run; to go on, send another prompt: ${context.resumeCommand}`);
  else if (turn.status !== 'completed') lines.push(`continue it with: ${context.resumeCommand}`);
  return lines.map((line) => `${line}\n`).join('');
}

/**
 * Why a prompt turn stopped, in the Agent Client Protocol's terms
 * (https://agentclientprotocol.com/protocol/v1/prompt-turn#stop-reasons), from how the
 * OpenVaala turn ended (`Turn.status` and `Turn.stopReason`, `src/protocol/entities.ts`).
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { Turn } from '../../protocol/index.js';

/**
 * The ACP stop reason of an ended turn: the model's output limit `max_tokens`; a content
 * filter `refusal`; the step limit (`maxSteps`) `max_turn_requests`; an interruption
 * `cancelled`; a completed turn `end_turn`.
 * @returns undefined for a failed turn (model error, refused by a hook, lost in a crash), which
 *   ACP reports as an error rather than a stop reason
 */
export function stopReason(turn: Turn): acp.StopReason | undefined {
  // The reason first: a turn stopped by the step limit is recorded as interrupted.
  switch (turn.stopReason) {
    case 'max_tokens':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    case 'step_limit':
      return 'max_turn_requests';
    case 'user_interrupt':
    case 'shutdown':
      return 'cancelled';
    default:
      break;
  }
  if (turn.status === 'interrupted') return 'cancelled';
  return turn.status === 'completed' ? 'end_turn' : undefined;
}

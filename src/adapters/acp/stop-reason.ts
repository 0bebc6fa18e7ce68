/**
 * Why a prompt turn stopped, in the Agent Client Protocol's terms
 * (https://agentclientprotocol.com/protocol/v1/prompt-turn#stop-reasons), from how the
 * OpenVaala turn ended (`Turn.status` and `Turn.stopReason`, `src/protocol/entities.ts`).
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { Turn } from '../../protocol/index.js';

/**
 * The ACP stop reason of an ended turn: an interrupted turn is `cancelled`; the model's output
 * limit `max_tokens`; a content filter `refusal`; the step limit `max_turn_requests`; a
 * completed turn `end_turn`.
 * @returns undefined for a failed turn (model error, refused by a hook, lost in a crash), which
 *   ACP reports as an error rather than a stop reason
 */
export function stopReason(turn: Turn): acp.StopReason | undefined {
  if (turn.status === 'interrupted') return 'cancelled';
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
  return turn.status === 'completed' ? 'end_turn' : undefined;
}

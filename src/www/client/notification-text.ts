/**
 * The text of the web UI's browser notifications (shown by `browser-notifications.ts`), without
 * the browser: a turn that completed (with its stop reason when its answer may be incomplete,
 * `turnEndNotice`) or failed, a tool call that needs approval, a question of the agent.
 */
import type { AnyNotification } from '../../protocol/methods.js';
import { describeStopReason, turnEndNotice } from '../../protocol/stop-reasons.js';

/** The text of the notification an event deserves, or undefined for none. */
export function notificationText(event: AnyNotification): string | undefined {
  if (event.method === 'turn/completed') {
    const turn = event.params.turn;
    // A cut answer is not announced as a plain completion (`turnEndNotice`).
    if (turn.status === 'completed') return turn.stopReason !== undefined && turnEndNotice(turn) ? `Turn completed: ${describeStopReason(turn.stopReason).label}` : 'Turn completed';
    if (turn.status === 'failed') return `Turn failed${turn.error ? `: ${turn.error}` : ''}`;
    return undefined;
  }
  if (event.method === 'approval/requested') return `Approval needed: ${event.params.approval.toolName}`;
  if (event.method === 'input/requested') return `Question: ${event.params.request.question}`;
  return undefined;
}

/**
 * Codex's approval requests relayed to OpenVaala clients (codex-app-server v2:
 * `item/commandExecution/requestApproval` answered with a `CommandExecutionApprovalDecision`,
 * `item/fileChange/requestApproval` with a `FileChangeApprovalDecision`). allow once →
 * `accept`, for the session → `acceptForSession`, deny → `decline`, deny and interrupt →
 * `cancel` (Codex interrupts the turn itself). A command request lists the decisions it takes
 * in `availableDecisions`; a wanted one that is not listed falls back to `accept` / `cancel`.
 */
import type { ApprovalAnswer } from '../approvals/broker.js';
import type { TurnContext } from '../turn-runner.js';
import type { ExternalTurnItems } from './turn-items.js';

/** The fields of an approval request read here. */
export interface CodexApprovalRequest {
  threadId: string;
  turnId: string;
  itemId: string;
  command?: string | null;
  cwd?: string | null;
  reason?: string | null;
  /** Command requests: the decisions Codex takes (strings, or objects for policy amendments). */
  availableDecisions?: unknown[] | null;
}

/** Relays one approval request and returns Codex's answer (`{decision}`). */
export async function relayCodexApproval(method: string, request: CodexApprovalRequest, items: ExternalTurnItems, context: TurnContext, cancelTurn: () => void): Promise<{ decision: string }> {
  const isCommand = method === 'item/commandExecution/requestApproval';
  // The item was announced by item/started; a request for an unknown one announces it.
  const call =
    items.toolCall(request.itemId) ??
    items.startToolCall(
      request.itemId,
      isCommand
        ? { toolName: 'exec_command', arguments: { command: request.command ?? '' }, details: { kind: 'command', command: request.command ?? '', cwd: request.cwd ?? context.cwd } }
        : { toolName: 'apply_patch', arguments: {}, details: { kind: 'fileChange', changes: [] } },
    );
  const available = request.availableDecisions ?? ['accept', 'acceptForSession', 'decline', 'cancel'];
  const takes = (decision: string) => available.includes(decision);
  let answer: ApprovalAnswer;
  try {
    answer = await context.requestApproval({
      callId: call.callId,
      itemId: call.itemId,
      toolName: call.toolName,
      arguments: call.arguments,
      ...(call.details ? { details: call.details } : {}),
      offersSession: takes('acceptForSession'),
      reason: `asked by Codex${request.reason ? `: ${request.reason}` : ''}`,
    });
  } catch {
    // The turn was interrupted while waiting.
    return { decision: 'cancel' };
  }
  switch (answer.decision) {
    case 'allow_session':
      return { decision: takes('acceptForSession') ? 'acceptForSession' : 'accept' };
    case 'allow_once':
    case 'allow_prefix':
      return { decision: 'accept' };
    case 'deny':
      return { decision: takes('decline') ? 'decline' : 'cancel' };
    default:
      cancelTurn();
      return { decision: 'cancel' };
  }
}

/**
 * Approvals between the runtime and a Codex client (docs/protocol.md, "Server-to-client
 * requests"): an OpenVaala `approval/request` becomes `item/commandExecution/requestApproval`
 * (a command, or any other tool, described as one line) or `item/fileChange/requestApproval`
 * (file changes); the client's Codex decision becomes an OpenVaala decision.
 */
import { toCodexId } from '../../protocol/codex-ids.js';
import type { ApprovalDecision, ApprovalRequest } from '../../protocol/index.js';
import { codexCommandOf } from './items.js';
import { CodexErrorCodes, CodexRpcError } from './wire.js';

/** A Codex server request to send for an approval. */
export interface CodexApprovalRequest {
  method: 'item/commandExecution/requestApproval' | 'item/fileChange/requestApproval';
  params: Record<string, unknown>;
}

/** The one-line description of a call that is neither a command nor a file change: `tool {json arguments}`, cut to 2000 characters. */
function describeCall(request: ApprovalRequest): string {
  const text = `${request.toolName} ${JSON.stringify(request.arguments ?? {})}`;
  return text.length > 2000 ? `${text.slice(0, 1999)}…` : text;
}

/**
 * The Codex request for an approval. Codex has approval requests only for commands and file
 * changes; any other tool (an MCP tool, say) is asked as a command approval whose `command` is
 * the tool and its arguments, so the person still sees what runs.
 */
export function codexApprovalRequestOf(request: ApprovalRequest): CodexApprovalRequest {
  const base = { threadId: toCodexId(request.conversationId), turnId: toCodexId(request.turnId), itemId: toCodexId(request.itemId), startedAtMs: Math.round(request.requestedAt) };
  if (request.details?.kind === 'fileChange') {
    return { method: 'item/fileChange/requestApproval', params: { ...base, reason: request.reason === '' ? null : request.reason, grantRoot: null } };
  }
  const command = request.details?.kind === 'command' ? request.details.command : describeCall(request);
  return {
    method: 'item/commandExecution/requestApproval',
    params: {
      ...base,
      kind: 'command',
      command: request.details?.kind === 'command' ? codexCommandOf(command) : command,
      cwd: request.details?.kind === 'command' ? request.details.cwd : null,
      commandActions: [{ type: 'unknown', command }],
      reason: request.reason === '' ? null : request.reason,
      proposedExecpolicyAmendment: request.proposedPrefix ?? null,
    },
  };
}

/**
 * A Codex decision (`CommandExecutionApprovalDecision` / `FileChangeApprovalDecision`) as an
 * OpenVaala answer: `accept` → allow once, `acceptForSession` → allow for the session,
 * `acceptWithExecpolicyAmendment` → allow the command prefix, `decline` → deny (the turn goes
 * on), `cancel` → deny and interrupt the turn.
 * @throws CodexRpcError -32602 for an answer that is none of these
 */
export function decisionOf(result: unknown): { decision: ApprovalDecision; prefix?: string[] } {
  const decision = (result as { decision?: unknown } | undefined)?.decision;
  if (decision === 'accept') return { decision: 'allow_once' };
  if (decision === 'acceptForSession') return { decision: 'allow_session' };
  if (decision === 'decline') return { decision: 'deny' };
  if (decision === 'cancel') return { decision: 'deny_interrupt' };
  if (decision && typeof decision === 'object' && 'acceptWithExecpolicyAmendment' in decision) {
    const amendment = (decision as { acceptWithExecpolicyAmendment?: { execpolicy_amendment?: unknown } }).acceptWithExecpolicyAmendment?.execpolicy_amendment;
    if (Array.isArray(amendment) && amendment.length > 0 && amendment.every((word) => typeof word === 'string')) return { decision: 'allow_prefix', prefix: amendment as string[] };
  }
  throw new CodexRpcError(CodexErrorCodes.invalidParams, `approval answer: result.decision must be "accept", "acceptForSession", "decline", "cancel" or {acceptWithExecpolicyAmendment: {execpolicy_amendment: [words]}}, got ${JSON.stringify(decision)?.slice(0, 200)}`);
}

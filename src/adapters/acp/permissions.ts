/**
 * OpenVaala approval requests as Agent Client Protocol permission requests
 * (https://agentclientprotocol.com/protocol/v1/tool-calls#requesting-permission): the server's
 * options (`src/protocol/approval-options.ts`) become ACP permission options whose ids are the
 * decisions, and the option the editor selects is the decision sent back.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { ServerRequestResult } from '../../client/runtime-client.js';
import type { ApprovalDecision, ApprovalOption, ApprovalRequest } from '../../protocol/index.js';
import { diffContent, toolKind, toolLocations, toolTitle } from './tool-calls.js';

/** The ACP kind of each decision (ACP knows once/always for allow and reject). */
const KINDS: Record<ApprovalDecision, acp.PermissionOptionKind> = {
  allow_once: 'allow_once',
  allow_session: 'allow_always',
  allow_prefix: 'allow_always',
  deny: 'reject_once',
  deny_interrupt: 'reject_once',
};

/** The server's options as ACP permission options, in the server's order; `optionId` is the decision. */
export function permissionOptions(options: ApprovalOption[]): acp.PermissionOption[] {
  return options.map((option) => ({ optionId: option.decision, name: option.label, kind: KINDS[option.decision] }));
}

/**
 * The `session/request_permission` params for an approval request.
 * @param sessionId the ACP session (the conversation id)
 * @param root the conversation's working directory, for the locations of file changes
 */
export function permissionRequest(sessionId: string, approval: ApprovalRequest, root: string): acp.RequestPermissionRequest {
  const facts = { toolName: approval.toolName, arguments: approval.arguments, details: approval.details };
  const locations = toolLocations(facts, root);
  const content = diffContent(facts, root);
  return {
    sessionId,
    toolCall: {
      toolCallId: approval.itemId,
      title: toolTitle(facts),
      kind: toolKind(facts),
      status: 'pending',
      rawInput: approval.arguments,
      ...(locations.length > 0 ? { locations } : {}),
      ...(content.length > 0 ? { content } : {}),
    },
    options: permissionOptions(approval.options),
  };
}

/**
 * The editor's answer as the answer to `approval/request`. A cancelled request (the prompt was
 * cancelled) denies the call; an option id that is not one of the request's options is an error.
 * @throws Error naming the unknown option id
 */
export function approvalAnswer(approval: ApprovalRequest, response: acp.RequestPermissionResponse): ServerRequestResult<'approval/request'> {
  if (response.outcome.outcome === 'cancelled') return { decision: 'deny', message: 'the editor cancelled the permission request' };
  const optionId = response.outcome.optionId;
  const option = approval.options.find((candidate) => candidate.decision === optionId);
  if (!option) throw new Error(`session/request_permission: the editor selected option "${optionId}", which was not offered (${approval.options.map((candidate) => candidate.decision).join(', ')})`);
  return { decision: option.decision, ...(option.prefix ? { prefix: option.prefix } : {}) };
}

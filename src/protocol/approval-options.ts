/**
 * The choices the server offers with an approval request (protocol version 2), so every
 * client shows the same ones: allow once, allow for the session, allow a command prefix
 * (only when one is proposed), deny, and deny and interrupt the turn.
 */
import { z } from 'zod';

/**
 * An answer to an approval request. `allow_once` runs this call. `allow_session` runs it and,
 * for the rest of the live session (until the server stops), every later call of the same
 * tool with exactly the same arguments. `allow_prefix` runs it and, for the rest of the live
 * session, every later shell command of the same tool that is one simple command starting with
 * the given words (compared on parsed words; a line with `;`, `&&`, `|`, redirections or
 * substitutions never matches). `deny` refuses it, telling the model. `deny_interrupt`
 * refuses it and interrupts the running turn (the turn ends `interrupted`).
 */
export const ApprovalDecisionSchema = z.enum(['allow_once', 'allow_session', 'allow_prefix', 'deny', 'deny_interrupt']);
/** An answer to an approval request. */
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** One choice offered with an approval request. */
export const ApprovalOptionSchema = z.object({
  decision: ApprovalDecisionSchema,
  /** Short text to show (`Allow once`). */
  label: z.string(),
  /** With `allow_prefix`: the words it allows (the request's `proposedPrefix`). */
  prefix: z.array(z.string()).min(1).optional(),
});
/** One choice offered with an approval request. */
export type ApprovalOption = z.infer<typeof ApprovalOptionSchema>;

/**
 * The options of a request, in the order to show them.
 * @param proposedPrefix the prefix `allow_prefix` would allow; without one that option is left out
 */
export function approvalOptions(proposedPrefix: readonly string[] | undefined): ApprovalOption[] {
  return [
    { decision: 'allow_once', label: 'Allow once' },
    { decision: 'allow_session', label: 'Allow this call for the session' },
    ...(proposedPrefix && proposedPrefix.length > 0 ? [{ decision: 'allow_prefix' as const, label: `Allow commands starting with "${proposedPrefix.join(' ')}" for the session`, prefix: [...proposedPrefix] }] : []),
    { decision: 'deny', label: 'Deny' },
    { decision: 'deny_interrupt', label: 'Deny and interrupt the turn' },
  ];
}

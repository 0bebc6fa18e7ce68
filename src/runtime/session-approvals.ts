/**
 * A session's approval gate: applies the approval policy (and a `pre_tool_use` hook's
 * permission) to each tool call, asks the attached clients when needed, and remembers what a
 * person approved for the rest of the session.
 */
import type { ApprovalPolicy } from '../config/agents.js';
import { approvalOptions, type ApprovalRequest, type Item, type ToolDetails } from '../protocol/index.js';
import type { ApprovalAnswer } from './approvals/broker.js';
import { evaluatePolicy, type PolicyVerdict } from './approvals/policy.js';
import { SessionPrefixApprovals } from './approvals/session-prefixes.js';
import type { RequestedToolCall } from './model-call.js';

/** What the gate needs from its session. */
export interface ApprovalGateHost {
  readonly conversationId: string;
  readonly sessionId: string;
  /** The policy given with conversation/create, if any (named as the conversation's in messages). */
  conversationPolicy(): ApprovalPolicy | undefined;
  /** The session's agent (named as the policy's owner in messages). */
  agent(): string;
  /** The executor a call runs on when it names none. */
  defaultExecutor(): string;
  /** Asks the attached clients and waits for the answer (the conversation's `ApprovalBroker.request`). */
  request(details: Omit<ApprovalRequest, 'approvalId' | 'requestedAt'>, signal: AbortSignal): Promise<ApprovalAnswer>;
  /** Records the person's decision as an `approval` item of `turnId`; rejects when it cannot be written. */
  recordApproval(turnId: string, decision: Omit<Extract<Item, { kind: 'approval' }>, 'id' | 'sessionId' | 'turnId' | 'createdAt' | 'completedAt' | 'status' | 'kind'>): Promise<void>;
  /** Interrupts the running turn (a `deny_interrupt` answer). */
  interrupt(): void;
}

/** What the tool call shows to whoever approves it. */
export interface ShownCall {
  itemId: string;
  details?: ToolDetails;
  sideEffects?: boolean;
}

/** The approval gate of one session. */
export class SessionApprovalGate {
  /** Tool calls approved "for the session", by tool name and arguments. */
  private readonly approvedForSession = new Set<string>();
  /** Command prefixes approved for the session (`allow_prefix`), by tool name. */
  private approvedPrefixes = new SessionPrefixApprovals();

  constructor(private readonly host: ApprovalGateHost) {}

  /** True when something was approved "for the session" (kept in memory only, so the session must stay open to keep it). */
  get remembersApprovals(): boolean {
    return this.approvedForSession.size > 0 || !this.approvedPrefixes.isEmpty;
  }

  /** Forgets what was approved for the session (after a rewind dropped the items that approved it). */
  forget(): void {
    this.approvedForSession.clear();
    this.approvedPrefixes = new SessionPrefixApprovals();
  }

  /**
   * Applies the approval policy to a tool call: allow, deny, or ask the attached clients and
   * wait. Every decision made by a person is recorded as an `approval` item.
   * A `pre_tool_use` hook's `hookPermission` replaces the policy's allow/ask (`allow` skips
   * asking, `ask` asks), but never a policy's deny. A tool without side effects is gated only
   * by a rule naming it exactly (see `evaluatePolicy`); a hook's `ask` still asks.
   * @returns whether the call may run, and when not, the message the model is given
   * @throws when `signal` aborts while waiting (see `ApprovalBroker.request`) or the decision cannot be recorded
   */
  async authorize(turnId: string, policy: ApprovalPolicy | undefined, call: RequestedToolCall, signal: AbortSignal, hookPermission: 'allow' | 'ask' | undefined, executor: string | undefined, shown: ShownCall): Promise<{ allowed: boolean; message?: string }> {
    if (!policy && hookPermission !== 'ask') return { allowed: true };
    const verdict: PolicyVerdict = policy ? evaluatePolicy(policy, call.toolName, call.arguments, { ...(shown.sideEffects !== undefined ? { sideEffects: shown.sideEffects } : {}) }) : { decision: 'allow' };
    const owner = policy === this.host.conversationPolicy() ? 'the conversation\'s policy' : `agent "${this.host.agent()}"`;
    const policyRule = verdict.ruleIndex !== undefined ? `rule ${verdict.ruleIndex + 1} of ${owner}` : `the default of ${owner}`;
    if (verdict.decision === 'deny') return { allowed: false, message: `denied by the approval policy (${policyRule})` };
    if ((hookPermission ?? verdict.decision) === 'allow') return { allowed: true };
    const rule = hookPermission === 'ask' ? 'a pre_tool_use hook' : policyRule;
    const key = `${call.toolName}\u0000${JSON.stringify(call.arguments)}`;
    if (this.approvedForSession.has(key) || this.approvedPrefixes.allows(call.toolName, call.arguments)) return { allowed: true };
    const proposedPrefix = SessionPrefixApprovals.propose(call.toolName, call.arguments);
    const answer = await this.host.request(
      {
        conversationId: this.host.conversationId,
        sessionId: this.host.sessionId,
        turnId,
        callId: call.callId,
        itemId: shown.itemId,
        toolName: call.toolName,
        arguments: call.arguments,
        executor: executor ?? this.host.defaultExecutor(),
        ...(shown.details ? { details: shown.details } : {}),
        options: approvalOptions(proposedPrefix),
        reason: `asked by ${rule}`,
        ...(proposedPrefix ? { proposedPrefix } : {}),
      },
      signal,
    );
    await this.host.recordApproval(turnId, { callId: call.callId, toolName: call.toolName, decision: answer.decision, decidedBy: answer.decidedBy, ...(answer.message ? { message: answer.message } : {}), ...(answer.prefix ? { prefix: answer.prefix } : {}), ...(answer.automatic ? { automatic: true } : {}) });
    if (answer.decision === 'allow_session') this.approvedForSession.add(key);
    if (answer.decision === 'allow_prefix' && answer.prefix) this.approvedPrefixes.add(call.toolName, answer.prefix);
    if (answer.decision === 'deny') {
      const who = answer.automatic ? `${answer.decidedBy.replace(/^client:/, '')} denied this call without asking the user` : 'the user denied this call';
      return { allowed: false, message: `${who}${answer.message ? `: ${answer.message}` : ''}` };
    }
    if (answer.decision === 'deny_interrupt') {
      this.host.interrupt();
      return { allowed: false, message: `the user denied this call and interrupted the turn${answer.message ? `: ${answer.message}` : ''}` };
    }
    return { allowed: true };
  }
}

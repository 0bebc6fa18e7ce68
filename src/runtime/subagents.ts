/**
 * Subagents (SPEC §3: sessions with a parent session). Implements the collaboration tools'
 * host for one session: spawning children in the same conversation, messaging, waiting for
 * their answers, closing them, within the configured depth and count limits.
 */
import type { CollaborationHost, SubagentReport } from './collaboration-tools.js';
import type { LiveConversation } from './conversation.js';
import type { LiveSession } from './session.js';

/** Limits on subagents. */
export interface SubagentLimits {
  /** Deepest level a subagent may have (the root session is level 0). */
  maxDepth: number;
  /** Open (not closed) subagents one session may have at once. */
  maxOpenPerSession: number;
}

/** Default: subagents may not spawn their own (depth 1), at most 6 open per session. */
export const DEFAULT_SUBAGENT_LIMITS: SubagentLimits = { maxDepth: 1, maxOpenPerSession: 6 };

/** Level of a session in its conversation's tree (root = 0). */
export function sessionDepth(conversation: LiveConversation, session: LiveSession): number {
  let depth = 0;
  for (let parent = session.state.parentSessionId; parent; parent = conversation.sessions.get(parent)?.state.parentSessionId ?? null) depth++;
  return depth;
}

/** The collaboration host of one (parent) session. */
export class SubagentManager implements CollaborationHost {
  constructor(
    private readonly conversation: LiveConversation,
    private readonly parent: LiveSession,
    private readonly limits: SubagentLimits,
  ) {}

  private children(): LiveSession[] {
    return [...this.conversation.sessions.values()].filter((session) => session.state.parentSessionId === this.parent.id);
  }

  private child(id: string): LiveSession {
    const child = this.children().find((session) => session.id === id);
    if (!child) throw new Error(`no subagent "${id}" of this session (subagents: ${this.children().map((session) => session.id).join(', ') || 'none'})`);
    return child;
  }

  async spawnSubagent(task: string, options: { agent?: string; model?: string }): Promise<string> {
    const depth = sessionDepth(this.conversation, this.parent) + 1;
    if (depth > this.limits.maxDepth) throw new Error(`subagents may be nested ${this.limits.maxDepth} level(s) deep; this one would be at level ${depth}`);
    const open = this.children().filter((session) => session.state.status !== 'closed').length;
    if (open >= this.limits.maxOpenPerSession) {
      throw new Error(`this session already has ${open} open subagents (limit ${this.limits.maxOpenPerSession}); close one with close_agent first`);
    }
    const agent = options.agent ?? this.parent.state.agent;
    const refusal = this.conversation.runtime.extensions.subagentRefusal?.(this.conversation, agent);
    if (refusal !== undefined) throw new Error(refusal);
    const model = options.model ?? this.parent.state.model;
    // Resolving first refuses an unknown model before a session is created.
    this.conversation.runtime.models.resolve(model);
    const child = await this.conversation.createSession({ parentSessionId: this.parent.id, agent, model });
    await child.receiveAgentMessage(this.parent.id, task);
    return child.id;
  }

  async sendToSubagent(id: string, message: string, interrupt: boolean): Promise<void> {
    const child = this.child(id);
    if (child.state.status === 'closed') throw new Error(`subagent "${id}" is closed`);
    if (interrupt) child.interrupt('user');
    await child.receiveAgentMessage(this.parent.id, message);
  }

  async waitForSubagents(ids: string[] | undefined, timeoutMs: number, signal: AbortSignal): Promise<SubagentReport[]> {
    const targets = ids ? ids.map((id) => this.child(id)) : this.children().filter((session) => session.state.status !== 'closed');
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    await Promise.all(targets.map((session) => session.idle(deadline)));
    return targets.map((session) => session.report());
  }

  async closeSubagent(id: string): Promise<void> {
    await this.child(id).close();
  }
}

/**
 * Running one turn of a session: recording its start and the changes since the last turn
 * (agent, model, work location), building the agent's environment, running the agent (or a
 * compaction), and recording the turn's end whatever happened.
 */
import { newId } from '../ids.js';
import type { McpClientManager } from '../mcp/client-manager.js';
import { isExternalAgent } from '../config/agents.js';
import { approvalOptions, type ContentPart, type Item, type Session, type Turn } from '../protocol/index.js';
import type { Tool } from '../tools/tool.js';
import type { PlanUpdate } from '../tools/update-plan.js';
import { ZERO_USAGE, type AgentOutcome } from './agent.js';
import type { BackgroundCommandRegistry } from './background-commands.js';
import type { ContextMeter } from './compaction.js';
import type { LiveConversation } from './conversation.js';
import { originOf, type InputQueue, type PendingWork } from './input-queue.js';
import { beginTurn } from './instructions/turn-extensions.js';
import { loopTurnRunner } from './loop-turn-runner.js';
import type { SessionApprovalGate } from './session-approvals.js';
import type { TurnContext } from './turn-runner.js';
import { costOf } from './usage.js';

/** What the session's history was last run with; a turn records an item for each that changed. */
export interface InUse {
  /** The model (undefined for a new session: no `model_change` is recorded then). */
  model: string | undefined;
  /** The agent (an `agent_change` is recorded when `session/setAgent` changed it). */
  agent: string;
  /** The work location, as `describeWorkLocation` reads (an `executor_change` when it moved). */
  executors: string;
}

/** What a turn needs from its session. */
export interface TurnHost {
  readonly id: string;
  /** The session's state in force (read again after each `saveState`). */
  readonly state: Session;
  /** The owning conversation (turn extensions, MCP clients, events, records of turns). */
  readonly conversation: LiveConversation;
  /** The session's stored items, oldest first. */
  readonly items: Item[];
  readonly queue: InputQueue;
  readonly commands: BackgroundCommandRegistry;
  readonly contextMeter: ContextMeter;
  /** Updated by the turn as it records the changes. */
  readonly inUse: InUse;
  readonly approvals: SessionApprovalGate;
  /** Changes and writes the session state; rejects when the write fails (the state in memory changed anyway). */
  saveState(changes: Partial<Session>): Promise<void>;
  /** Appends an item to the log in order; rejects with `RecordWriteError` when it cannot be written. */
  record(item: Item): Promise<void>;
  /** Resolves when every `record` so far has settled. */
  drainWrites(): Promise<void>;
  /** The conversation's MCP clients for this turn (`LiveConversation.mcpForTurn`). */
  mcpForTurn(): McpClientManager;
  /** The environment and collaboration tools of the session. */
  tools(): Tool[];
  /** Records a plan given with `update_plan`. */
  setPlan(turnId: string, plan: PlanUpdate): Promise<void>;
  /** A turn starts: `controller` interrupts it. */
  turnBegan(controller: AbortController): void;
  /** The turn ended with `status` (called before the session is recorded idle). */
  turnEnded(status: AgentOutcome['status']): void;
}

/** The fields every item a session records starts with (completed now). */
export function itemBase(sessionId: string, turnId: string) {
  const now = Date.now();
  return { id: newId('item'), sessionId, turnId, createdAt: now, completedAt: now, status: 'completed' as const };
}

/**
 * Runs one turn and records its end. Whatever throws (a storage error such as ENOSPC, a
 * hook, a bug), the turn ends `failed` with the reason in `error`, the session goes back to
 * idle and clients hear `turn/completed`; records that cannot be written are logged.
 * Never rejects.
 */
export async function runTurn(host: TurnHost, turnId: string, work: PendingWork): Promise<void> {
  const controller = new AbortController();
  host.turnBegan(controller);
  const turn: Turn = {
    id: turnId,
    sessionId: host.id,
    conversationId: host.conversation.id,
    status: 'running',
    steps: 0,
    usage: ZERO_USAGE,
    // An input's own model applies to its turn only.
    model: work.kind === 'input' && work.model ? work.model : host.state.model,
    startedAt: Date.now(),
    completedAt: null,
  };
  let outcome: AgentOutcome;
  try {
    outcome = await runTurnSteps(host, turn, work, controller);
  } catch (error) {
    const message = `the turn could not continue: ${describeError(error)}`;
    host.conversation.runtime.logger?.error({ conversationId: host.conversation.id, sessionId: host.id, turnId, error: describeError(error) }, 'turn failed');
    outcome = { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'model_error', error: message };
  }
  if (outcome.stopReason === 'user_interrupt' && isShutdown(controller.signal)) outcome = { ...outcome, stopReason: 'shutdown' };
  await finishTurn(host, turn, outcome);
}

/** Records the end of a turn, in memory first so the session is idle even when nothing can be written. */
async function finishTurn(host: TurnHost, started: Turn, outcome: AgentOutcome): Promise<void> {
  const conversation = host.conversation;
  // Steering that arrived too late for this turn's model calls starts the next turn.
  host.queue.requeueLateSteering(() => newId('turn'));
  await host.drainWrites();
  const prices = started.model !== undefined ? conversation.runtime.prices(started.model) : undefined;
  const { status, steps, usage, stopReason } = outcome;
  const turn: Turn = { ...started, status, steps, usage, stopReason, ...(prices ? { costUsd: costOf(usage, prices) } : {}), completedAt: Date.now(), ...(outcome.error ? { error: outcome.error } : {}) };
  host.turnEnded(outcome.status);
  const logger = conversation.runtime.logger;
  const context = { conversationId: conversation.id, sessionId: host.id, turnId: turn.id };
  // The session is idle before clients hear the turn ended, so input sent on turn/completed starts a turn at once.
  await host.saveState({ status: 'idle', activeTurnId: null, queuedInputs: host.queue.describe() }).catch((error: unknown) =>
    logger?.error({ ...context, error: describeError(error) }, 'cannot record the session as idle'),
  );
  await conversation.recordTurn(turn, 'turn/completed').catch((error: unknown) => logger?.error({ ...context, status: turn.status, error: describeError(error) }, 'cannot record the end of the turn'));
  for (const hook of conversation.runtime.extensions.turnCompletionHooks) {
    await hook(conversation, turn).catch((error: unknown) => logger?.error({ ...context, error: describeError(error) }, 'work after the end of the turn failed'));
  }
}

/** The body of a turn; throws when a record cannot be written. */
async function runTurnSteps(host: TurnHost, turn: Turn, work: PendingWork, controller: AbortController): Promise<AgentOutcome> {
  const conversation = host.conversation;
  const inUse = host.inUse;
  const turnId = turn.id;
  const base = () => itemBase(host.id, turnId);
  const model = turn.model ?? host.state.model;
  await host.saveState({ status: 'running', activeTurnId: turnId, queuedInputs: host.queue.describe() });
  await conversation.recordTurn(turn, 'turn/started');
  if (inUse.agent !== host.state.agent) await host.record({ ...base(), kind: 'agent_change', from: inUse.agent, to: host.state.agent });
  inUse.agent = host.state.agent;
  if (host.state.pendingAgentChange !== undefined) await host.saveState({ pendingAgentChange: undefined });
  if (inUse.model !== undefined && inUse.model !== model) {
    await host.record({ ...base(), kind: 'model_change', from: inUse.model, to: model });
  }
  inUse.model = model;
  const location = conversation.describeWorkLocation();
  if (location !== inUse.executors) {
    await host.record({ ...base(), kind: 'executor_change', from: inUse.executors, to: location });
    inUse.executors = location;
  }
  // Taken once: a configuration reload during the turn applies from the next turn on.
  const definition = conversation.runtime.agentDefinitions[host.state.agent];
  const input: ContentPart[] = work.kind === 'input' ? work.content : work.kind === 'agent' ? [{ type: 'text', text: work.text }] : [];
  const context = turnContext(host, turnId, input, controller);
  let outcome: AgentOutcome;
  if (definition && isExternalAgent(definition)) {
    // An external agent reads its own AGENTS.md, skills and hooks: only the message is recorded here.
    if (work.kind === 'input') await host.record({ ...base(), kind: 'user_message', content: work.content, mode: 'input', status: 'completed', inputId: work.id, ...originOf(work) });
    else if (work.kind === 'agent') await host.record({ ...base(), kind: 'agent_message', fromSessionId: work.fromSessionId, toSessionId: host.id, text: work.text });
    const executor = conversation.workspace.executor;
    const refusal = work.kind === 'compact' ? `agent "${host.state.agent}" (kind ${definition.kind}) keeps its own context: OpenVaala cannot compact it` : executor.kind !== 'local' ? `agent "${host.state.agent}" (kind ${definition.kind}) runs on the server's machine; the conversation works on executor "${executor.name}" (${executor.kind})` : undefined;
    outcome = refusal !== undefined ? { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'model_error', error: refusal } : await conversation.externalAgents.runTurn(host.id, host.state.agent, definition, context);
  } else {
    outcome = await runLoopTurn(host, turn, work, controller, context);
  }
  if (outcome.status === 'interrupted' && controller.signal.aborted) {
    const reason = isShutdown(controller.signal) ? 'shutdown' : 'user';
    await host.record({ ...base(), kind: 'interruption', reason });
  }
  return outcome;
}

/** The built-in loop's turn: AGENTS.md, skills and hooks, the user's message through `user_prompt_submit` hooks, then the loop. */
async function runLoopTurn(host: TurnHost, turn: Turn, work: PendingWork, controller: AbortController, context: TurnContext): Promise<AgentOutcome> {
  const conversation = host.conversation;
  const turnId = turn.id;
  const base = () => itemBase(host.id, turnId);
  const model = turn.model ?? host.state.model;
  // AGENTS.md and session_start hooks on the first turn, skills, hooks; user_prompt_submit hooks may refuse the prompt.
  const extensions = await beginTurn(conversation, { sessionId: host.id, turnId, signal: controller.signal, history: () => host.items, record: (item) => host.record(item), carriesInput: work.kind !== 'compact' });
  let refusal: string | undefined;
  if (work.kind === 'input') {
    // A refused prompt is not recorded (its text and attachments are kept nowhere): only the hook's run and the turn's error say it was refused.
    refusal = await extensions.submitPrompt(work.content, () => host.record({ ...base(), kind: 'user_message', content: work.content, mode: 'input', status: 'completed', inputId: work.id, ...originOf(work) }));
  } else if (work.kind === 'agent') {
    await host.record({ ...base(), kind: 'agent_message', fromSessionId: work.fromSessionId, toSessionId: host.id, text: work.text });
  }
  if (refusal !== undefined) return { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'hook_refused', error: refusal };
  try {
    // An agent removed from agents.yaml ends the turn like a configuration problem.
    const definition = conversation.runtime.agentDefinition(host.state.agent);
    const runner = loopTurnRunner({ host, model, definition, extensions, work: work.kind === 'compact' ? 'compact' : 'agent', controller, ...(work.kind === 'input' && work.reasoningEffort ? { reasoningEffort: work.reasoningEffort } : {}) });
    return await runner.runTurn(context);
  } catch (error) {
    // A record that cannot be written ends the turn as a whole (see runTurn).
    if (error instanceof RecordWriteError) throw error;
    // Configuration problems (unknown model, unset key) end the turn like a model error.
    const message = (error as Error).message;
    await host.record({ ...base(), kind: 'model_error', status: 'failed', provider: model.split('/')[0] ?? '', model, httpStatus: null, message, retries: 0 });
    return { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'model_error', error: message };
  }
}

/** What a turn runner may do to the session (see `TurnContext`). */
function turnContext(host: TurnHost, turnId: string, input: ContentPart[], controller: AbortController): TurnContext {
  const conversation = host.conversation;
  return {
    sessionId: host.id,
    turnId,
    input,
    cwd: conversation.workspace.root,
    signal: controller.signal,
    record: (item) => host.record(item),
    itemStarted: (itemId, kind, partial) => conversation.itemStarted(host.id, turnId, itemId, kind, partial),
    itemDelta: (itemId, delta) => conversation.itemDelta(host.id, turnId, itemId, delta),
    setPlan: (plan) => host.setPlan(turnId, plan),
    requestApproval: async (request) => {
      const { callId, itemId, toolName, details, offersSession, reason } = request;
      const answer = await conversation.approvals.request(
        {
          conversationId: conversation.id,
          sessionId: host.id,
          turnId,
          callId,
          itemId,
          toolName,
          arguments: request.arguments,
          executor: conversation.workspace.executor.name,
          ...(details ? { details } : {}),
          // Only the answers the agent can carry out: no command prefixes, "for the session" when it offers that.
          options: approvalOptions(undefined).filter((option) => offersSession || option.decision !== 'allow_session'),
          reason,
        },
        controller.signal,
      );
      await host.record({ ...itemBase(host.id, turnId), kind: 'approval', callId, toolName, decision: answer.decision, decidedBy: answer.decidedBy, ...(answer.message ? { message: answer.message } : {}) });
      return answer;
    },
  };
}

/** Whether an aborted turn was stopped by the server's shutdown (see `LiveSession.interrupt`). */
function isShutdown(signal: AbortSignal): boolean {
  return signal.aborted && String((signal.reason as Error)?.message ?? '').endsWith('shutdown');
}

/** An item that could not be appended to the session's log (the cause is the storage error). */
export class RecordWriteError extends Error {
  /**
   * @param item the item that was not written
   * @param cause the storage error
   */
  constructor(item: Item, cause: unknown) {
    super(`cannot record the ${item.kind} item: ${describeError(cause)}`, { cause });
    this.name = 'RecordWriteError';
  }
}

/** The message of anything thrown, with its errno code when it has one (`ENOSPC: no space left on device, write`). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

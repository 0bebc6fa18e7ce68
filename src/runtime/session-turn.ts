/**
 * Running one turn of a session: recording its start and the changes since the last turn
 * (agent, model, work location), building the agent's environment, running the agent (or a
 * compaction), and recording the turn's end whatever happened.
 */
import { newId } from '../ids.js';
import type { McpClientManager } from '../mcp/client-manager.js';
import type { Item, Session, Turn } from '../protocol/index.js';
import type { Tool } from '../tools/tool.js';
import { updatePlanTool, type PlanUpdate } from '../tools/update-plan.js';
import { runAgent, runCompaction, ZERO_USAGE, type AgentEnvironment, type AgentOutcome } from './agent.js';
import type { BackgroundCommandRegistry } from './background-commands.js';
import type { ContextMeter } from './compaction.js';
import type { LiveConversation } from './conversation.js';
import { originOf, type InputQueue, type PendingWork } from './input-queue.js';
import { beginTurn } from './instructions/turn-extensions.js';
import type { SessionApprovalGate } from './session-approvals.js';
import { costOf, usageReport } from './usage.js';

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
  // AGENTS.md and session_start hooks on the first turn, skills, hooks; user_prompt_submit hooks may refuse the prompt.
  const extensions = await beginTurn(conversation, { sessionId: host.id, turnId, signal: controller.signal, history: () => host.items, record: (item) => host.record(item), carriesInput: work.kind !== 'compact' });
  let refusal: string | undefined;
  if (work.kind === 'input') {
    refusal = await extensions.submitPrompt(work.content, (status) => host.record({ ...base(), kind: 'user_message', content: work.content, mode: 'input', status, inputId: work.id, ...originOf(work) }));
  } else if (work.kind === 'agent') {
    await host.record({ ...base(), kind: 'agent_message', fromSessionId: work.fromSessionId, toSessionId: host.id, text: work.text });
  }

  let outcome: AgentOutcome;
  try {
    const runtime = conversation.runtime;
    // Taken once: a configuration reload during the turn applies from the next turn on.
    const definition = runtime.agentDefinition(host.state.agent);
    const mcp = host.mcpForTurn();
    const baseTools = [...host.tools(), updatePlanTool({ setPlan: (plan) => host.setPlan(turnId, plan) }), ...extensions.tools];
    const resolvedModel = runtime.models.resolve(model);
    const environment: AgentEnvironment = {
      model: resolvedModel,
      // Read before each model call: an MCP server's tool list may change during the turn.
      get tools() {
        return mcp.withTools(baseTools);
      },
      resolveTool: (name) => mcp.resolveTool(name),
      system: extensions.system(conversation.systemPrompt(host.state.agent)),
      workspace: conversation.workspace,
      commands: host.commands,
      signal: controller.signal,
      maxSteps: definition.maxSteps ?? runtime.limits.maxStepsPerTurn,
      retryPolicy: runtime.limits.retryPolicy,
      compactionThreshold: runtime.limits.compactionThreshold,
      toolOutputLimitBytes: runtime.limits.toolOutputLimitBytes,
      readAttachment: (attachmentId) => runtime.attachments?.read(conversation.id, attachmentId)?.bytes,
      contextMeter: host.contextMeter,
      sessionId: host.id,
      turnId,
      history: () => host.items,
      // A policy given with conversation/create wins over the agent's, in every session of the conversation.
      authorize: (call, hookPermission, executor, shown) => host.approvals.authorize(turnId, conversation.state.approvalPolicy ?? definition.approvals, call, controller.signal, hookPermission, executor, shown),
      clientFiles: conversation.clientFiles.accessFor(host.id),
      askUser: (question, call) => conversation.userInputs.request({ conversationId: conversation.id, sessionId: host.id, turnId, ...call, ...question }, controller.signal),
      hooks: extensions.hooks,
      takeSteering: () => host.queue.takeSteering(),
      record: (item) => host.record(item),
      itemStarted: (itemId, kind, partial) => conversation.itemStarted(host.id, turnId, itemId, kind, partial),
      itemDelta: (itemId, delta) => conversation.itemDelta(host.id, turnId, itemId, delta),
      modelCallCompleted: (lastCall, turnTotal) =>
        conversation.publish({
          method: 'session/usage',
          params: usageReport({ conversationId: conversation.id, sessionId: host.id, turnId, seq: conversation.itemHead(host.id) }, resolvedModel, lastCall, turnTotal, runtime.prices(resolvedModel.name)),
        }),
      ...(runtime.logger ? { logger: runtime.logger } : {}),
      ...(work.kind === 'input' && work.reasoningEffort ? { reasoningEffort: work.reasoningEffort } : {}),
      modelRetrying: (retry) => conversation.publish({ method: 'turn/retrying', params: { conversationId: conversation.id, sessionId: host.id, turnId, ...retry } }),
    };
    // MCP servers start on the first turn; ones that failed are tried again on each turn.
    if (work.kind !== 'compact' && refusal === undefined) await mcp.prepare(controller.signal);
    outcome = refusal !== undefined ? { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'hook_refused', error: refusal } : work.kind === 'compact' ? await runCompaction(environment) : await runAgent(environment);
  } catch (error) {
    // A record that cannot be written ends the turn as a whole (see runTurn).
    if (error instanceof RecordWriteError) throw error;
    // Configuration problems (unknown model, unset key) end the turn like a model error.
    const message = (error as Error).message;
    await host.record({ ...base(), kind: 'model_error', status: 'failed', provider: model.split('/')[0] ?? '', model, httpStatus: null, message, retries: 0 });
    outcome = { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'model_error', error: message };
  }
  if (outcome.status === 'interrupted' && controller.signal.aborted) {
    const reason = isShutdown(controller.signal) ? 'shutdown' : 'user';
    await host.record({ ...base(), kind: 'interruption', reason });
  }
  return outcome;
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

/**
 * A live session (SPEC §3): one agent's line of work. It owns its queue of pending inputs and
 * runs one turn at a time; input arriving during a turn is queued (next turn) or steering
 * (read before the running turn's next model call).
 */
import { newId } from '../ids.js';
import type { ContentPart, Item, Session, StateConflictReason, StoredItem, Turn } from '../protocol/index.js';
import { runAgent, runCompaction, ZERO_USAGE, type AgentEnvironment, type AgentOutcome } from './agent.js';
import { collaborationTools, type SubagentReport } from './collaboration-tools.js';
import { ContextMeter } from './compaction.js';
import { sessionDepth, SubagentManager } from './subagents.js';
import { routeTool } from './tool-routing.js';
import { evaluatePolicy, type PolicyVerdict } from './approvals/policy.js';
import { SessionPrefixApprovals } from './approvals/session-prefixes.js';
import { approvalOptions, type ToolDetails } from '../protocol/index.js';
import { requestUserInputTool } from '../tools/request-user-input.js';
import { beginTurn } from './instructions/turn-extensions.js';
import type { ApprovalPolicy } from '../config/agents.js';
import type { RequestedToolCall } from './model-call.js';
import type { Tool } from '../tools/tool.js';
import type { LiveConversation } from './conversation.js';
import { SerialQueue } from './serial-queue.js';
import { StateConflictError } from './state-conflict-error.js';
import { BackgroundCommandRegistry } from './background-commands.js';
import { answeredInItems, InputQueue, inputWork, originOf, requireRunningTurn, type InputOptions, type InputOutcome, type PendingWork } from './input-queue.js';
import { costOf, usageReport } from './usage.js';
import { updatePlanTool, type PlanUpdate } from '../tools/update-plan.js';

/** The model a session's history was last run with, from its items (undefined for a new session). */
function modelInHistory(items: Item[]): string | undefined {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index];
    if (item?.kind === 'model_change') return item.to;
    if (item?.kind === 'assistant_message') return item.model;
  }
  return undefined;
}

/** A session while its conversation is open in the runtime. */
export class LiveSession {
  private readonly writes = new SerialQueue();
  private readonly queue = new InputQueue();
  private contextMeter = new ContextMeter();
  private modelInUse: string | undefined;
  /** The agent the last turn ran as, to record an `agent_change` when `session/setAgent` changed it. */
  private agentInUse: string;
  private executorsInUse: string;
  private lastTurnStatus: Exclude<Turn['status'], 'running'> | undefined;
  /** Tool calls approved "for the session", by tool name and arguments. */
  private readonly approvedForSession = new Set<string>();
  /** Command prefixes approved for the session (`allow_prefix`), by tool name. */
  private approvedPrefixes = new SessionPrefixApprovals();
  private abortController: AbortController | undefined;
  private running: Promise<void> | undefined;
  /** Commands left running by `exec_command` (`yield_after_ms`, `tty`); they outlive turns, not the session. */
  readonly commands = new BackgroundCommandRegistry();

  /**
   * @param conversation the owning conversation
   * @param state the session's stored state
   * @param items the session's stored items, oldest first (kept in memory to build requests)
   */
  constructor(
    private readonly conversation: LiveConversation,
    public state: Session,
    private readonly items: Item[],
  ) {
    this.modelInUse = modelInHistory(items);
    const lastAgentChange = items.findLast((item) => item.kind === 'agent_change');
    const pending = state.pendingAgentChange;
    // A change asked for before the server stopped is still to record, unless its item was written just before.
    if (pending !== undefined && !(lastAgentChange !== undefined && lastAgentChange.createdAt >= pending.requestedAt)) this.agentInUse = pending.from;
    else this.agentInUse = lastAgentChange?.kind === 'agent_change' ? lastAgentChange.to : state.agent;
    const lastChange = items.findLast((item) => item.kind === 'executor_change');
    this.executorsInUse = lastChange?.kind === 'executor_change' ? lastChange.to : conversation.describeWorkLocation();
  }

  /** The session id. */
  get id(): string {
    return this.state.id;
  }

  /** True while a turn runs. */
  get isRunning(): boolean {
    return this.state.activeTurnId !== null;
  }

  /**
   * True while a turn runs or input waits (queued or steering). The work loop marks a turn
   * running in the same step as it takes its input off the queue, so there is no gap between
   * the two; its last bookkeeping after `turn/completed` does not count.
   */
  get hasWork(): boolean {
    return this.isRunning || this.queue.hasWaiting;
  }

  /** Set while the history is being rewritten (a rewind): new work is refused with this reason meanwhile. */
  historyLock: StateConflictReason | undefined;

  /**
   * After the stored log was cut (a rewind, SPEC §3): takes `kept` (the items left in the log)
   * as the history in memory and forgets what was derived from the dropped items (context
   * meter, model and executors in use, approvals given for the session), then records
   * `changes` (the new history epoch). Memory follows the log even when that record fails.
   * Call only while the session has no work.
   */
  async applyRewind(kept: Item[], changes: Pick<Session, 'historyEpoch' | 'rewoundAfterSeq'>): Promise<Session> {
    this.items.splice(0, this.items.length, ...kept);
    this.contextMeter = new ContextMeter();
    this.modelInUse = modelInHistory(this.items);
    const lastChange = this.items.findLast((item) => item.kind === 'executor_change');
    this.executorsInUse = lastChange?.kind === 'executor_change' ? lastChange.to : this.conversation.describeWorkLocation();
    this.approvedForSession.clear();
    this.approvedPrefixes = new SessionPrefixApprovals();
    this.lastTurnStatus = undefined;
    await this.saveState(changes);
    return this.state;
  }

  /**
   * Resolves when the running turn and every queued input have been processed, or when
   * `signal` aborts (whichever comes first).
   */
  async idle(signal?: AbortSignal): Promise<void> {
    while (this.running && !signal?.aborted) {
      const running = this.running;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener('abort', done);
          resolve();
        };
        // `running` never rejects (see enqueue); the second handler only satisfies the contract of then.
        running.then(done, done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Status and last answer, as `wait_agent` reports them. */
  report(): SubagentReport {
    const answer = this.items.findLast((item) => item.kind === 'assistant_message');
    const status = this.state.status === 'closed' ? 'closed' : this.isRunning || this.running ? 'running' : (this.lastTurnStatus ?? 'completed');
    return { id: this.id, status, answer: answer?.kind === 'assistant_message' ? answer.text : '' };
  }

  /** Queues a message from another session (a parent's task or follow-up). @throws Error when the session is closed */
  async receiveAgentMessage(fromSessionId: string, text: string): Promise<void> {
    if (this.state.status === 'closed') throw new StateConflictError(`session ${this.id} is closed`, 'session_closed');
    await this.enqueue({ id: newId('input'), turnId: newId('turn'), kind: 'agent', fromSessionId, text });
  }

  /** Stops the session's work (background commands included) and refuses further input. */
  async close(): Promise<void> {
    this.queue.clear();
    this.interrupt('user');
    await this.idle();
    await this.commands.closeAll();
    await this.saveState({ status: 'closed', queuedInputs: [] });
  }

  /**
   * Accepts user input. With no turn running it starts one; otherwise `queue` waits for the
   * next turn and `steer` is read before the running turn's next model call.
   * An input whose `clientMessageId` was seen before (in memory, or among the session's recent
   * items) is not taken again: the first answer is returned.
   * @throws StateConflictError when the session is closed; with `expectedTurnId`, reason
   *   `no_running_turn` (no turn runs) or `turn_mismatch` (another turn runs)
   */
  input(content: ContentPart[], mode: 'queue' | 'steer', options: InputOptions = {}): Promise<InputOutcome> {
    return this.queue.once(options.clientMessageId, async () => answeredInItems(this.items, options.clientMessageId) ?? this.takeInput(content, mode, options));
  }

  private async takeInput(content: ContentPart[], mode: 'queue' | 'steer', options: InputOptions): Promise<InputOutcome> {
    if (this.state.status === 'closed') throw new StateConflictError(`session ${this.id} is closed`, 'session_closed');
    if (this.historyLock !== undefined) throw new StateConflictError(`session ${this.id} is being rewound`, this.historyLock);
    const expected = mode === 'steer' ? options.expectedTurnId : undefined;
    if (expected !== undefined) requireRunningTurn(this.state, expected, 'steer');
    await this.conversation.runtime.store.ensureDurable(this.conversation.id);
    // Checked again: the turn may have ended while the conversation was made durable.
    if (expected !== undefined) requireRunningTurn(this.state, expected, 'steer');
    const inputId = newId('input');
    const running = this.state.activeTurnId;
    if (mode === 'steer' && running !== null) {
      this.queue.steer({ id: inputId, content, ...originOf(options) });
      return { inputId, queued: true, turnId: running };
    }
    return { inputId, ...(await this.enqueue(inputWork(inputId, newId('turn'), content, options))) };
  }

  /**
   * Interrupts the running turn on a client's request (`session/interrupt`).
   * @param turnId when given, only that turn
   * @returns the interrupted turn's id, or undefined when idle (and no `turnId` was given)
   * @throws StateConflictError `no_running_turn` / `turn_mismatch` when `turnId` is not the running turn
   */
  interruptTurn(turnId?: string): string | undefined {
    if (turnId !== undefined) requireRunningTurn(this.state, turnId, 'interrupt');
    return this.interrupt('user');
  }

  /**
   * Withdraws an input that still waits (`session/dequeue`).
   * @throws StateConflictError `input_started` when it already started; UnknownInputError when unknown
   */
  async dequeue(inputId: string): Promise<void> {
    if (this.queue.withdraw(inputId)) await this.saveState({ queuedInputs: this.queue.describe() });
  }

  /** Queues a manual compaction (runs now when idle). */
  compact(): Promise<{ queued: boolean; turnId?: string }> {
    return this.enqueue({ id: newId('input'), turnId: newId('turn'), kind: 'compact' });
  }

  /**
   * Interrupts the running turn, if any: the model stream is aborted, running tool calls are
   * killed, and the turn ends `interrupted`. Queued inputs stay queued.
   * @returns the interrupted turn's id, or undefined when idle
   */
  interrupt(reason: 'user' | 'shutdown' = 'user'): string | undefined {
    if (!this.abortController) return undefined;
    this.abortController.abort(new Error(`interrupted: ${reason}`));
    return this.state.activeTurnId ?? undefined;
  }

  /**
   * Sets the model for the next turns (a running turn finishes on its model). The change is
   * recorded as a `model_change` item at the start of the next turn.
   */
  async setModel(model: string): Promise<Session> {
    await this.saveState({ model });
    return this.state;
  }

  /**
   * Sets the agent (and the agent's model, when it names one) for the next turns; a running
   * turn finishes as the agent it started with. Recorded as an `agent_change` item when the
   * next turn starts.
   */
  async setAgent(agent: string, model?: string): Promise<Session> {
    // Stored with the session, so the change is still recorded after a restart before the next turn.
    const pendingAgentChange = agent !== this.agentInUse ? { from: this.agentInUse, requestedAt: Date.now() } : undefined;
    await this.saveState({ agent, ...(model !== undefined ? { model } : {}), pendingAgentChange });
    return this.state;
  }

  /** Records the agent's plan (`update_plan`) as a `plan` item, announces it and keeps it in the session state for late subscribers. */
  private async setPlan(turnId: string, plan: PlanUpdate): Promise<void> {
    const item: Item = { ...this.itemBase(turnId), kind: 'plan', ...plan };
    await this.record(item);
    this.conversation.publish({ method: 'plan/updated', params: { conversationId: this.conversation.id, sessionId: this.id, turnId, itemId: item.id, ...plan } });
    await this.saveState({ plan: { itemId: item.id, turnId, ...plan, updatedAt: item.completedAt } });
  }

  /**
   * Adds work to the queue and starts the queue's loop when it is not running. The turn id is
   * given now, so the caller can follow the turn its input will start.
   */
  private async enqueue(work: PendingWork): Promise<{ queued: boolean; turnId: string }> {
    if (this.historyLock !== undefined) throw new StateConflictError(`session ${this.id} is being rewound`, this.historyLock);
    this.queue.pending.push(work);
    if (this.running) {
      // Queued only if something runs or waits ahead of it; between two turns it starts next.
      const queued = this.isRunning || this.queue.pending.length > 1;
      // The input is accepted either way; the queue is written again when the turn ends.
      if (queued) {
        await this.saveState({ queuedInputs: this.queue.describe() }).catch((error: unknown) =>
          this.conversation.runtime.logger?.error({ conversationId: this.conversation.id, sessionId: this.id, error: describeError(error) }, 'cannot record the queued input'),
        );
      }
      return { queued, turnId: work.turnId };
    }
    // processPending ends every turn itself, whatever throws; the catch is the last resort
    // that keeps a bug from becoming an unhandled rejection (which would stop the server).
    this.running = this.processPending()
      .catch((error: unknown) => this.conversation.runtime.logger?.error({ conversationId: this.conversation.id, sessionId: this.id, error: describeError(error) }, 'session work loop failed'))
      .finally(() => {
        this.running = undefined;
      });
    return { queued: false, turnId: work.turnId };
  }

  private async processPending(): Promise<void> {
    for (let work = this.queue.next(); work; work = this.queue.next()) {
      await this.runTurn(work.turnId, work);
    }
  }

  private async saveState(changes: Partial<Session>): Promise<void> {
    this.state = { ...this.state, ...changes, updatedAt: Date.now() };
    // Clients follow the state in force, written or not (a failed write is the caller's to report).
    await this.conversation.recordSession(this.state);
  }

  /** Persists a completed item, keeps it for the context, tells clients. */
  private record(item: Item): Promise<void> {
    return this.writes.run(async () => {
      let stored: StoredItem | undefined;
      try {
        [stored] = await this.conversation.appendItems(this.id, [item]);
      } catch (error) {
        throw new RecordWriteError(item, error);
      }
      this.items.push(item);
      this.conversation.itemCompleted(this.id, stored as StoredItem);
    });
  }

  /** Publishes the session's waiting approvals and questions (`session/updated`). */
  async refreshPendingApprovals(): Promise<void> {
    await this.saveState({ pendingApprovals: this.conversation.approvals.list(this.id), pendingUserInputs: this.conversation.userInputs.list(this.id) });
  }

  /**
   * Applies the agent's approval policy to a tool call: allow, deny, or ask the attached
   * clients and wait. Every decision made by a person is recorded as an `approval` item.
   * A `pre_tool_use` hook's `hookPermission` replaces the policy's allow/ask (`allow` skips
   * asking, `ask` asks), but never a policy's deny. A tool without side effects is gated only
   * by a rule naming it exactly (see `evaluatePolicy`); a hook's `ask` still asks.
   */
  private async authorize(turnId: string, policy: ApprovalPolicy | undefined, call: RequestedToolCall, signal: AbortSignal, hookPermission: 'allow' | 'ask' | undefined, executor: string | undefined, shown: { itemId: string; details?: ToolDetails; sideEffects?: boolean }): Promise<{ allowed: boolean; message?: string }> {
    if (!policy && hookPermission !== 'ask') return { allowed: true };
    const verdict: PolicyVerdict = policy ? evaluatePolicy(policy, call.toolName, call.arguments, { ...(shown.sideEffects !== undefined ? { sideEffects: shown.sideEffects } : {}) }) : { decision: 'allow' };
    const owner = policy === this.conversation.state.approvalPolicy ? 'the conversation\'s policy' : `agent "${this.state.agent}"`;
    const policyRule = verdict.ruleIndex !== undefined ? `rule ${verdict.ruleIndex + 1} of ${owner}` : `the default of ${owner}`;
    if (verdict.decision === 'deny') return { allowed: false, message: `denied by the approval policy (${policyRule})` };
    if ((hookPermission ?? verdict.decision) === 'allow') return { allowed: true };
    const rule = hookPermission === 'ask' ? 'a pre_tool_use hook' : policyRule;
    const key = `${call.toolName}\u0000${JSON.stringify(call.arguments)}`;
    if (this.approvedForSession.has(key) || this.approvedPrefixes.allows(call.toolName, call.arguments)) return { allowed: true };
    const proposedPrefix = SessionPrefixApprovals.propose(call.toolName, call.arguments);
    const answer = await this.conversation.approvals.request(
      {
        conversationId: this.conversation.id,
        sessionId: this.id,
        turnId,
        callId: call.callId,
        itemId: shown.itemId,
        toolName: call.toolName,
        arguments: call.arguments,
        executor: executor ?? this.conversation.workspace.executor.name,
        ...(shown.details ? { details: shown.details } : {}),
        options: approvalOptions(proposedPrefix),
        reason: `asked by ${rule}`,
        ...(proposedPrefix ? { proposedPrefix } : {}),
      },
      signal,
    );
    await this.record({ ...this.itemBase(turnId), kind: 'approval', callId: call.callId, toolName: call.toolName, decision: answer.decision, decidedBy: answer.decidedBy, ...(answer.message ? { message: answer.message } : {}), ...(answer.prefix ? { prefix: answer.prefix } : {}) });
    if (answer.decision === 'allow_session') this.approvedForSession.add(key);
    if (answer.decision === 'allow_prefix' && answer.prefix) this.approvedPrefixes.add(call.toolName, answer.prefix);
    if (answer.decision === 'deny') return { allowed: false, message: `the user denied this call${answer.message ? `: ${answer.message}` : ''}` };
    if (answer.decision === 'deny_interrupt') {
      this.interrupt('user');
      return { allowed: false, message: `the user denied this call and interrupted the turn${answer.message ? `: ${answer.message}` : ''}` };
    }
    return { allowed: true };
  }

  /** Environment tools, plus the collaboration tools while subagents may still be nested below this session. */
  private tools(): Tool[] {
    const runtime = this.conversation.runtime;
    // With several executors, each environment tool is offered once with an `executor` argument.
    const environment = runtime.tools.map((tool) => routeTool(tool, this.conversation.workspaces));
    // The agent's own subagent limits (agents.yaml) refine the server's (server.yaml).
    const limits = { ...runtime.limits.subagents, ...runtime.agentDefinition(this.state.agent).subagents };
    if (sessionDepth(this.conversation, this) >= limits.maxDepth) return [...environment, requestUserInputTool];
    return [...environment, requestUserInputTool, ...collaborationTools(new SubagentManager(this.conversation, this, limits))];
  }

  private itemBase(turnId: string) {
    const now = Date.now();
    return { id: newId('item'), sessionId: this.id, turnId, createdAt: now, completedAt: now, status: 'completed' as const };
  }

  /**
   * Runs one turn and records its end. Whatever throws (a storage error such as ENOSPC, a
   * hook, a bug), the turn ends `failed` with the reason in `error`, the session goes back to
   * idle and clients hear `turn/completed`; records that cannot be written are logged.
   * Never rejects.
   */
  private async runTurn(turnId: string, work: PendingWork): Promise<void> {
    const controller = new AbortController();
    this.abortController = controller;
    const turn: Turn = {
      id: turnId,
      sessionId: this.id,
      conversationId: this.conversation.id,
      status: 'running',
      steps: 0,
      usage: ZERO_USAGE,
      // An input's own model applies to its turn only.
      model: work.kind === 'input' && work.model ? work.model : this.state.model,
      startedAt: Date.now(),
      completedAt: null,
    };
    let outcome: AgentOutcome;
    try {
      outcome = await this.runTurnSteps(turn, work, controller);
    } catch (error) {
      const message = `the turn could not continue: ${describeError(error)}`;
      this.conversation.runtime.logger?.error({ conversationId: this.conversation.id, sessionId: this.id, turnId, error: describeError(error) }, 'turn failed');
      outcome = { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'model_error', error: message };
    }
    if (outcome.stopReason === 'user_interrupt' && isShutdown(controller.signal)) outcome = { ...outcome, stopReason: 'shutdown' };
    await this.finishTurn(turn, outcome);
  }

  /** Records the end of a turn, in memory first so the session is idle even when nothing can be written. */
  private async finishTurn(started: Turn, outcome: AgentOutcome): Promise<void> {
    // Steering that arrived too late for this turn's model calls starts the next turn.
    this.queue.requeueLateSteering(() => newId('turn'));
    await this.writes.drain();
    const prices = started.model !== undefined ? this.conversation.runtime.prices(started.model) : undefined;
    const { status, steps, usage, stopReason } = outcome;
    const turn: Turn = { ...started, status, steps, usage, stopReason, ...(prices ? { costUsd: costOf(usage, prices) } : {}), completedAt: Date.now(), ...(outcome.error ? { error: outcome.error } : {}) };
    this.abortController = undefined;
    this.lastTurnStatus = outcome.status;
    const logger = this.conversation.runtime.logger;
    const context = { conversationId: this.conversation.id, sessionId: this.id, turnId: turn.id };
    // The session is idle before clients hear the turn ended, so input sent on turn/completed starts a turn at once.
    await this.saveState({ status: 'idle', activeTurnId: null, queuedInputs: this.queue.describe() }).catch((error: unknown) =>
      logger?.error({ ...context, error: describeError(error) }, 'cannot record the session as idle'),
    );
    await this.conversation.recordTurn(turn, 'turn/completed').catch((error: unknown) => logger?.error({ ...context, status: turn.status, error: describeError(error) }, 'cannot record the end of the turn'));
  }

  /** The body of a turn; throws when a record cannot be written. */
  private async runTurnSteps(turn: Turn, work: PendingWork, controller: AbortController): Promise<AgentOutcome> {
    const turnId = turn.id;
    const model = turn.model ?? this.state.model;
    await this.saveState({ status: 'running', activeTurnId: turnId, queuedInputs: this.queue.describe() });
    await this.conversation.recordTurn(turn, 'turn/started');
    if (this.agentInUse !== this.state.agent) await this.record({ ...this.itemBase(turnId), kind: 'agent_change', from: this.agentInUse, to: this.state.agent });
    this.agentInUse = this.state.agent;
    if (this.state.pendingAgentChange !== undefined) await this.saveState({ pendingAgentChange: undefined });
    if (this.modelInUse !== undefined && this.modelInUse !== model) {
      await this.record({ ...this.itemBase(turnId), kind: 'model_change', from: this.modelInUse, to: model });
    }
    this.modelInUse = model;
    const location = this.conversation.describeWorkLocation();
    if (location !== this.executorsInUse) {
      await this.record({ ...this.itemBase(turnId), kind: 'executor_change', from: this.executorsInUse, to: location });
      this.executorsInUse = location;
    }
    // AGENTS.md and session_start hooks on the first turn, skills, hooks; user_prompt_submit hooks may refuse the prompt.
    const extensions = await beginTurn(this.conversation, { sessionId: this.id, turnId, signal: controller.signal, history: () => this.items, record: (item) => this.record(item), carriesInput: work.kind !== 'compact' });
    let refusal: string | undefined;
    if (work.kind === 'input') {
      refusal = await extensions.submitPrompt(work.content, (status) => this.record({ ...this.itemBase(turnId), kind: 'user_message', content: work.content, mode: 'input', status, inputId: work.id, ...originOf(work) }));
    } else if (work.kind === 'agent') {
      await this.record({ ...this.itemBase(turnId), kind: 'agent_message', fromSessionId: work.fromSessionId, toSessionId: this.id, text: work.text });
    }

    let outcome: AgentOutcome;
    try {
      const runtime = this.conversation.runtime;
      // Taken once: a configuration reload during the turn applies from the next turn on.
      const definition = runtime.agentDefinition(this.state.agent);
      const mcp = this.conversation.mcpForTurn(this);
      const baseTools = [...this.tools(), updatePlanTool({ setPlan: (plan) => this.setPlan(turnId, plan) }), ...extensions.tools];
      const resolvedModel = runtime.models.resolve(model);
      const environment: AgentEnvironment = {
        model: resolvedModel,
        // Read before each model call: an MCP server's tool list may change during the turn.
        get tools() {
          return mcp.withTools(baseTools);
        },
        resolveTool: (name) => mcp.resolveTool(name),
        system: extensions.system(this.conversation.systemPrompt(this.state.agent)),
        workspace: this.conversation.workspace,
        commands: this.commands,
        signal: controller.signal,
        maxSteps: definition.maxSteps ?? runtime.limits.maxStepsPerTurn,
        retryPolicy: runtime.limits.retryPolicy,
        compactionThreshold: runtime.limits.compactionThreshold,
        toolOutputLimitBytes: runtime.limits.toolOutputLimitBytes,
        readAttachment: (attachmentId) => runtime.attachments?.read(this.conversation.id, attachmentId)?.bytes,
        contextMeter: this.contextMeter,
        sessionId: this.id,
        turnId,
        history: () => this.items,
        // A policy given with conversation/create wins over the agent's, in every session of the conversation.
        authorize: (call, hookPermission, executor, shown) => this.authorize(turnId, this.conversation.state.approvalPolicy ?? definition.approvals, call, controller.signal, hookPermission, executor, shown),
        askUser: (question, call) => this.conversation.userInputs.request({ conversationId: this.conversation.id, sessionId: this.id, turnId, ...call, ...question }, controller.signal),
        hooks: extensions.hooks,
        takeSteering: () => this.queue.takeSteering(),
        record: (item) => this.record(item),
        itemStarted: (itemId, kind, partial) => this.conversation.itemStarted(this.id, turnId, itemId, kind, partial),
        itemDelta: (itemId, delta) => this.conversation.itemDelta(this.id, turnId, itemId, delta),
        modelCallCompleted: (lastCall, turnTotal) =>
          this.conversation.publish({
            method: 'session/usage',
            params: usageReport({ conversationId: this.conversation.id, sessionId: this.id, turnId, seq: this.conversation.itemHead(this.id) }, resolvedModel, lastCall, turnTotal, runtime.prices(resolvedModel.name)),
          }),
        ...(runtime.logger ? { logger: runtime.logger } : {}),
        ...(work.kind === 'input' && work.reasoningEffort ? { reasoningEffort: work.reasoningEffort } : {}),
        modelRetrying: (retry) => this.conversation.publish({ method: 'turn/retrying', params: { conversationId: this.conversation.id, sessionId: this.id, turnId, ...retry } }),
      };
      // MCP servers start on the first turn; ones that failed are tried again on each turn.
      if (work.kind !== 'compact' && refusal === undefined) await mcp.prepare(controller.signal);
      outcome = refusal !== undefined ? { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'hook_refused', error: refusal } : work.kind === 'compact' ? await runCompaction(environment) : await runAgent(environment);
    } catch (error) {
      // A record that cannot be written ends the turn as a whole (see runTurn).
      if (error instanceof RecordWriteError) throw error;
      // Configuration problems (unknown model, unset key) end the turn like a model error.
      const message = (error as Error).message;
      await this.record({ ...this.itemBase(turnId), kind: 'model_error', status: 'failed', provider: model.split('/')[0] ?? '', model, httpStatus: null, message, retries: 0 });
      outcome = { status: 'failed', steps: 0, usage: ZERO_USAGE, stopReason: 'model_error', error: message };
    }
    if (outcome.status === 'interrupted' && controller.signal.aborted) {
      const reason = isShutdown(controller.signal) ? 'shutdown' : 'user';
      await this.record({ ...this.itemBase(turnId), kind: 'interruption', reason });
    }
    return outcome;
  }
}

/** Whether an aborted turn was stopped by the server's shutdown (see `interrupt`). */
function isShutdown(signal: AbortSignal): boolean {
  return signal.aborted && String((signal.reason as Error)?.message ?? '').endsWith('shutdown');
}

/** An item that could not be appended to the session's log (the cause is the storage error). */
class RecordWriteError extends Error {
  constructor(item: Item, cause: unknown) {
    super(`cannot record the ${item.kind} item: ${describeError(cause)}`, { cause });
    this.name = 'RecordWriteError';
  }
}

/** The message of anything thrown, with its errno code when it has one (`ENOSPC: no space left on device, write`). */
function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

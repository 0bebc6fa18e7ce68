/**
 * A live session (SPEC §3): one agent's line of work. It owns its queue of pending inputs and
 * runs one turn at a time; input arriving during a turn is queued (next turn) or steering
 * (read before the running turn's next model call).
 */
import { newId } from '../ids.js';
import type { ContentPart, Item, Session, StateConflictReason, StoredItem, Turn } from '../protocol/index.js';
import { collaborationTools, type SubagentReport } from './collaboration-tools.js';
import { ContextMeter } from './compaction.js';
import { sessionDepth, SubagentManager } from './subagents.js';
import { routeTool } from './tool-routing.js';
import { requestUserInputTool } from '../tools/request-user-input.js';
import type { Tool } from '../tools/tool.js';
import type { LiveConversation } from './conversation.js';
import { SerialQueue } from './serial-queue.js';
import { StateConflictError } from './state-conflict-error.js';
import { BackgroundCommandRegistry } from './background-commands.js';
import { answeredInItems, InputQueue, inputWork, originOf, requireRunningTurn, type InputOptions, type InputOutcome, type PendingWork } from './input-queue.js';
import type { PlanUpdate } from '../tools/update-plan.js';
import { HistorySize } from './history-size.js';
import { SessionApprovalGate } from './session-approvals.js';
import { describeError, itemBase, RecordWriteError, runTurn, type InUse, type TurnHost } from './session-turn.js';

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
  /** What the history was last run with (read and updated by each turn). */
  private readonly inUse: InUse;
  private lastTurnStatus: Exclude<Turn['status'], 'running'> | undefined;
  /** The approval policy applied to the session's tool calls, and what a person approved for the session. */
  private readonly approvals: SessionApprovalGate;
  private abortController: AbortController | undefined;
  private running: Promise<void> | undefined;
  /** Commands left running by `exec_command` (`yield_after_ms`, `tty`); they outlive turns, not the session. */
  readonly commands = new BackgroundCommandRegistry();
  private readonly historySize = new HistorySize();

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
    const lastAgentChange = items.findLast((item) => item.kind === 'agent_change');
    const pending = state.pendingAgentChange;
    // A change asked for before the server stopped is still to record, unless its item was written just before.
    const agent = pending !== undefined && !(lastAgentChange !== undefined && lastAgentChange.createdAt >= pending.requestedAt) ? pending.from : lastAgentChange?.kind === 'agent_change' ? lastAgentChange.to : state.agent;
    const lastChange = items.findLast((item) => item.kind === 'executor_change');
    this.inUse = { model: modelInHistory(items), agent, executors: lastChange?.kind === 'executor_change' ? lastChange.to : conversation.describeWorkLocation() };
    this.approvals = new SessionApprovalGate({
      conversationId: conversation.id,
      sessionId: state.id,
      conversationPolicy: () => this.conversation.state.approvalPolicy,
      agent: () => this.state.agent,
      defaultExecutor: () => this.conversation.workspace.executor.name,
      request: (details, signal) => this.conversation.approvals.request(details, signal),
      recordApproval: (turnId, decision) => this.record({ ...itemBase(this.id, turnId), kind: 'approval', ...decision }),
      interrupt: () => this.interrupt('user'),
    });
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

  /** Characters of text the history kept in memory holds (see `HistorySize`). */
  get historyChars(): number {
    return this.historySize.of(this.items);
  }

  /**
   * True when closing the session now would lose nothing: no work, no background command still
   * running, no approval remembered for the session (see `Runtime` eviction).
   */
  get canClose(): boolean {
    return !this.hasWork && this.writes.isIdle && !this.commands.hasRunning && !this.approvals.remembersApprovals;
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
    this.inUse.model = modelInHistory(this.items);
    const lastChange = this.items.findLast((item) => item.kind === 'executor_change');
    this.inUse.executors = lastChange?.kind === 'executor_change' ? lastChange.to : this.conversation.describeWorkLocation();
    this.approvals.forget();
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
    await this.conversation.externalAgents.stop(this.id);
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
    // Only an input that makes a new turn is checked (steering joins the running turn), and before anything is written.
    if (!(mode === 'steer' && this.state.activeTurnId !== null)) await this.conversation.runtime.extensions.newTurnCheck?.(this.conversation);
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

  /**
   * Queues a manual compaction (runs now when idle). It is a turn of its own with a model call,
   * so `runtime.extensions.newTurnCheck` may refuse it (throwing) like an input.
   */
  async compact(): Promise<{ queued: boolean; turnId?: string }> {
    await this.conversation.runtime.extensions.newTurnCheck?.(this.conversation);
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
    const pendingAgentChange = agent !== this.inUse.agent ? { from: this.inUse.agent, requestedAt: Date.now() } : undefined;
    await this.saveState({ agent, ...(model !== undefined ? { model } : {}), pendingAgentChange });
    return this.state;
  }

  /** Records the agent's plan (`update_plan`) as a `plan` item, announces it and keeps it in the session state for late subscribers. */
  private async setPlan(turnId: string, plan: PlanUpdate): Promise<void> {
    const item: Item = { ...itemBase(this.id, turnId), kind: 'plan', ...plan };
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
      await runTurn(this.turnHost(), work.turnId, work);
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

  /** What a turn of this session reads and changes (see `runTurn`). */
  private turnHost(): TurnHost {
    const conversation = this.conversation;
    const state = () => this.state;
    return {
      id: this.id,
      get state() {
        return state();
      },
      conversation,
      items: this.items,
      queue: this.queue,
      commands: this.commands,
      contextMeter: this.contextMeter,
      inUse: this.inUse,
      approvals: this.approvals,
      saveState: (changes) => this.saveState(changes),
      record: (item) => this.record(item),
      drainWrites: () => this.writes.drain(),
      mcpForTurn: () => conversation.mcpForTurn(this),
      tools: () => this.tools(),
      setPlan: (turnId, plan) => this.setPlan(turnId, plan),
      turnBegan: (controller) => {
        this.abortController = controller;
      },
      turnEnded: (status) => {
        this.abortController = undefined;
        this.lastTurnStatus = status;
      },
    };
  }
}

/**
 * A live session (SPEC §3): one agent's line of work. It owns its queue of pending inputs and
 * runs one turn at a time; input arriving during a turn is queued (next turn) or steering
 * (read before the running turn's next model call).
 */
import { newId } from '../ids.js';
import type { ContentPart, Item, Session, StoredItem, Turn } from '../protocol/index.js';
import { runAgent, ZERO_USAGE, type AgentOutcome } from './agent.js';
import type { LiveConversation } from './conversation.js';
import { SerialQueue } from './serial-queue.js';

interface PendingInput {
  id: string;
  content: ContentPart[];
}

function textOf(content: ContentPart[]): string {
  return content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(' ');
}

/** A session while its conversation is open in the runtime. */
export class LiveSession {
  private readonly writes = new SerialQueue();
  private readonly pending: PendingInput[] = [];
  private steering: ContentPart[][] = [];
  private abortController: AbortController | undefined;
  private running: Promise<void> | undefined;

  /**
   * @param conversation the owning conversation
   * @param state the session's stored state
   * @param items the session's stored items, oldest first (kept in memory to build requests)
   */
  constructor(
    private readonly conversation: LiveConversation,
    public state: Session,
    private readonly items: Item[],
  ) {}

  /** The session id. */
  get id(): string {
    return this.state.id;
  }

  /** True while a turn runs. */
  get isRunning(): boolean {
    return this.state.activeTurnId !== null;
  }

  /** Resolves when the running turn and every queued input have been processed. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Accepts user input. With no turn running it starts one; otherwise `queue` waits for the
   * next turn and `steer` is read before the running turn's next model call.
   */
  async input(content: ContentPart[], mode: 'queue' | 'steer'): Promise<{ queued: boolean; turnId?: string }> {
    if (this.isRunning && mode === 'steer') {
      this.steering.push(content);
      return { queued: true };
    }
    const input = { id: newId('input'), content };
    this.pending.push(input);
    if (this.isRunning) {
      await this.saveState({ queuedInputs: this.pending.map((entry) => ({ id: entry.id, text: textOf(entry.content) })) });
      return { queued: true };
    }
    const turnId = newId('turn');
    this.running = this.processInputs(turnId).finally(() => {
      this.running = undefined;
    });
    return { queued: false, turnId };
  }

  /** Interrupts the running turn, if any (its processes are killed, the turn ends `interrupted`). */
  interrupt(reason: 'user' | 'shutdown' = 'user'): void {
    this.abortController?.abort(new Error(`interrupted: ${reason}`));
  }

  private async processInputs(firstTurnId: string): Promise<void> {
    let turnId = firstTurnId;
    for (let input = this.pending.shift(); input; input = this.pending.shift()) {
      await this.runTurn(turnId, input);
      turnId = newId('turn');
    }
  }

  private async saveState(changes: Partial<Session>): Promise<void> {
    this.state = { ...this.state, ...changes, updatedAt: Date.now() };
    const state = this.state;
    await this.conversation.recordState({ type: 'session', session: state });
    this.conversation.publish({ method: 'session/updated', params: { conversationId: this.conversation.id, session: state } });
  }

  /** Persists a completed item, keeps it for the context, tells clients. */
  private record(item: Item): Promise<void> {
    return this.writes.run(async () => {
      const [stored] = await this.conversation.appendItems(this.id, [item]);
      this.items.push(item);
      this.conversation.itemCompleted(this.id, stored as StoredItem);
    });
  }

  private async runTurn(turnId: string, input: PendingInput): Promise<void> {
    const controller = new AbortController();
    this.abortController = controller;
    let turn: Turn = {
      id: turnId,
      sessionId: this.id,
      conversationId: this.conversation.id,
      status: 'running',
      steps: 0,
      usage: ZERO_USAGE,
      startedAt: Date.now(),
      completedAt: null,
    };
    await this.saveState({ status: 'running', activeTurnId: turnId, queuedInputs: this.pending.map((entry) => ({ id: entry.id, text: textOf(entry.content) })) });
    await this.conversation.recordTurn(turn, 'turn/started');
    const now = Date.now();
    await this.record({ id: newId('item'), sessionId: this.id, turnId, createdAt: now, completedAt: now, kind: 'user_message', status: 'completed', content: input.content, mode: 'input' });

    let outcome: AgentOutcome;
    try {
      const model = this.conversation.runtime.models.resolve(this.state.model);
      outcome = await runAgent({
        model,
        tools: this.conversation.runtime.tools,
        system: this.conversation.systemPrompt(),
        workspace: this.conversation.workspace,
        signal: controller.signal,
        maxSteps: this.conversation.runtime.limits.maxStepsPerTurn,
        retryPolicy: this.conversation.runtime.limits.retryPolicy,
        sessionId: this.id,
        turnId,
        history: () => this.items,
        takeSteering: () => this.steering.splice(0),
        record: (item) => this.record(item),
        itemStarted: (itemId, kind, partial) => this.conversation.itemStarted(this.id, turnId, itemId, kind, partial),
        itemDelta: (itemId, delta) => this.conversation.itemDelta(this.id, itemId, delta),
      });
    } catch (error) {
      // Configuration problems (unknown model, unset key) end the turn like a model error.
      const message = (error as Error).message;
      const at = Date.now();
      await this.record({ id: newId('item'), sessionId: this.id, turnId, createdAt: at, completedAt: at, kind: 'model_error', status: 'failed', provider: this.state.model.split('/')[0] ?? '', model: this.state.model, httpStatus: null, message, retries: 0 });
      outcome = { status: 'failed', steps: 0, usage: ZERO_USAGE, error: message };
    }
    if (outcome.status === 'interrupted' && controller.signal.aborted) {
      const reason = String((controller.signal.reason as Error)?.message ?? '').endsWith('shutdown') ? 'shutdown' : 'user';
      const at = Date.now();
      await this.record({ id: newId('item'), sessionId: this.id, turnId, createdAt: at, completedAt: at, kind: 'interruption', status: 'completed', reason });
    }
    // Steering that arrived too late for this turn's model calls starts the next turn.
    for (const content of this.steering.splice(0)) this.pending.unshift({ id: newId('input'), content });
    await this.writes.drain();
    turn = { ...turn, status: outcome.status, steps: outcome.steps, usage: outcome.usage, completedAt: Date.now(), ...(outcome.error ? { error: outcome.error } : {}) };
    this.abortController = undefined;
    await this.conversation.recordTurn(turn, 'turn/completed');
    await this.saveState({ status: 'idle', activeTurnId: null, queuedInputs: this.pending.map((entry) => ({ id: entry.id, text: textOf(entry.content) })) });
  }
}

/**
 * A live conversation (SPEC §3): one task, its work location and its sessions, while open in
 * the runtime. It writes its state changes in order on its own queue and fans its events out
 * to the attached clients, replaying what a late subscriber missed.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ConversationState, MetadataEntry } from '../dao/conversation-store.js';
import type { Workspace } from '../executors/workspace.js';
import { newId } from '../ids.js';
import { McpClientManager, type McpSettings } from '../mcp/client-manager.js';
import type { AnyNotification, Conversation, Item, Session, StoredItem, Turn } from '../protocol/index.js';
import { ApprovalBroker } from './approvals/broker.js';
import { UserInputBroker } from './user-input/broker.js';
import { EventBus, type EventListener } from './event-bus.js';
import type { Runtime } from './runtime.js';
import { SerialQueue } from './serial-queue.js';
import { LiveSession } from './session.js';

const DEFAULT_SYSTEM_PROMPT = readFileSync(fileURLToPath(new URL('./prompts/system.txt', import.meta.url)), 'utf8').trim();

/** An item in progress, remembered so late subscribers get its deltas so far. */
interface ItemInProgress {
  started: Extract<AnyNotification, { method: 'item/started' }>;
  text: string;
  reasoning: string;
  output: string;
}

/** How a subscriber ends its subscription and paces its replay. */
export interface SubscribeOptions {
  /** Aborting it detaches the listener: during the replay (which then stops) or any time after. */
  signal?: AbortSignal;
  /**
   * Called before each replayed stored item; when it returns a promise the replay waits for it,
   * so a client that reads slowly slows its own replay instead of piling it up in memory.
   */
  ready?: () => Promise<void> | undefined;
}

/**
 * Keeps an event back for a subscriber whose replay is still running; consecutive deltas of one
 * item are merged (in order), so a long stream during a slow replay costs its text, not one
 * event per delta.
 */
function holdEvent(held: AnyNotification[], event: AnyNotification): void {
  const last = held.at(-1);
  if (event.method === 'item/delta' && last?.method === 'item/delta' && last.params.itemId === event.params.itemId) {
    const merged = { ...last.params.delta };
    for (const key of ['text', 'reasoning', 'output'] as const) {
      const piece = event.params.delta[key];
      if (piece) merged[key] = (merged[key] ?? '') + piece;
    }
    held[held.length - 1] = { method: 'item/delta', params: { ...last.params, delta: merged } };
    return;
  }
  held.push(event);
}

/** A conversation while it is open in the runtime. */
export class LiveConversation {
  // A listener that throws is logged: the first failure, then every 100th, so a broken client cannot flood the log.
  private readonly bus = new EventBus((error, event, failures) => {
    if (failures === 1 || failures % 100 === 0) {
      this.runtime.logger?.warn({ conversationId: this.id, method: event.method, failures, error: error instanceof Error ? error.message : String(error) }, 'an event listener threw');
    }
  });
  private readonly metadataWrites = new SerialQueue();
  private readonly inProgress = new Map<string, ItemInProgress>();
  readonly sessions = new Map<string, LiveSession>();
  /** Tool calls waiting for a person's decision. */
  readonly approvals = new ApprovalBroker({
    requested: (approval) => {
      this.publish({ method: 'approval/requested', params: { conversationId: this.id, approval } });
      this.refreshPendingApprovals(approval.sessionId);
    },
    resolved: (approval, answer) => {
      const { approvalId, sessionId, turnId, callId, itemId } = approval;
      this.publish({ method: 'approval/resolved', params: { conversationId: this.id, approvalId, sessionId, turnId, callId, itemId, decision: answer.decision, decidedBy: answer.decidedBy } });
      this.refreshPendingApprovals(approval.sessionId);
    },
  });
  /** Questions of `request_user_input` waiting for the user. */
  readonly userInputs = new UserInputBroker({
    requested: (request) => {
      this.publish({ method: 'input/requested', params: { conversationId: this.id, request } });
      this.refreshPendingApprovals(request.sessionId);
    },
    resolved: (request, resolution) => {
      const { requestId, sessionId, turnId, callId, itemId } = request;
      this.publish({ method: 'input/resolved', params: { conversationId: this.id, requestId, sessionId, turnId, callId, itemId, ...resolution } });
      this.refreshPendingApprovals(request.sessionId);
    },
  });
  private readonly turns = new Map<string, Turn>();
  /** The conversation's MCP clients (servers start on the first turn; see `LiveSession`). */
  private mcpClients: McpClientManager;
  /** The server list the clients were made from, to tell when a reload changed it. */
  private mcpServers: McpSettings['servers'] | undefined;

  /**
   * @param runtime the owning runtime (models, tools, store, limits)
   * @param state the stored conversation state
   * @param workspaces one workspace per entry of the work location (the first is the default)
   * @param sessionItems stored items per session id
   */
  constructor(
    readonly runtime: Runtime,
    public state: Conversation,
    public workspaces: [Workspace, ...Workspace[]],
    stored: ConversationState,
    sessionItems: Map<string, Item[]>,
  ) {
    for (const session of stored.sessions) {
      this.sessions.set(session.id, new LiveSession(this, session, sessionItems.get(session.id) ?? []));
    }
    for (const turn of stored.turns) this.turns.set(turn.id, turn);
    this.mcpServers = runtime.mcp?.servers;
    this.mcpClients = this.createMcpClients();
  }

  private createMcpClients(): McpClientManager {
    const workspace = this.workspaces[0];
    return new McpClientManager(this.runtime.mcp, { workDirectory: workspace.root, workExecutor: workspace.executor.name, findExecutor: (name) => this.runtime.findExecutor(name) });
  }

  /** The conversation's MCP clients. */
  get mcp(): McpClientManager {
    return this.mcpClients;
  }

  /**
   * The MCP clients for a turn that is starting in `session`. When a reload changed the MCP
   * servers since the clients were made and no other session of the conversation is running,
   * the old clients are stopped and new ones made from the configuration in force, so a
   * reloaded `mcp.yaml` applies to open conversations from their next turn.
   */
  mcpForTurn(session: LiveSession): McpClientManager {
    const servers = this.runtime.mcp?.servers;
    const othersRunning = [...this.sessions.values()].some((other) => other !== session && other.isRunning);
    if (servers !== this.mcpServers && !othersRunning) {
      const old = this.mcpClients;
      this.mcpServers = servers;
      this.mcpClients = this.createMcpClients();
      old.close().catch((error: unknown) => this.runtime.logger?.warn({ conversationId: this.id, error: (error as Error).message }, 'closing the previous MCP clients failed'));
    }
    return this.mcpClients;
  }

  /** Writes and announces a session's waiting approvals; a failed write is logged (the approval itself goes on). */
  private refreshPendingApprovals(sessionId: string): void {
    this.sessions
      .get(sessionId)
      ?.refreshPendingApprovals()
      .catch((error: unknown) => this.runtime.logger?.error({ conversationId: this.id, sessionId, error: error instanceof Error ? error.message : String(error) }, 'cannot record the pending approvals'));
  }

  /** How the work location reads in `executor_change` items (`local:/home/me/project, box:/srv`). */
  describeWorkLocation(): string {
    return this.state.workLocation.map((entry) => `${entry.executor}:${entry.cwd}`).join(', ');
  }

  /**
   * Renames the conversation and/or moves its work; running turns finish where they started.
   * @param workspaces the workspaces of the new work location (built and checked by the runtime)
   */
  async update(changes: { title?: string; workLocation?: Conversation['workLocation'] }, workspaces?: [Workspace, ...Workspace[]]): Promise<Conversation> {
    this.state = { ...this.state, ...(changes.title ? { title: changes.title } : {}), ...(changes.workLocation ? { workLocation: changes.workLocation } : {}) };
    if (workspaces) this.workspaces = workspaces;
    await this.metadataWrites.run(() => this.runtime.store.appendMetadata(this.id, [{ type: 'conversation', conversation: this.state }]));
    this.publish({ method: 'conversation/updated', params: { conversation: this.state } });
    return this.state;
  }

  /** The workspace of the conversation's first (default) executor. */
  get workspace(): Workspace {
    return this.workspaces[0];
  }

  /** The conversation id. */
  get id(): string {
    return this.state.id;
  }

  /** Stored-state snapshot for `conversation/get`. */
  snapshot(): { conversation: Conversation; sessions: Session[]; turns: Turn[] } {
    return { conversation: this.state, sessions: [...this.sessions.values()].map((session) => session.state), turns: [...this.turns.values()] };
  }

  /** The root session. */
  get rootSession(): LiveSession {
    const session = this.sessions.get(this.state.rootSessionId);
    if (!session) throw new Error(`conversation ${this.id} has no root session ${this.state.rootSessionId}`);
    return session;
  }

  /** True while any session runs a turn. */
  get isBusy(): boolean {
    return [...this.sessions.values()].some((session) => session.isRunning);
  }

  /** Creates a new session (a subagent when it has a parent), records it and announces it. */
  async createSession(options: { parentSessionId: string | null; agent: string; model: string }): Promise<LiveSession> {
    const now = Date.now();
    const state: Session = { id: newId('sess'), conversationId: this.id, parentSessionId: options.parentSessionId, agent: options.agent, model: options.model, status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], createdAt: now, updatedAt: now };
    const session = new LiveSession(this, state, []);
    this.sessions.set(state.id, session);
    await this.recordState({ type: 'session', session: state });
    this.publish({ method: 'session/updated', params: { conversationId: this.id, session: state } });
    return session;
  }

  /** System instructions for an agent of this conversation: the built-in prompt, the agent's own instructions, the work location. */
  systemPrompt(agent: string): string {
    const instructions = this.runtime.agentDefinition(agent).instructions;
    return [DEFAULT_SYSTEM_PROMPT, ...(instructions ? [instructions.trim()] : []), `Working directory: ${this.workspace.root} (executor "${this.workspace.executor.name}").`].join('\n\n');
  }

  /** Appends state entries to the metadata log in order, touching `updatedAt`. */
  recordState(entry: MetadataEntry): Promise<number> {
    return this.metadataWrites.run(() => {
      this.state = { ...this.state, updatedAt: Date.now() };
      return this.runtime.store.appendMetadata(this.id, [entry, { type: 'conversation', conversation: this.state }]);
    });
  }

  /** Records a turn's state and announces it. */
  async recordTurn(turn: Turn, method: 'turn/started' | 'turn/completed'): Promise<void> {
    this.turns.set(turn.id, turn);
    try {
      await this.recordState({ type: 'turn', turn });
    } finally {
      // Clients hear the turn's state even when it could not be written (the caller reports that).
      this.publish({ method, params: { conversationId: this.id, turn } });
    }
  }

  /** Appends items to a session's log. */
  appendItems(sessionId: string, items: Item[]): Promise<StoredItem[]> {
    return this.runtime.store.appendItems(this.id, sessionId, items);
  }

  /** Announces an item that began. */
  itemStarted(sessionId: string, turnId: string, itemId: string, kind: Item['kind'], partial: Record<string, unknown>): void {
    const started = { method: 'item/started' as const, params: { conversationId: this.id, sessionId, turnId, itemId, kind, partial } };
    this.inProgress.set(itemId, { started, text: '', reasoning: '', output: '' });
    this.publish(started);
  }

  /** Streams progress of an item in progress. */
  itemDelta(sessionId: string, itemId: string, delta: { text?: string; reasoning?: string; output?: string }): void {
    const progress = this.inProgress.get(itemId);
    if (progress) {
      progress.text += delta.text ?? '';
      progress.reasoning += delta.reasoning ?? '';
      progress.output += delta.output ?? '';
    }
    this.publish({ method: 'item/delta', params: { conversationId: this.id, sessionId, itemId, delta } });
  }

  /** Announces a stored item. */
  itemCompleted(sessionId: string, stored: StoredItem): void {
    this.inProgress.delete(stored.item.id);
    this.publish({ method: 'item/completed', params: { conversationId: this.id, sessionId, seq: stored.seq, item: stored.item } });
  }

  /** Sends an event to every subscriber. */
  publish(event: AnyNotification): void {
    this.bus.publish(event);
  }

  /** Number of attached subscribers. */
  get subscriberCount(): number {
    return this.bus.size;
  }

  /**
   * Attaches a subscriber: first the stored items it missed (after `afterSeq` per session),
   * then the deltas so far of items in progress, then live events — no gap, no duplicate
   * (SPEC §5). The listener is registered before the replay and removed on every way out: an
   * error during the replay, or `options.signal` aborting (during the replay or at any time
   * after). Returns the function that detaches it.
   */
  async subscribe(listener: EventListener, afterSeq: Record<string, number> = {}, options: SubscribeOptions = {}): Promise<() => void> {
    const { signal } = options;
    // Listen first and hold live events back, so nothing completed during the read is lost.
    const held: AnyNotification[] = [];
    let live = false;
    const unsubscribe = this.bus.subscribe((event) => {
      if (live) listener(event);
      else holdEvent(held, event);
    });
    if (signal?.aborted) {
      unsubscribe();
      return unsubscribe;
    }
    signal?.addEventListener('abort', unsubscribe, { once: true });
    const ended = () => signal?.aborted === true;
    try {
      // Taken in the same tick as subscribing: deltas after this point arrive in `held`.
      const progressSnapshot = [...this.inProgress.values()].map((progress) => ({ ...progress }));
      const lastSent = new Map<string, number>();
      const sentIds = new Set<string>();
      for (const session of this.sessions.values()) {
        const after = afterSeq[session.id] ?? 0;
        let cursor = after;
        lastSent.set(session.id, after);
        while (true) {
          const page = await this.runtime.store.listItems(this.id, session.id, { cursor, limit: 500 });
          if (ended()) return unsubscribe;
          for (const stored of page) {
            const waiting = options.ready?.();
            if (waiting) await waiting;
            if (ended()) return unsubscribe;
            listener({ method: 'item/completed', params: { conversationId: this.id, sessionId: session.id, seq: stored.seq, item: stored.item } });
            lastSent.set(session.id, stored.seq);
            sentIds.add(stored.item.id);
          }
          if (page.length < 500) break;
          cursor = page.at(-1)?.seq ?? cursor;
        }
      }
      for (const progress of progressSnapshot) {
        if (sentIds.has(progress.started.params.itemId)) continue;
        listener(progress.started);
        const { text, reasoning, output } = progress;
        if (text || reasoning || output) {
          const delta = { ...(text ? { text } : {}), ...(reasoning ? { reasoning } : {}), ...(output ? { output } : {}) };
          listener({ method: 'item/delta', params: { conversationId: this.id, sessionId: progress.started.params.sessionId, itemId: progress.started.params.itemId, delta } });
        }
      }
      const approvalsAnnounced = new Set<string>();
      for (const event of held) {
        if (event.method === 'item/completed' && event.params.seq <= (lastSent.get(event.params.sessionId) ?? 0)) continue;
        if (event.method === 'approval/requested') approvalsAnnounced.add(event.params.approval.approvalId);
        if (event.method === 'input/requested') approvalsAnnounced.add(event.params.request.requestId);
        listener(event);
      }
      // A client that arrives while a call waits for approval is asked too.
      for (const approval of this.approvals.list()) {
        if (!approvalsAnnounced.has(approval.approvalId)) listener({ method: 'approval/requested', params: { conversationId: this.id, approval } });
      }
      for (const request of this.userInputs.list()) {
        if (!approvalsAnnounced.has(request.requestId)) listener({ method: 'input/requested', params: { conversationId: this.id, request } });
      }
      live = true;
      return unsubscribe;
    } catch (error) {
      unsubscribe();
      throw error;
    }
  }

  /** Interrupts every running turn, waits until each has recorded its end, and kills the sessions' background commands. */
  async shutdown(): Promise<void> {
    for (const session of this.sessions.values()) session.interrupt('shutdown');
    await Promise.all([...this.sessions.values()].map((session) => session.idle()));
    await Promise.all([...this.sessions.values()].map((session) => session.commands.closeAll()));
    await this.metadataWrites.drain();
    await this.mcpClients.close();
  }
}

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
import type { McpClientManager, McpSettings } from '../mcp/client-manager.js';
import type { AnyNotification, Conversation, Item, ItemDelta, Session, SessionHeads, StoredItem, Turn } from '../protocol/index.js';
import { ApprovalBroker } from './approvals/broker.js';
import { ConversationMcp } from './conversation-mcp.js';
import { UserInputBroker } from './user-input/broker.js';
import { ClientCommandServers } from './client-commands.js';
import { ClientFileServers } from './client-files.js';
import { EventBus, type EventListener } from './event-bus.js';
import { storedSessionState } from './input-queue.js';
import type { Runtime } from './runtime.js';
import { SerialQueue } from './serial-queue.js';
import { LiveSession } from './session.js';
import { ItemInProgress } from './replay-buffer.js';
import { ExternalAgentPool } from './external-agents/pool.js';
import { attachSubscriber, type Attachment, type ConversationSnapshot, type SubscribeOptions, type SubscriptionSource } from './conversation-subscription.js';

const DEFAULT_SYSTEM_PROMPT = readFileSync(fileURLToPath(new URL('./prompts/system.txt', import.meta.url)), 'utf8').trim();

export type { SubscribeOptions } from './conversation-subscription.js';

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
  /** Clients serving the conversation's text files to its tools (`conversation/serveFiles`). */
  readonly clientFiles = new ClientFileServers();
  /** Clients running the conversation's commands for `exec_command` (`conversation/serveCommands`). */
  readonly clientCommands = new ClientCommandServers();
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
  /** The processes of sessions whose agent is an external one (`kind: acp` / `codex-app-server`). */
  readonly externalAgents: ExternalAgentPool;
  /** Seq of the last entry written to `metadata.jsonl`. */
  private metadataSeq: number;
  /** Per session, the seq of its last stored item (filled by `loadHeads`, then kept by `itemCompleted`). */
  private readonly itemHeads = new Map<string, number>();
  private headsLoaded: Promise<void> | undefined;
  /** True once `loadHeads` has finished. */
  private headsReady = false;
  /** The conversation's MCP clients (servers start on the first turn; see `LiveSession`). */
  private readonly mcpClients: ConversationMcp;

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
    this.metadataSeq = stored.metadataSeq;
    this.mcpClients = new ConversationMcp({
      settings: () => runtime.mcp,
      ownServers: () => this.state.mcpServers as McpSettings['servers'] | undefined,
      ownAddressCheck: () => runtime.extensions.ownMcpAddressCheck?.(this),
      builtInServers: (workspace) => runtime.extensions.builtInMcpServers?.(workspace) ?? [],
      workspace: () => this.workspaces[0],
      findExecutor: (name) => runtime.findExecutor(name),
      logger: runtime.logger,
      conversationId: state.id,
    });
    this.externalAgents = new ExternalAgentPool(() => this.workspace.root, runtime.logger, {
      ...(runtime.processTracker ? { tracker: runtime.processTracker } : {}),
      environment: () => runtime.agentEnvironment?.(this.state),
    });
  }

  /** The conversation's MCP clients. */
  get mcp(): McpClientManager {
    return this.mcpClients.current;
  }

  /**
   * The MCP clients for a turn that is starting in `session`. When a reload changed the MCP
   * servers since the clients were made and no other session of the conversation is running,
   * the old clients are stopped and new ones made from the configuration in force, so a
   * reloaded `mcp.yaml` applies to open conversations from their next turn.
   */
  mcpForTurn(session: LiveSession): McpClientManager {
    return this.mcpClients.forTurn([...this.sessions.values()].some((other) => other !== session && other.isRunning));
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
  async update(changes: { title?: string; workLocation?: Conversation['workLocation']; archived?: boolean; worktree?: Conversation['worktree'] }, workspaces?: [Workspace, ...Workspace[]]): Promise<Conversation> {
    this.state = { ...this.state, ...(changes.title ? { title: changes.title } : {}), ...(changes.workLocation ? { workLocation: changes.workLocation } : {}), ...(changes.archived !== undefined ? { archived: changes.archived } : {}), ...(changes.worktree ? { worktree: changes.worktree } : {}) };
    if (workspaces) this.workspaces = workspaces;
    const seq = await this.metadataWrites.run(async () => this.wroteMetadata(await this.runtime.store.appendMetadata(this.id, [{ type: 'conversation', conversation: this.state }])));
    this.publish({ method: 'conversation/updated', params: { conversation: this.state, seq } });
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
  snapshot(): ConversationSnapshot {
    // Turns a rewind emptied are no longer history (they stay in the metadata log, marked).
    return { conversation: this.state, sessions: [...this.sessions.values()].map((session) => session.state), turns: [...this.turns.values()].filter((turn) => turn.rewound !== true) };
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
    this.itemHeads.set(state.id, 0);
    const seq = await this.recordState({ type: 'session', session: state });
    this.publish({ method: 'session/updated', params: { conversationId: this.id, session: state, seq } });
    return session;
  }

  /** System instructions for an agent of this conversation: the built-in prompt, the agent's own instructions, the work location. */
  systemPrompt(agent: string): string {
    const instructions = this.runtime.agentDefinition(agent).instructions;
    return [DEFAULT_SYSTEM_PROMPT, ...(instructions ? [instructions.trim()] : []), `Working directory: ${this.workspace.root} (executor "${this.workspace.executor.name}").`].join('\n\n');
  }

  /**
   * Appends a state entry (and the conversation's touched `updatedAt`) to the metadata log in
   * order. Returns the seq of `entry` in `metadata.jsonl`.
   */
  recordState(entry: MetadataEntry): Promise<number> {
    return this.metadataWrites.run(async () => {
      this.state = { ...this.state, updatedAt: Date.now() };
      // The conversation entry follows `entry`, so `entry` is the one before the last.
      return this.wroteMetadata(await this.runtime.store.appendMetadata(this.id, [entry, { type: 'conversation', conversation: this.state }])) - 1;
    });
  }

  private wroteMetadata(lastSeq: number): number {
    this.metadataSeq = Math.max(this.metadataSeq, lastSeq);
    return lastSeq;
  }

  /**
   * Seq of the last entry written to `metadata.jsonl`: what a state notification carries when
   * its own entry could not be written.
   */
  get lastMetadataSeq(): number {
    return this.metadataSeq;
  }

  /**
   * Writes a session's state and announces it (`session/updated` with the entry's seq, or the
   * last written seq when the write fails; clients follow the state in force either way).
   * @throws the write's error, after announcing
   */
  async recordSession(state: Session): Promise<void> {
    let seq = this.metadataSeq;
    try {
      seq = await this.recordState({ type: 'session', session: storedSessionState(state) });
    } finally {
      this.publish({ method: 'session/updated', params: { conversationId: this.id, session: state, seq } });
    }
  }

  /** Records a turn's state and announces it. */
  async recordTurn(turn: Turn, method: 'turn/started' | 'turn/completed'): Promise<void> {
    this.turns.set(turn.id, turn);
    let seq = this.metadataSeq;
    try {
      seq = await this.recordState({ type: 'turn', turn });
    } finally {
      // Clients hear the turn's state even when it could not be written (the caller reports that).
      this.publish({ method, params: { conversationId: this.id, turn, seq } });
    }
  }

  /** Marks turns whose items a rewind dropped (`rewound`), in the metadata log and in memory. */
  async markTurnsRewound(turnIds: string[]): Promise<void> {
    for (const id of turnIds) {
      const turn = this.turns.get(id);
      if (!turn || turn.rewound) continue;
      const marked: Turn = { ...turn, rewound: true };
      this.turns.set(id, marked);
      await this.recordState({ type: 'turn', turn: marked });
    }
  }

  /** After a rewind cut a session's log at `seq`: that is its head now (new items follow it). */
  rewoundHead(sessionId: string, seq: number): void {
    if (this.itemHeads.has(sessionId)) this.itemHeads.set(sessionId, seq);
  }

  /**
   * Reads, once, the seq of each session's last stored item; later items keep the heads
   * current (`itemCompleted`). Needed before `attach`.
   */
  loadHeads(): Promise<void> {
    this.headsLoaded ??= (async () => {
      for (const sessionId of this.sessions.keys()) {
        const [last] = await this.runtime.store.listItems(this.id, sessionId, { direction: 'backward', limit: 1 });
        // An item stored while reading has already moved the head past what was read.
        this.itemHeads.set(sessionId, Math.max(this.itemHeads.get(sessionId) ?? 0, last?.seq ?? 0));
      }
      this.headsReady = true;
    })().catch((error: unknown) => {
      this.headsLoaded = undefined;
      throw error;
    });
    return this.headsLoaded;
  }

  /** Seq of a session's last stored item (0 when none, or before `loadHeads`). */
  itemHead(sessionId: string): number {
    return this.itemHeads.get(sessionId) ?? 0;
  }

  /** Every session's head (see `itemHead`). */
  heads(): SessionHeads {
    return Object.fromEntries([...this.sessions.keys()].map((sessionId) => [sessionId, this.itemHead(sessionId)]));
  }

  /** Appends items to a session's log. */
  appendItems(sessionId: string, items: Item[]): Promise<StoredItem[]> {
    return this.runtime.store.appendItems(this.id, sessionId, items);
  }

  /** Announces an item that began. */
  itemStarted(sessionId: string, turnId: string, itemId: string, kind: Item['kind'], partial: Record<string, unknown>): void {
    const started = { method: 'item/started' as const, params: { conversationId: this.id, sessionId, turnId, itemId, kind, seq: this.itemHead(sessionId), partial } };
    this.inProgress.set(itemId, new ItemInProgress(started));
    this.publish(started);
  }

  /** Streams progress of an item in progress (announced by `itemStarted`, which gives its kind). */
  itemDelta(sessionId: string, turnId: string, itemId: string, delta: ItemDelta): void {
    const progress = this.inProgress.get(itemId);
    progress?.add(delta);
    const kind = progress?.started.params.kind ?? (delta.output !== undefined ? 'tool_call' : delta.reasoning !== undefined ? 'reasoning' : 'assistant_message');
    this.publish({ method: 'item/delta', params: { conversationId: this.id, sessionId, turnId, itemId, kind, seq: this.itemHead(sessionId), delta } });
  }

  /** Announces a stored item. */
  itemCompleted(sessionId: string, stored: StoredItem): void {
    this.inProgress.delete(stored.item.id);
    this.itemHeads.set(sessionId, Math.max(this.itemHead(sessionId), stored.seq));
    this.publish({ method: 'item/completed', params: { conversationId: this.id, sessionId, seq: stored.seq, item: stored.item } });
  }

  /** Sends an event to every subscriber. */
  publish(event: AnyNotification): void {
    this.bus.publish(event);
    for (const observer of this.runtime.extensions.eventObservers) {
      try {
        observer(this, event);
      } catch (error) {
        this.runtime.logger?.warn({ conversationId: this.id, method: event.method, error: error instanceof Error ? error.message : String(error) }, 'an event observer threw');
      }
    }
  }

  /** Characters of text the histories of its sessions keep in memory (see `HistorySize`). */
  get historyChars(): number {
    let total = 0;
    for (const session of this.sessions.values()) total += session.historyChars;
    return total;
  }

  /** Number of attached subscribers. */
  get subscriberCount(): number {
    return this.bus.size;
  }

  /**
   * True when the conversation can be closed and opened again from storage later without
   * anyone noticing: no client attached, no write pending, and every session can close (no
   * work, no background command, no approval remembered for a session).
   */
  get isEvictable(): boolean {
    return this.bus.size === 0 && this.metadataWrites.isIdle && [...this.sessions.values()].every((session) => session.canClose);
  }

  /**
   * Attaches a subscriber: first the stored items it missed (after `afterSeq` per session),
   * then the deltas so far of items in progress, then live events — no gap, no duplicate
   * (SPEC §5). Returns the function that detaches it. See `attach`.
   */
  async subscribe(listener: EventListener, afterSeq: Record<string, number> | 'head' = {}, options: SubscribeOptions = {}): Promise<() => void> {
    // Attached in the caller's tick when the heads are known already, as they are once the runtime opened the conversation.
    if (!this.headsReady) await this.loadHeads();
    return this.attach(listener, afterSeq, options).replay();
  }

  /**
   * Registers a subscriber and takes the state it starts from in one synchronous step; see
   * `attachSubscriber` for the replay that follows and the ways the listener is removed.
   * Requires `loadHeads()` to have resolved (the runtime does it when it opens a conversation).
   */
  attach(listener: EventListener, afterSeq: Record<string, number> | 'head' = {}, options: SubscribeOptions = {}): Attachment {
    return attachSubscriber(this.subscriptionSource(), listener, afterSeq, options);
  }

  /** What a subscription reads from the conversation (see `SubscriptionSource`). */
  private subscriptionSource(): SubscriptionSource {
    const metadataSeq = () => this.metadataSeq;
    return {
      id: this.id,
      subscribe: (listener) => this.bus.subscribe(listener),
      snapshot: () => this.snapshot(),
      heads: () => this.heads(),
      get metadataSeq() {
        return metadataSeq();
      },
      inProgress: () => this.inProgress.values(),
      approvals: () => this.approvals.list(),
      userInputs: () => this.userInputs.list(),
      listItems: (sessionId, cursor, limit) => this.runtime.store.listItems(this.id, sessionId, { cursor, limit }),
    };
  }

  /** Interrupts every running turn, waits until each has recorded its end, and kills the sessions' background commands and external agent processes. */
  async shutdown(): Promise<void> {
    for (const session of this.sessions.values()) session.interrupt('shutdown');
    await Promise.all([...this.sessions.values()].map((session) => session.idle()));
    await Promise.all([...this.sessions.values()].map((session) => session.commands.closeAll()));
    await this.metadataWrites.drain();
    await Promise.all([this.mcpClients.close(), this.externalAgents.stopAll()]);
  }
}

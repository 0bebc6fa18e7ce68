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
import type { AnyNotification, Conversation, Item, ItemDelta, Session, SessionHeads, StoredItem, Turn } from '../protocol/index.js';
import { ApprovalBroker } from './approvals/broker.js';
import { UserInputBroker } from './user-input/broker.js';
import { EventBus, type EventListener } from './event-bus.js';
import type { Runtime } from './runtime.js';
import { SerialQueue } from './serial-queue.js';
import { LiveSession } from './session.js';
import { heldEvents, holdEvent, ItemInProgress, type HeldEntry } from './replay-buffer.js';

const DEFAULT_SYSTEM_PROMPT = readFileSync(fileURLToPath(new URL('./prompts/system.txt', import.meta.url)), 'utf8').trim();

/** How a subscriber ends its subscription and paces its replay. */
export interface SubscribeOptions {
  /** Aborting it detaches the listener: during the replay (which then stops) or any time after. */
  signal?: AbortSignal;
  /**
   * Called before each replayed stored item; when it returns a promise the replay waits for it,
   * so a client that reads slowly slows its own replay instead of piling it up in memory.
   */
  ready?: () => Promise<void> | undefined;
  /**
   * Most bytes (about: characters of held deltas and of other held events) of live events held
   * back while the replay waits for the subscriber; past it the held events are dropped, the
   * listener is detached, the replay stops and `lagging` is called, so a client that stops
   * reading mid-replay costs a bounded amount. Default: no limit.
   */
  holdLimitBytes?: number;
  /** Told (once) that the subscription ended because `holdLimitBytes` was passed. */
  lagging?: () => void;
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
  /** Seq of the last entry written to `metadata.jsonl`. */
  private metadataSeq: number;
  /** Per session, the seq of its last stored item (filled by `loadHeads`, then kept by `itemCompleted`). */
  private readonly itemHeads = new Map<string, number>();
  private headsLoaded: Promise<void> | undefined;
  /** True once `loadHeads` has finished. */
  private headsReady = false;
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
    this.metadataSeq = stored.metadataSeq;
    this.mcpServers = runtime.mcp?.servers;
    this.mcpClients = this.createMcpClients();
  }

  private createMcpClients(): McpClientManager {
    const workspace = this.workspaces[0];
    // The conversation's own servers (conversation/create mcpServers) join those of mcp.yaml.
    const own = this.state.mcpServers as McpSettings['servers'] | undefined;
    const settings = own ? { ...this.runtime.mcp, servers: { ...this.runtime.mcp?.servers, ...own } } : this.runtime.mcp;
    return new McpClientManager(settings, { workDirectory: workspace.root, workExecutor: workspace.executor.name, findExecutor: (name) => this.runtime.findExecutor(name) });
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
  async update(changes: { title?: string; workLocation?: Conversation['workLocation']; archived?: boolean }, workspaces?: [Workspace, ...Workspace[]]): Promise<Conversation> {
    this.state = { ...this.state, ...(changes.title ? { title: changes.title } : {}), ...(changes.workLocation ? { workLocation: changes.workLocation } : {}), ...(changes.archived !== undefined ? { archived: changes.archived } : {}) };
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
  snapshot(): { conversation: Conversation; sessions: Session[]; turns: Turn[] } {
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
      seq = await this.recordState({ type: 'session', session: state });
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
  }

  /** Number of attached subscribers. */
  get subscriberCount(): number {
    return this.bus.size;
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
   * Registers a subscriber and takes the state it starts from in one synchronous step, so
   * nothing published can fall between the two: the snapshot (conversation, sessions, turns),
   * each session's item head, the metadata seq, and the items in progress. Events published
   * from then on are held until `replay` has sent what came before them.
   *
   * `replay()` sends the stored items after `afterSeq` up to the heads (`"head"`: none), then
   * each item in progress (`item/started` and one `item/delta` with its text so far), then the
   * held events, then `conversation/synced` with the last seq sent per session; after it, events
   * go straight to the listener. The listener is removed on every way out: an error during the
   * replay, or `options.signal` aborting (during the replay or at any time after); `replay`
   * resolves to the function that removes it.
   * Requires `loadHeads()` to have resolved (the runtime does it when it opens a conversation).
   */
  attach(
    listener: EventListener,
    afterSeq: Record<string, number> | 'head' = {},
    options: SubscribeOptions = {},
  ): { snapshot: ReturnType<LiveConversation['snapshot']>; heads: SessionHeads; metadataSeq: number; replay: () => Promise<() => void> } {
    const { signal } = options;
    const held: HeldEntry[] = [];
    let heldBytes = 0;
    let live = false;
    let overflowed = false;
    const unsubscribe = this.bus.subscribe((event) => {
      if (live) return listener(event);
      if (overflowed) return;
      heldBytes += holdEvent(held, event);
      if (options.holdLimitBytes === undefined || heldBytes <= options.holdLimitBytes) return;
      // A subscriber that stops reading mid-replay costs a bounded amount: it is let go as lagging.
      overflowed = true;
      held.length = 0;
      unsubscribe();
      options.lagging?.();
    });
    // Everything below is read in the same tick as subscribing: later changes arrive in `held`.
    const snapshot = this.snapshot();
    const heads = this.heads();
    const metadataSeq = this.metadataSeq;
    const progressSnapshot = [...this.inProgress.values()].map((progress) => ({ started: progress.started, deltas: progress.mark() }));
    const approvals = this.approvals.list();
    const userInputs = this.userInputs.list();
    if (signal?.aborted) unsubscribe();
    else signal?.addEventListener('abort', unsubscribe, { once: true });
    const ended = () => signal?.aborted === true || overflowed;
    /** Waits until the subscriber can take more; false when the subscription ended meanwhile. */
    const paced = async (): Promise<boolean> => {
      const waiting = options.ready?.();
      if (waiting) await waiting;
      return !ended();
    };
    const replay = async (): Promise<() => void> => {
      if (ended()) return unsubscribe;
      try {
        const lastSent = new Map<string, number>();
        for (const [sessionId, head] of Object.entries(heads)) {
          const after = afterSeq === 'head' ? head : (afterSeq[sessionId] ?? 0);
          lastSent.set(sessionId, Math.max(after, 0));
          let cursor = after;
          while (cursor < head) {
            const page = await this.runtime.store.listItems(this.id, sessionId, { cursor, limit: 500 });
            if (ended()) return unsubscribe;
            for (const stored of page) {
              if (stored.seq > head) break;
              if (!(await paced())) return unsubscribe;
              listener({ method: 'item/completed', params: { conversationId: this.id, sessionId, seq: stored.seq, item: stored.item } });
              lastSent.set(sessionId, stored.seq);
            }
            if (page.length < 500) break;
            cursor = page.at(-1)?.seq ?? head;
          }
        }
        // Items in progress at the snapshot are not stored yet (a stored item's id is never in progress).
        for (const { started, deltas } of progressSnapshot) {
          if (!(await paced())) return unsubscribe;
          listener(started);
          const { sessionId, turnId, itemId, kind } = started.params;
          for (const delta of deltas()) {
            if (!(await paced())) return unsubscribe;
            listener({ method: 'item/delta', params: { conversationId: this.id, sessionId, turnId, itemId, kind, seq: heads[sessionId] ?? 0, delta } });
          }
        }
        // A client that arrives while a call waits for approval or a question waits for its answer
        // is asked too (an answer, if any came since, is held below).
        for (const approval of approvals) listener({ method: 'approval/requested', params: { conversationId: this.id, approval } });
        for (const request of userInputs) listener({ method: 'input/requested', params: { conversationId: this.id, request } });
        // Events keep arriving in `held` while this waits for the subscriber; it goes live only
        // once `held` is empty, in the same tick, so nothing falls between the two.
        while (held.length > 0) {
          const entry = held.shift() as HeldEntry;
          heldBytes -= entry.size;
          if ('event' in entry && entry.event.method === 'item/completed') {
            const { sessionId, seq } = entry.event.params;
            if (seq <= (lastSent.get(sessionId) ?? 0)) continue;
            lastSent.set(sessionId, seq);
          }
          for (const event of heldEvents(entry)) {
            if (!(await paced())) return unsubscribe;
            listener(event);
          }
        }
        if (ended()) return unsubscribe;
        listener({ method: 'conversation/synced', params: { conversationId: this.id, heads: Object.fromEntries(lastSent) } });
        live = true;
        return unsubscribe;
      } catch (error) {
        unsubscribe();
        throw error;
      }
    };
    return { snapshot, heads, metadataSeq, replay };
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

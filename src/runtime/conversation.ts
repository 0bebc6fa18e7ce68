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
import { EventBus, type EventListener } from './event-bus.js';
import type { Runtime } from './runtime.js';
import { SerialQueue } from './serial-queue.js';
import { LiveSession } from './session.js';
import { StreamedText } from './streamed-text.js';

const DEFAULT_SYSTEM_PROMPT = readFileSync(fileURLToPath(new URL('./prompts/system.txt', import.meta.url)), 'utf8').trim();

/** An item in progress, remembered so late subscribers get its deltas so far (merged, not one entry per delta). */
interface ItemInProgress {
  started: Extract<AnyNotification, { method: 'item/started' }>;
  text: StreamedText;
  reasoning: StreamedText;
  output: StreamedText;
}

/** Delta kinds, in the order a replay sends an item's text so far. */
const DELTA_FIELDS = ['text', 'reasoning', 'output'] as const;

/**
 * Most characters in one replayed delta: the text so far of a long item goes out in pieces,
 * each paced by the subscriber, so no replay message outgrows a connection's send buffer.
 */
export const REPLAY_DELTA_CHARS = 64 * 1024;


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

type DeltaEvent = Extract<AnyNotification, { method: 'item/delta' }>;

/**
 * An event held back for a subscriber whose replay is still running. Consecutive deltas of one
 * item are merged into one entry whose text is a {@link StreamedText}: a long stream during a
 * slow replay costs its text, not one event (or one rope node) per delta.
 */
type HeldEntry = { event: AnyNotification; size: number } | { delta: DeltaEvent; texts: Record<(typeof DELTA_FIELDS)[number], StreamedText>; size: number };

/** Counted for each held delta besides its text (ids and envelope). */
const HELD_DELTA_OVERHEAD = 200;

/** Holds `event` back; returns what it adds to the held size (characters, about). */
function holdEvent(held: HeldEntry[], event: AnyNotification): number {
  if (event.method !== 'item/delta') {
    const size = JSON.stringify(event).length;
    held.push({ event, size });
    return size;
  }
  const last = held.at(-1);
  let entry: Extract<HeldEntry, { delta: DeltaEvent }>;
  let added = 0;
  if (last && 'delta' in last && last.delta.params.itemId === event.params.itemId) entry = last;
  else {
    entry = { delta: event, texts: { text: new StreamedText(), reasoning: new StreamedText(), output: new StreamedText() }, size: HELD_DELTA_OVERHEAD };
    held.push(entry);
    added = HELD_DELTA_OVERHEAD;
  }
  for (const key of DELTA_FIELDS) {
    const piece = event.params.delta[key];
    if (!piece) continue;
    entry.texts[key].append(piece);
    added += piece.length;
  }
  entry.size += added;
  return added;
}

/** A held entry as the events to send: a merged delta as deltas of at most {@link REPLAY_DELTA_CHARS} characters each. */
function* heldEvents(entry: HeldEntry): Generator<AnyNotification> {
  if ('event' in entry) {
    yield entry.event;
    return;
  }
  for (const key of DELTA_FIELDS) {
    for (const piece of entry.texts[key].slices(REPLAY_DELTA_CHARS)) yield { method: 'item/delta', params: { ...entry.delta.params, delta: { [key]: piece } } };
  }
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
      this.publish({ method: 'approval/resolved', params: { conversationId: this.id, approvalId: approval.approvalId, decision: answer.decision, decidedBy: answer.decidedBy } });
      this.refreshPendingApprovals(approval.sessionId);
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
    const state: Session = { id: newId('sess'), conversationId: this.id, parentSessionId: options.parentSessionId, agent: options.agent, model: options.model, status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], createdAt: now, updatedAt: now };
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
    this.inProgress.set(itemId, { started, text: new StreamedText(), reasoning: new StreamedText(), output: new StreamedText() });
    this.publish(started);
  }

  /** Streams progress of an item in progress. */
  itemDelta(sessionId: string, itemId: string, delta: { text?: string; reasoning?: string; output?: string }): void {
    const progress = this.inProgress.get(itemId);
    if (progress) {
      progress.text.append(delta.text);
      progress.reasoning.append(delta.reasoning);
      progress.output.append(delta.output);
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
    const held: HeldEntry[] = [];
    let heldBytes = 0;
    let live = false;
    let overflowed = false;
    const unsubscribe = this.bus.subscribe((event) => {
      if (live) return listener(event);
      if (overflowed) return;
      heldBytes += holdEvent(held, event);
      if (options.holdLimitBytes === undefined || heldBytes <= options.holdLimitBytes) return;
      overflowed = true;
      held.length = 0;
      unsubscribe();
      options.lagging?.();
    });
    if (signal?.aborted) {
      unsubscribe();
      return unsubscribe;
    }
    signal?.addEventListener('abort', unsubscribe, { once: true });
    const ended = () => signal?.aborted === true || overflowed;
    /** Waits until the subscriber can take more; false when the subscription ended meanwhile. */
    const paced = async (): Promise<boolean> => {
      const waiting = options.ready?.();
      if (waiting) await waiting;
      return !ended();
    };
    try {
      // Taken in the same tick as subscribing: deltas after this point arrive in `held`. The
      // texts only grow, so their lengths now mark what the snapshot holds.
      const progressSnapshot = [...this.inProgress.values()].map((progress) => ({ progress, lengths: { text: progress.text.length, reasoning: progress.reasoning.length, output: progress.output.length } }));
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
            if (!(await paced())) return unsubscribe;
            listener({ method: 'item/completed', params: { conversationId: this.id, sessionId: session.id, seq: stored.seq, item: stored.item } });
            lastSent.set(session.id, stored.seq);
            sentIds.add(stored.item.id);
          }
          if (page.length < 500) break;
          cursor = page.at(-1)?.seq ?? cursor;
        }
      }
      for (const { progress, lengths } of progressSnapshot) {
        const { started } = progress;
        if (sentIds.has(started.params.itemId)) continue;
        if (!(await paced())) return unsubscribe;
        listener(started);
        for (const key of DELTA_FIELDS) {
          for (const piece of progress[key].slices(REPLAY_DELTA_CHARS, lengths[key])) {
            if (!(await paced())) return unsubscribe;
            listener({ method: 'item/delta', params: { conversationId: this.id, sessionId: started.params.sessionId, itemId: started.params.itemId, delta: { [key]: piece } } });
          }
        }
      }
      const approvalsAnnounced = new Set<string>();
      // Events keep arriving in `held` while this waits for the subscriber; it goes live only
      // once `held` is empty, in the same tick, so nothing falls between the two.
      while (held.length > 0) {
        const entry = held.shift() as HeldEntry;
        heldBytes -= entry.size;
        if ('event' in entry) {
          const { event } = entry;
          if (event.method === 'item/completed' && event.params.seq <= (lastSent.get(event.params.sessionId) ?? 0)) continue;
          if (event.method === 'approval/requested') approvalsAnnounced.add(event.params.approval.approvalId);
        }
        for (const event of heldEvents(entry)) {
          if (!(await paced())) return unsubscribe;
          listener(event);
        }
      }
      // A client that arrives while a call waits for approval is asked too.
      for (const approval of this.approvals.list()) {
        if (!approvalsAnnounced.has(approval.approvalId)) listener({ method: 'approval/requested', params: { conversationId: this.id, approval } });
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

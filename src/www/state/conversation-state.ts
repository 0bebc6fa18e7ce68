/**
 * What the page holds of one open conversation, kept current from the protocol's
 * notifications (docs/protocol.md, "What a subscriber receives"): the stored items of each
 * session by seq, the items in progress with their streamed text and output, sessions, turns,
 * approvals waiting, questions waiting and the last usage of each session.
 *
 * After a reconnect it resubscribes with `afterSeq` (the last seq it holds per session) and
 * `historyEpoch`, drops what it assembled of items in progress (the replay sends their text so
 * far again) and ignores stored items it already has, so nothing is lost or doubled
 * ("Reconnecting with afterSeq").
 */
import type { ApprovalRequest, Conversation, LogDamage, Session, Turn } from '../../protocol/entities.js';
import type { Item, StoredItem } from '../../protocol/items.js';
import type { AnyNotification, NotificationParams } from '../../protocol/methods.js';
import type { UserInputRequest } from '../../protocol/user-input.js';

/** An item in progress: what `item/started` said and what `item/delta` streamed since. */
export interface LiveItem {
  itemId: string;
  sessionId: string;
  turnId: string;
  kind: string;
  /** Partial fields of `item/started` (a tool call's name, arguments, executor, details). */
  partial: Record<string, unknown>;
  /** Assistant text so far. */
  text: string;
  /** Reasoning summary parts so far (`partIndex`). */
  reasoningParts: string[];
  /** Raw reasoning text so far. */
  reasoningRaw: string;
  /** Tool output so far. */
  output: string;
}

/** Stored items read when a conversation is first opened, per session: the newest ones. */
export const TAIL_ITEMS = 200;
/** Stored items read per step when the reader scrolls back. */
export const EARLIER_ITEMS = 500;

/** The part of the protocol client the state needs (a real `ProtocolClient`, or a test double). */
export interface ConversationRequester {
  request(method: 'items/list', params: { conversationId: string; sessionId?: string; direction?: 'forward' | 'backward'; cursor?: number; limit?: number }): Promise<{ items: StoredItem[]; nextCursor?: number }>;
  request(method: 'conversation/subscribe', params: { conversationId: string; afterSeq?: Record<string, number> | 'head'; historyEpoch?: Record<string, number> }): Promise<{
    conversation: Conversation;
    sessions: Session[];
    turns: Turn[];
    heads: Record<string, number>;
    metadataSeq: number;
    damage?: LogDamage[];
  }>;
}

/** Usage of a session's last model call (`session/usage`). */
export type SessionUsage = NotificationParams<'session/usage'>;

/** The state of one open conversation. Listeners hear about every change (coalesce on your side). */
export class ConversationState {
  conversation: Conversation | undefined;
  readonly sessions = new Map<string, Session>();
  readonly turns = new Map<string, Turn>();
  /** Stored items per session, by ascending seq. */
  readonly items = new Map<string, StoredItem[]>();
  /** Items in progress by item id, in the order they started. */
  readonly live = new Map<string, LiveItem>();
  readonly approvals = new Map<string, ApprovalRequest>();
  readonly userInputs = new Map<string, UserInputRequest>();
  readonly usage = new Map<string, SessionUsage>();
  /** The last `turn/retrying` of a running turn, cleared when the turn ends. */
  retrying: NotificationParams<'turn/retrying'> | undefined;
  /** The `turn/warning`s of the latest turn (an MCP server that did not start), kept until the next turn starts. */
  warnings: NotificationParams<'turn/warning'>[] = [];
  /** True once the current subscription's replay is over (`conversation/synced`) and the first items are read. */
  synced = false;
  /** Sessions whose log holds items before the first one held (read with `loadEarlier`). */
  readonly earlier = new Set<string>();
  deleted = false;
  /** Set when subscribing failed (shown to the user). */
  error: string | undefined;
  /** Damaged parts of the conversation's logs the server skipped (shown to the user); empty when none. */
  damage: LogDamage[] = [];
  /** Grows on every change (a view compares it to know whether to render). */
  version = 0;
  private readonly epochs = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
  /** Item ids of each session's stored items, to tell a replayed item from a new one. */
  private readonly storedIds = new Map<string, Set<string>>();
  private replayOver = false;
  private tailsRead = true;
  private loadingEarlier = false;

  constructor(
    private readonly client: ConversationRequester,
    readonly conversationId: string,
  ) {}

  /** Adds a change listener; returns its remover. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The last stored seq held of a session (0 when none). */
  lastSeq(sessionId: string): number {
    const list = this.items.get(sessionId);
    return list && list.length > 0 ? (list[list.length - 1] as StoredItem).seq : 0;
  }

  /** The root session, once known. */
  rootSession(): Session | undefined {
    return this.conversation ? this.sessions.get(this.conversation.rootSessionId) : undefined;
  }

  /** A session's stored items (empty when none). */
  itemsOf(sessionId: string): StoredItem[] {
    return this.items.get(sessionId) ?? [];
  }

  /** The items in progress of a session, in the order they started. */
  liveOf(sessionId: string): LiveItem[] {
    return [...this.live.values()].filter((live) => live.sessionId === sessionId);
  }

  /** True while any session of the conversation runs a turn. */
  running(): boolean {
    return [...this.sessions.values()].some((session) => session.activeTurnId !== null || session.status === 'running');
  }

  /**
   * Subscribes (again): with `afterSeq` and `historyEpoch` of what is held, so the replay
   * sends only what is missing. Call on open and after every reconnect.
   */
  async subscribe(): Promise<void> {
    const afterSeq: Record<string, number> = {};
    for (const [sessionId, list] of this.items) if (list.length > 0) afterSeq[sessionId] = (list[list.length - 1] as StoredItem).seq;
    const historyEpoch = Object.fromEntries(this.epochs);
    // The first time, nothing stored is replayed ("head"): the newest items of each session are
    // read with items/list up to the subscription's heads, so a long conversation opens as
    // fast as a short one; earlier items are read when the reader scrolls back.
    const first = this.items.size === 0;
    // The replay sends the text so far of items in progress: what was assembled goes.
    this.live.clear();
    this.synced = false;
    this.replayOver = false;
    this.tailsRead = !first;
    try {
      const result = await this.client.request('conversation/subscribe', {
        conversationId: this.conversationId,
        ...(first ? { afterSeq: 'head' as const } : Object.keys(afterSeq).length > 0 ? { afterSeq } : {}),
        ...(Object.keys(historyEpoch).length > 0 ? { historyEpoch } : {}),
      });
      this.error = undefined;
      this.damage = result.damage ?? [];
      this.conversation = result.conversation;
      this.turns.clear();
      for (const turn of result.turns) this.turns.set(turn.id, turn);
      this.sessions.clear();
      this.approvals.clear();
      this.userInputs.clear();
      for (const session of result.sessions) this.applySession(session);
      this.changed();
      if (first) await this.readTails(result.heads);
    } catch (error) {
      this.error = error instanceof Error ? error.message : String(error);
    }
    this.tailsRead = true;
    this.synced = this.replayOver;
    this.changed();
  }

  /** Reads the items of a session before the first one held (when the log has some). */
  async loadEarlier(sessionId: string): Promise<void> {
    const first = this.items.get(sessionId)?.[0];
    if (!first || !this.earlier.has(sessionId) || this.loadingEarlier) return;
    this.loadingEarlier = true;
    try {
      const page = await this.client.request('items/list', { conversationId: this.conversationId, sessionId, direction: 'backward', cursor: first.seq, limit: EARLIER_ITEMS });
      for (const stored of page.items) this.store(sessionId, stored);
      if (page.nextCursor === undefined || page.items.length === 0) this.earlier.delete(sessionId);
    } finally {
      this.loadingEarlier = false;
      this.changed();
    }
  }

  private async readTails(heads: Record<string, number>): Promise<void> {
    await Promise.all(
      Object.entries(heads).map(async ([sessionId, head]) => {
        if (head === 0) return;
        const page = await this.client.request('items/list', { conversationId: this.conversationId, sessionId, direction: 'backward', cursor: head + 1, limit: TAIL_ITEMS });
        for (const stored of page.items) this.store(sessionId, stored);
        const oldest = this.items.get(sessionId)?.[0];
        if (oldest && oldest.seq > 1 && page.nextCursor !== undefined) this.earlier.add(sessionId);
      }),
    );
  }

  /** Applies one notification (those of other conversations are ignored). */
  handle(event: AnyNotification): void {
    const params = event.params as { conversationId?: string; conversation?: Conversation };
    const id = params.conversationId ?? params.conversation?.id;
    if (id !== this.conversationId) return;
    switch (event.method) {
      case 'conversation/updated':
        this.conversation = event.params.conversation;
        break;
      case 'conversation/deleted':
        this.deleted = true;
        break;
      case 'conversation/synced':
        this.replayOver = true;
        this.synced = this.tailsRead;
        break;
      case 'session/updated':
        this.applySession(event.params.session);
        break;
      case 'session/rewound':
        this.truncate(event.params.sessionId, event.params.afterSeq);
        this.epochs.set(event.params.sessionId, event.params.historyEpoch);
        for (const turnId of event.params.rewoundTurnIds) {
          const turn = this.turns.get(turnId);
          if (turn) this.turns.set(turnId, { ...turn, rewound: true });
        }
        break;
      case 'session/usage':
        this.usage.set(event.params.sessionId, event.params);
        break;
      case 'turn/started':
      case 'turn/completed':
        this.turns.set(event.params.turn.id, event.params.turn);
        if (event.method === 'turn/completed') this.retrying = undefined;
        else this.warnings = [];
        break;
      case 'turn/warning':
        this.warnings = [...this.warnings, event.params];
        break;
      case 'turn/retrying':
        this.retrying = event.params;
        break;
      case 'item/started':
        this.live.set(event.params.itemId, {
          itemId: event.params.itemId,
          sessionId: event.params.sessionId,
          turnId: event.params.turnId,
          kind: event.params.kind,
          partial: event.params.partial,
          text: '',
          reasoningParts: [],
          reasoningRaw: '',
          output: '',
        });
        break;
      case 'item/delta': {
        const live = this.live.get(event.params.itemId);
        if (!live) return;
        const delta = event.params.delta;
        if (delta.text) live.text += delta.text;
        if (delta.output) live.output += delta.output;
        if (delta.reasoningRaw) live.reasoningRaw += delta.reasoningRaw;
        if (delta.reasoning) {
          const index = delta.partIndex ?? 0;
          live.reasoningParts[index] = (live.reasoningParts[index] ?? '') + delta.reasoning;
        }
        break;
      }
      case 'item/completed':
        this.live.delete(event.params.item.id);
        this.store(event.params.sessionId, { seq: event.params.seq, item: event.params.item });
        break;
      case 'approval/requested':
        this.approvals.set(event.params.approval.approvalId, event.params.approval);
        break;
      case 'approval/resolved':
        this.approvals.delete(event.params.approvalId);
        break;
      case 'input/requested':
        this.userInputs.set(event.params.request.requestId, event.params.request);
        break;
      case 'input/resolved':
        this.userInputs.delete(event.params.requestId);
        break;
      default:
        return;
    }
    this.changed();
  }

  /** Finds a stored item by id in any session. */
  findItem(itemId: string): { sessionId: string; stored: StoredItem } | undefined {
    for (const [sessionId, list] of this.items) {
      if (!this.storedIds.get(sessionId)?.has(itemId)) continue;
      const stored = list.find((entry) => entry.item.id === itemId);
      if (stored) return { sessionId, stored };
    }
    return undefined;
  }

  private applySession(session: Session): void {
    const knownEpoch = this.epochs.get(session.id) ?? 0;
    const epoch = session.historyEpoch ?? 0;
    if (epoch > knownEpoch) {
      // A rewind happened while we were away: what we hold after its point is stale. One epoch
      // behind, the replay restarts at the rewind point; further behind, from the start.
      this.truncate(session.id, epoch === knownEpoch + 1 && session.rewoundAfterSeq !== undefined ? session.rewoundAfterSeq : 0);
      this.epochs.set(session.id, epoch);
    }
    this.sessions.set(session.id, session);
    for (const [approvalId, approval] of this.approvals) if (approval.sessionId === session.id) this.approvals.delete(approvalId);
    for (const approval of session.pendingApprovals) this.approvals.set(approval.approvalId, approval);
    for (const [requestId, request] of this.userInputs) if (request.sessionId === session.id) this.userInputs.delete(requestId);
    for (const request of session.pendingUserInputs) this.userInputs.set(request.requestId, request);
  }

  private store(sessionId: string, stored: StoredItem): void {
    let list = this.items.get(sessionId);
    let ids = this.storedIds.get(sessionId);
    if (!list || !ids) {
      list = [];
      ids = new Set();
      this.items.set(sessionId, list);
      this.storedIds.set(sessionId, ids);
    }
    const last = list[list.length - 1];
    if (!last || stored.seq > last.seq) {
      list.push(stored);
      ids.add(stored.item.id);
      return;
    }
    // A seq held already (a replay after a rewind sends it again): the newer item wins.
    const index = list.findIndex((entry) => entry.seq >= stored.seq);
    const at = list[index] as StoredItem;
    if (at.seq === stored.seq) {
      ids.delete(at.item.id);
      list[index] = stored;
    } else list.splice(index, 0, stored);
    ids.add(stored.item.id);
  }

  private truncate(sessionId: string, afterSeq: number): void {
    const list = this.items.get(sessionId);
    if (!list) return;
    const kept = list.filter((entry) => entry.seq <= afterSeq);
    this.items.set(sessionId, kept);
    this.storedIds.set(sessionId, new Set(kept.map((entry) => entry.item.id)));
  }

  private changed(): void {
    this.version += 1;
    for (const listener of this.listeners) listener();
  }
}

/** An item's short description for lists and confirmations. */
export function describeItem(item: Item): string {
  switch (item.kind) {
    case 'user_message':
      return item.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(' ');
    case 'assistant_message':
      return item.text;
    case 'tool_call':
      return `${item.toolName}`;
    default:
      return item.kind;
  }
}

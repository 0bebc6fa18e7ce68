/**
 * What the terminal UI knows of the open conversation, kept up to date from protocol
 * notifications (docs/protocol.md "What a subscriber receives"): the transcript entries of
 * the root session (stored items in seq order, then items in progress with their streamed
 * text and output), items of subagent sessions as they happen, the sessions' state (running
 * turn, queued inputs, pending approvals and questions, plan), usage and the context meter.
 *
 * Pure state: no terminal, no connection. Every change bumps `revision` and the changed
 * entry's `version`, which the renderer uses to cache each entry's lines.
 */
import type { AnyNotification, ApprovalRequest, Conversation, Item, Session, StoredItem, Turn, UserInputRequest } from '../protocol/index.js';
import { turnEndNotice } from '../protocol/stop-reasons.js';

/** An item still in progress: what `item/started` and the deltas so far say. */
export interface LiveItem {
  kind: string;
  sessionId: string;
  turnId: string;
  partial: Record<string, unknown>;
  text: string;
  reasoningParts: string[];
  output: string;
}

/** A line the UI adds itself (a command's answer, an error, a turn's end). */
export interface Notice {
  text: string;
  tone: 'info' | 'warning' | 'error';
}

/** One thing the transcript shows. Exactly one of `item`, `live` and `notice` is set. */
export interface TranscriptEntry {
  /** Item id, or `notice:<n>`. */
  key: string;
  sessionId?: string;
  /** Seq in its session's log, once stored. */
  seq?: number;
  /**
   * For entries outside the root session's log (notices, subagent work): the seq of the root
   * session's newest item held when the entry came, so a rewind of the root session drops
   * what came after the items it drops.
   */
  rootSeq?: number;
  item?: Item;
  live?: LiveItem;
  notice?: Notice;
  /** Bumped on every change of this entry (for render caches). */
  version: number;
}

/** The session's usage after its last model call (`session/usage`). */
export interface UsageMeter {
  model: string;
  contextTokens: number;
  contextWindow?: number;
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
}

/** The state of one open conversation. */
export class TranscriptModel {
  conversation: Conversation | undefined;
  readonly sessions = new Map<string, Session>();
  /** Turns by id, as last heard. */
  readonly turns = new Map<string, Turn>();
  entries: TranscriptEntry[] = [];
  /** True while older items of the root session may exist before the first entry. */
  hasOlder = false;
  /** Seq of the oldest stored root item held (the cursor for loading older ones). */
  oldestSeq: number | undefined;
  usage: UsageMeter | undefined;
  /** Bumped on every change. */
  revision = 0;
  private readonly index = new Map<string, TranscriptEntry>();
  /** Seq of the newest root item held (0 before any). */
  private newestRootSeq = 0;
  private notices = 0;
  /** Root turns whose end line the transcript holds (shown live, or placed when their items were loaded). */
  private readonly endLinesShown = new Set<string>();
  private listener: (() => void) | undefined;

  /** Called after every change (the UI schedules a redraw). */
  onChange(listener: () => void): void {
    this.listener = listener;
  }

  /** The root session's id, once known. */
  get rootSessionId(): string | undefined {
    return this.conversation?.rootSessionId;
  }

  /** The root session. */
  get rootSession(): Session | undefined {
    const id = this.rootSessionId;
    return id ? this.sessions.get(id) : undefined;
  }

  /** True while any session of the conversation runs a turn. */
  get running(): boolean {
    for (const session of this.sessions.values()) if (session.status === 'running') return true;
    return false;
  }

  /** Subagent sessions (those with a parent), oldest first. */
  get subagents(): Session[] {
    return [...this.sessions.values()].filter((session) => session.parentSessionId !== null);
  }

  /** Approvals waiting in any session, oldest first. */
  get pendingApprovals(): ApprovalRequest[] {
    return [...this.sessions.values()].flatMap((session) => session.pendingApprovals).sort((a, b) => a.requestedAt - b.requestedAt);
  }

  /** Questions from the agent waiting in any session, oldest first. */
  get pendingQuestions(): UserInputRequest[] {
    return [...this.sessions.values()].flatMap((session) => session.pendingUserInputs).sort((a, b) => a.requestedAt - b.requestedAt);
  }

  /** Resets to a freshly subscribed conversation (the `conversation/subscribe` result). */
  reset(snapshot: { conversation: Conversation; sessions: Session[]; turns: Turn[] }): void {
    this.replaceAll(snapshot.conversation, snapshot.sessions, snapshot.turns);
  }

  /** Empties the model (no conversation open: a new one not created yet). */
  clear(): void {
    this.replaceAll(undefined, [], []);
  }

  /** Holds only `conversation` with these sessions and turns: no items, usage or older pages yet. */
  private replaceAll(conversation: Conversation | undefined, sessions: Session[], turns: Turn[]): void {
    this.conversation = conversation;
    this.sessions.clear();
    for (const session of sessions) this.sessions.set(session.id, session);
    this.turns.clear();
    for (const turn of turns) this.turns.set(turn.id, turn);
    this.endLinesShown.clear();
    this.entries = [];
    this.index.clear();
    this.hasOlder = false;
    this.oldestSeq = undefined;
    this.newestRootSeq = 0;
    this.usage = undefined;
    this.changed();
  }

  /**
   * Adds a page of stored root items older than those held (from `items/list` backward).
   * @param moreBefore whether the log holds items before this page
   */
  prependStored(page: StoredItem[], moreBefore: boolean): void {
    const sorted = [...page].sort((a, b) => a.seq - b.seq).filter((stored) => !this.index.has(stored.item.id));
    const added = sorted.map((stored) => this.makeEntry({ key: stored.item.id, sessionId: stored.item.sessionId, seq: stored.seq, item: stored.item }));
    this.entries = this.withPastEndLines([...added, ...this.entries], added);
    if (sorted[0]) this.oldestSeq = sorted[0].seq;
    for (const stored of sorted) this.noteSeq(stored.item.sessionId, stored.seq);
    this.hasOlder = moreBefore;
    this.changed();
  }

  /** Adds a line of the UI's own. */
  addNotice(text: string, tone: Notice['tone'] = 'info'): void {
    this.entries.push(this.makeEntry({ key: `notice:${++this.notices}`, notice: { text, tone } }));
    this.changed();
  }

  /** Applies one notification of the conversation (others are ignored). */
  apply(event: AnyNotification): void {
    const params = event.params as { conversationId?: string; conversation?: Conversation };
    const id = this.conversation?.id;
    if (!id || (params.conversationId ?? params.conversation?.id) !== id) return;
    switch (event.method) {
      case 'conversation/updated':
        this.conversation = event.params.conversation;
        break;
      case 'session/updated':
        this.sessions.set(event.params.session.id, event.params.session);
        break;
      case 'turn/started':
        this.turns.set(event.params.turn.id, event.params.turn);
        break;
      case 'turn/completed':
        this.turns.set(event.params.turn.id, event.params.turn);
        this.turnEnded(event.params.turn);
        break;
      case 'turn/warning':
        this.addNotice(event.params.message, 'warning');
        return;
      case 'turn/retrying':
        this.addNotice(`retrying in ${Math.round(event.params.delayMs / 100) / 10} s: ${event.params.httpStatus ? `HTTP ${event.params.httpStatus} ` : ''}${event.params.message} (retry ${event.params.attempt} of ${event.params.maxRetries})`, 'warning');
        return;
      case 'session/usage':
        if (event.params.sessionId === this.rootSessionId) {
          this.usage = {
            model: event.params.model,
            contextTokens: event.params.contextTokens,
            inputTokens: event.params.turnTotal.inputTokens,
            outputTokens: event.params.turnTotal.outputTokens,
            ...(event.params.contextWindow !== undefined ? { contextWindow: event.params.contextWindow } : {}),
            ...(event.params.costUsd !== undefined ? { costUsd: event.params.costUsd } : {}),
          };
        }
        break;
      case 'item/started': {
        if (this.index.has(event.params.itemId)) return;
        const live: LiveItem = { kind: event.params.kind, sessionId: event.params.sessionId, turnId: event.params.turnId, partial: event.params.partial, text: '', reasoningParts: [], output: '' };
        this.entries.push(this.makeEntry({ key: event.params.itemId, sessionId: event.params.sessionId, live }));
        break;
      }
      case 'item/delta': {
        const entry = this.index.get(event.params.itemId);
        if (!entry?.live) return;
        const { delta } = event.params;
        if (delta.text) entry.live.text += delta.text;
        if (delta.output) entry.live.output += delta.output;
        if (delta.reasoning) {
          const part = delta.partIndex ?? Math.max(0, entry.live.reasoningParts.length - 1);
          entry.live.reasoningParts[part] = (entry.live.reasoningParts[part] ?? '') + delta.reasoning;
        }
        entry.version++;
        break;
      }
      case 'item/completed':
        this.itemCompleted(event.params.item, event.params.seq);
        break;
      case 'session/rewound':
        this.dropRewound(event.params.sessionId, event.params.afterSeq, event.params.rewoundTurnIds);
        break;
      case 'plan/updated':
      case 'approval/requested':
      case 'approval/resolved':
      case 'input/requested':
      case 'input/resolved':
        // The session's state (pendingApprovals, pendingUserInputs, plan) comes with session/updated; these only trigger a redraw.
        break;
      default:
        return;
    }
    this.changed();
  }

  private itemCompleted(item: Item, seq: number): void {
    this.noteSeq(item.sessionId, seq);
    const existing = this.index.get(item.id);
    if (existing) {
      existing.item = item;
      existing.seq = seq;
      delete existing.live;
      existing.version++;
      return;
    }
    const entry = this.makeEntry({ key: item.id, sessionId: item.sessionId, seq, item });
    // Normally the newest: it goes last, but never after a stored item of its session with a larger seq.
    let position = this.entries.length;
    while (position > 0) {
      const before = this.entries[position - 1] as TranscriptEntry;
      if (before.sessionId === item.sessionId && before.seq !== undefined && before.seq > seq) position--;
      else break;
    }
    this.entries.splice(position, 0, entry);
  }

  /**
   * Places the end line of each ended root turn after its last item among `added` (stored items
   * just loaded), unless a later entry holds an item of the same turn or its line is held
   * already: a conversation opened again shows its past turns' ends (and stop reasons) as they
   * were shown live.
   */
  private withPastEndLines(entries: TranscriptEntry[], added: readonly TranscriptEntry[]): TranscriptEntry[] {
    const lastOfTurn = new Map<string, TranscriptEntry>();
    for (const entry of entries) if (entry.item && entry.sessionId === this.rootSessionId) lastOfTurn.set(entry.item.turnId, entry);
    const placed = new Map<TranscriptEntry, TranscriptEntry>();
    for (const entry of added) {
      const turn = entry.item ? this.turns.get(entry.item.turnId) : undefined;
      if (!turn || lastOfTurn.get(turn.id) !== entry || this.endLinesShown.has(turn.id)) continue;
      if (turn.status === 'running' || turn.sessionId !== this.rootSessionId) continue;
      const line = endLine(turn);
      const notice = this.makeEntry({ key: `notice:${++this.notices}`, notice: line });
      // Rewinding to before its turn's last item drops it with that item.
      notice.rootSeq = entry.seq;
      this.endLinesShown.add(turn.id);
      placed.set(entry, notice);
    }
    if (placed.size === 0) return entries;
    return entries.flatMap((entry) => {
      const notice = placed.get(entry);
      return notice ? [entry, notice] : [entry];
    });
  }

  private turnEnded(turn: Turn): void {
    // Items of the turn that never completed (an interrupted stream without a stored item) are left as they were shown.
    for (const entry of this.entries) {
      if (entry.live && entry.live.turnId === turn.id) {
        entry.live.partial = { ...entry.live.partial, ended: turn.status };
        entry.version++;
      }
    }
    if (turn.sessionId !== this.rootSessionId || this.endLinesShown.has(turn.id)) return;
    this.endLinesShown.add(turn.id);
    const line = endLine(turn);
    this.addNotice(line.text, line.tone);
  }

  /**
   * Applies a rewind of `sessionId` to `afterSeq` (`session/rewound`, or the answer to
   * `conversation/rewind`; applying it twice changes nothing more): its items after `afterSeq`
   * and those in progress are dropped, and the rewound turns forgotten. A rewind of the root
   * session also drops what came after the dropped items: subagent work, the turns' end lines
   * and other notices, so the transcript shows exactly the kept turns.
   */
  rewind(sessionId: string, afterSeq: number, rewoundTurnIds: readonly string[]): void {
    this.dropRewound(sessionId, afterSeq, rewoundTurnIds);
    this.changed();
  }

  private dropRewound(sessionId: string, afterSeq: number, rewoundTurnIds: readonly string[]): void {
    const root = sessionId === this.rootSessionId;
    this.entries = this.entries.filter((entry) => {
      const own = entry.sessionId === sessionId && ((entry.seq !== undefined && entry.seq > afterSeq) || entry.live !== undefined);
      const after = root && entry.rootSeq !== undefined && entry.rootSeq > afterSeq;
      if (own || after) this.index.delete(entry.key);
      return !(own || after);
    });
    for (const turnId of rewoundTurnIds) {
      this.turns.delete(turnId);
      this.endLinesShown.delete(turnId);
    }
    if (root) this.newestRootSeq = Math.min(this.newestRootSeq, afterSeq);
  }

  private noteSeq(sessionId: string, seq: number): void {
    if (sessionId === this.rootSessionId) this.newestRootSeq = Math.max(this.newestRootSeq, seq);
  }

  private makeEntry(fields: Omit<TranscriptEntry, 'version' | 'rootSeq'>): TranscriptEntry {
    const outside = fields.sessionId === undefined || fields.sessionId !== this.rootSessionId;
    const entry: TranscriptEntry = { ...fields, ...(outside ? { rootSeq: this.newestRootSeq } : {}), version: 0 };
    this.index.set(entry.key, entry);
    return entry;
  }

  private changed(): void {
    this.revision++;
    this.listener?.();
  }
}

/**
 * The line that ends a turn in the transcript: status, model calls, tokens, seconds, the error,
 * and on a line of its own the stop reason of an answer that may be incomplete
 * (`turnEndNotice`), in the warning colour: such a turn is no plain success.
 */
function endLine(turn: Turn): Notice {
  const seconds = turn.completedAt ? ((turn.completedAt - turn.startedAt) / 1000).toFixed(1) : undefined;
  const calls = `${turn.steps} model ${turn.steps === 1 ? 'call' : 'calls'}`;
  const notice = turnEndNotice(turn);
  const tone = turn.status === 'failed' ? 'error' : turn.status === 'interrupted' || notice ? 'warning' : 'info';
  return { text: `turn ${turn.status} · ${calls} · ${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out${seconds ? ` · ${seconds} s` : ''}${turn.error ? ` · ${turn.error}` : ''}${notice ? `\n${notice}` : ''}`, tone };
}

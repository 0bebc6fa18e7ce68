/**
 * The conversation index records of `metadata.db` (SPEC §4: only an index, rebuilt by
 * `reindex`): writing a conversation's listing summary and its preview, removing it, and
 * telling the live list feed about each change. Kept apart from the store, which decides when
 * a record is written; this module only knows how.
 *
 * A new preview is not written at once: an agent step appends a message every few tens of ms,
 * and writing the record for each (a read and a write transaction of the index, and an
 * `updated` to every list watcher) was a fifth of the index work of a turn. Previews are put in
 * the record at most once per {@link PREVIEW_WRITE_DELAY_MS}, by the next whole-record write
 * (a turn's end) when that comes first, and before any read of the index, so a listing never
 * shows a preview older than the items it was told about. A server that dies in between loses
 * only index state: the turn it left running is recovered at the next start, which writes the
 * record again with the preview read from the log.
 */
import type { Conversation, ConversationSummary, Item } from '../protocol/index.js';
import type { RecordStorage } from '../storage/record-storage.js';
import type { ConversationState } from './metadata-log.js';
import { filterWhere, fromIndexValue, matchesFilters, previewOfItems, summarizeState, toIndexValue, unwrapCursor, wrapCursor, type ConversationFilters, type ConversationSort, type IndexedSummary } from './conversation-listing.js';

/**
 * RecordStorage namespace of the conversation index. Record time is the conversation's
 * `updatedAt` (`sort: "updated"`); keys are conversation ids, ULIDs that sort by creation
 * (`sort: "created"` lists by key).
 */
export const CONVERSATION_INDEX = 'conversations';
/** Filter fields of the index (lastTurnStatus: start-up recovery finds the conversations a dead server left running). */
const INDEX_FILTER_FIELDS = ['cwd', 'lastTurnStatus', 'executor', 'listState'];

/** A change of the conversation index, as the live list feed tells it (SPEC §5 `conversations/subscribe`). */
export type ConversationIndexChange =
  | { kind: 'created' | 'updated'; conversation: Conversation; summary: ConversationSummary }
  | { kind: 'deleted'; conversationId: string; summary: ConversationSummary | undefined };

/** The listing summary of a conversation state, given its root session's preview (see `conversation-listing.ts`). */
export function summarize(state: ConversationState, preview = ''): ConversationSummary {
  return summarizeState(state, preview);
}

const noop = (): void => undefined;

/** The longest a new preview waits before it is written to the index record (ms). */
export const PREVIEW_WRITE_DELAY_MS = 250;

/** Options of {@link ConversationIndexRecords}. */
export interface ConversationIndexRecordsOptions {
  /** How long a new preview may wait before it is written (ms); default {@link PREVIEW_WRITE_DELAY_MS}. */
  previewWriteDelayMs?: number;
  /**
   * Told when a preview write that no caller awaits fails (the index keeps the previous
   * preview until the record's next write); default: nothing is told.
   */
  onPreviewWriteError?: (conversationId: string, error: unknown) => void;
}

/** Reads the preview of a conversation's root session from its log. */
export type PreviewReader = (conversationId: string, rootSessionId: string) => Promise<string>;

/** Writes and removes conversation index records, and tells the listeners of each change. */
export class ConversationIndexRecords {
  /** Root-session previews of the conversations written since start, so an index write needs no log read. */
  private readonly previews = new Map<string, string>();
  /**
   * Preview reads from the log in progress, shared by the writes that wait for them. A change
   * of the preview (items appended, the log cut, the record removed) drops the read: what it
   * finds may be the log before the change, and must not be kept.
   */
  private readonly previewReads = new Map<string, Promise<string>>();
  /**
   * The tail of each conversation's record writes. They run one after another: a new preview
   * is put in the record by reading it and writing it back, and a write of the record in
   * between (a rename, a turn's end) would be undone.
   */
  private readonly recordWrites = new Map<string, Promise<void>>();
  /** The conversations indexed since start, so an item append that changes the preview needs no metadata read. */
  private readonly indexed = new Map<string, Conversation>();
  private readonly changeListeners = new Set<(change: ConversationIndexChange) => void>();
  /** Conversations whose kept preview is newer than their record's, each with the timer that writes it. */
  private readonly pendingPreviews = new Map<string, NodeJS.Timeout>();
  private readonly previewWriteDelayMs: number;
  private readonly onPreviewWriteError: (conversationId: string, error: unknown) => void;

  /**
   * @param index the listing index (its {@link CONVERSATION_INDEX} namespace, defined here)
   * @param readPreview reads a root session's preview from the log, once per conversation and process
   * @param options when previews are written, and who is told of a failed one
   */
  constructor(
    private readonly index: Pick<RecordStorage, 'defineNamespace' | 'get' | 'mget' | 'set' | 'delete' | 'list'>,
    private readonly readPreview: PreviewReader,
    options: ConversationIndexRecordsOptions = {},
  ) {
    index.defineNamespace({ name: CONVERSATION_INDEX, filterFields: INDEX_FILTER_FIELDS });
    this.previewWriteDelayMs = options.previewWriteDelayMs ?? PREVIEW_WRITE_DELAY_MS;
    this.onPreviewWriteError = options.onPreviewWriteError ?? noop;
  }

  /**
   * Registers a listener of index changes: every write of a conversation's index record
   * (`created` for a new conversation, `updated` after) and its removal (`deleted`). Listeners
   * are called synchronously after the write; one that throws does not fail the write.
   * Returns the function that removes it.
   */
  onChange(listener: (change: ConversationIndexChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** The summary in a conversation's index record, if it has one. */
  async summaryOf(conversationId: string): Promise<ConversationSummary | undefined> {
    await this.flushPreviews();
    const record = await this.index.get<IndexedSummary>(CONVERSATION_INDEX, conversationId);
    return record ? fromIndexValue(record.value) : undefined;
  }

  /** Notes a conversation being created: it has no messages yet, so its first index write needs no log read for the preview. */
  created(conversationId: string): void {
    this.previewReads.delete(conversationId);
    this.previews.set(conversationId, '');
  }

  /**
   * One page of index records, newest first by `sort`, continuing `cursor` (as
   * {@link wrapCursor} made it for the same sort).
   * @throws Error for a cursor that is not one of this sort's
   */
  async page(sort: ConversationSort, limit: number, cursor: string | undefined, filters: ConversationFilters): Promise<{ conversations: ConversationSummary[]; nextCursor?: string }> {
    const storageCursor = cursor !== undefined ? unwrapCursor(sort, cursor) : undefined;
    await this.flushPreviews();
    const page = await this.index.list<IndexedSummary>(CONVERSATION_INDEX, {
      orderBy: sort === 'created' ? 'key' : 'updatedAt',
      order: 'desc',
      limit,
      where: filterWhere(filters),
      ...(storageCursor ? { cursor: storageCursor } : {}),
    });
    return { conversations: page.records.map((record) => fromIndexValue(record.value)), ...(page.nextCursor ? { nextCursor: wrapCursor(sort, page.nextCursor) } : {}) };
  }

  /** The summaries of the given conversations that have an index record and match `filters`, in the given order. */
  async summariesOf(conversationIds: string[], filters: ConversationFilters): Promise<ConversationSummary[]> {
    await this.flushPreviews();
    const records = await this.index.mget<IndexedSummary>(CONVERSATION_INDEX, conversationIds);
    return records.flatMap((record) => (record ? [fromIndexValue(record.value)] : [])).filter((summary) => matchesFilters(summary, filters));
  }

  /** Ids of the conversations whose index record shows a running last turn, in key order. */
  async runningIds(): Promise<string[]> {
    await this.flushPreviews();
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.index.list<ConversationSummary>(CONVERSATION_INDEX, { where: { lastTurnStatus: 'running' }, limit: 500, ...(cursor ? { cursor } : {}) });
      for (const record of page.records) ids.push(record.key);
      cursor = page.nextCursor;
    } while (cursor);
    return ids;
  }

  /** Writes the index record of a state (reading the preview from the log once per process) and tells the listeners. */
  async write(state: ConversationState, kind: 'created' | 'updated'): Promise<ConversationSummary> {
    const id = state.conversation.id;
    this.indexed.set(id, state.conversation);
    // Read before queueing, so a slow log read does not hold up the record's other writes.
    const read = await this.currentPreview(id, state.conversation.rootSessionId);
    return this.serially(id, async () => {
      // A preview put in the record since the read is newer.
      const preview = this.previews.get(id) ?? read;
      // The record written now holds the kept preview: a preview write waiting would repeat it.
      this.cancelPreviewWrite(id);
      const summary = summarize(state, preview);
      const value = toIndexValue(summary);
      await this.index.set(CONVERSATION_INDEX, id, value, state.conversation.updatedAt);
      this.emit({ kind, conversation: state.conversation, summary });
      return summary;
    });
  }

  /**
   * Keeps the new preview after items were appended to a session, when they change it and the
   * session is the root of a conversation indexed by this process (one not indexed yet gets
   * its preview read from the log at its next index write), and has it written to the index
   * record within {@link PREVIEW_WRITE_DELAY_MS} (see the module's comment).
   */
  noteItems(conversationId: string, sessionId: string, items: Item[]): void {
    const preview = previewOfItems(items);
    const conversation = this.indexed.get(conversationId);
    if (preview === undefined || conversation?.rootSessionId !== sessionId || preview === this.previews.get(conversationId)) return;
    this.previewReads.delete(conversationId);
    this.previews.set(conversationId, preview);
    if (this.pendingPreviews.has(conversationId)) return;
    const timer = setTimeout(() => {
      this.writePendingPreview(conversationId).catch((error: unknown) => this.onPreviewWriteError(conversationId, error));
    }, this.previewWriteDelayMs);
    // A pending preview must not keep a process alive: closing the store writes it.
    timer.unref();
    this.pendingPreviews.set(conversationId, timer);
  }

  /**
   * Writes every preview still waiting (see {@link PREVIEW_WRITE_DELAY_MS}); resolves once
   * they are in the index. A failed write is told to `onPreviewWriteError`, not thrown: the
   * record keeps its previous preview until its next write.
   */
  async flushPreviews(): Promise<void> {
    if (this.pendingPreviews.size === 0) return;
    await Promise.all([...this.pendingPreviews.keys()].map((conversationId) => this.writePendingPreview(conversationId)));
  }

  /**
   * Forgets a conversation's preview, so the next index write reads it from the log again (its
   * log was cut). Call it after the cut: a read still under way may have read the old log.
   */
  forgetPreview(conversationId: string): void {
    this.cancelPreviewWrite(conversationId);
    this.previewReads.delete(conversationId);
    this.previews.delete(conversationId);
  }

  /** Removes a conversation's index record and tells the listeners when there was one. */
  remove(conversationId: string): Promise<void> {
    return this.serially(conversationId, async () => {
      const previous = await this.index.get<IndexedSummary>(CONVERSATION_INDEX, conversationId);
      const existed = await this.index.delete(CONVERSATION_INDEX, conversationId);
      this.forget(conversationId);
      if (existed) this.emit({ kind: 'deleted', conversationId, summary: previous ? fromIndexValue(previous.value) : undefined });
    });
  }

  /** Tells the listeners a conversation whose record was removed elsewhere (a discarded staged one) is gone. */
  discarded(conversationId: string, summary: ConversationSummary | undefined): void {
    this.forget(conversationId);
    this.emit({ kind: 'deleted', conversationId, summary });
  }

  /** Puts the kept preview of a conversation in its index record (same record time), if one is waiting, and tells the listeners. */
  private async writePendingPreview(conversationId: string): Promise<void> {
    if (!this.pendingPreviews.has(conversationId)) return;
    this.cancelPreviewWrite(conversationId);
    try {
      await this.serially(conversationId, async () => {
        const conversation = this.indexed.get(conversationId);
        const preview = this.previews.get(conversationId);
        if (!conversation || preview === undefined) return;
        const record = await this.index.get<IndexedSummary>(CONVERSATION_INDEX, conversationId);
        if (!record) return;
        const summary = { ...fromIndexValue(record.value), preview };
        await this.index.set(CONVERSATION_INDEX, conversationId, toIndexValue(summary), record.updatedAt);
        this.emit({ kind: 'updated', conversation, summary });
      });
    } catch (error) {
      this.onPreviewWriteError(conversationId, error);
    }
  }

  private cancelPreviewWrite(conversationId: string): void {
    const timer = this.pendingPreviews.get(conversationId);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.pendingPreviews.delete(conversationId);
  }

  /** Runs a write of a conversation's record after the ones queued before it (see {@link recordWrites}). */
  private serially<T>(conversationId: string, task: () => Promise<T>): Promise<T> {
    const result = (this.recordWrites.get(conversationId) ?? Promise.resolve()).then(task);
    const tail = result.then(noop, noop);
    this.recordWrites.set(conversationId, tail);
    const settled = (): void => {
      if (this.recordWrites.get(conversationId) === tail) this.recordWrites.delete(conversationId);
    };
    tail.then(settled, settled);
    return result;
  }

  /**
   * The kept preview of a conversation, else the one read from its root session's log (once
   * per process, shared by concurrent writes). A read that the preview changed during is not
   * kept: the newer preview is used, or, after a cut, the log is read again.
   * @throws Error when the log cannot be read
   */
  private async currentPreview(conversationId: string, rootSessionId: string): Promise<string> {
    for (;;) {
      const kept = this.previews.get(conversationId);
      if (kept !== undefined) return kept;
      let reading = this.previewReads.get(conversationId);
      if (reading === undefined) {
        const started = this.readPreview(conversationId, rootSessionId).then(
          (preview) => {
            if (this.previewReads.get(conversationId) === started) {
              this.previewReads.delete(conversationId);
              this.previews.set(conversationId, preview);
            }
            return preview;
          },
          (error: unknown) => {
            if (this.previewReads.get(conversationId) === started) this.previewReads.delete(conversationId);
            throw error;
          },
        );
        this.previewReads.set(conversationId, started);
        reading = started;
      }
      await reading;
    }
  }

  private forget(conversationId: string): void {
    this.cancelPreviewWrite(conversationId);
    this.previewReads.delete(conversationId);
    this.previews.delete(conversationId);
    this.indexed.delete(conversationId);
  }

  private emit(change: ConversationIndexChange): void {
    for (const listener of this.changeListeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own; the index write has happened.
      }
    }
  }
}

/**
 * Conversations, sessions, turns and items on top of the two storage interfaces (SPEC §4).
 *
 * Layout (contract): every conversation is the log path `conversations/<conversation-id>`,
 * holding the stream `metadata` (conversation, session and turn states; last entry wins;
 * deletions are entries) and one stream per session (`<session-id>`) holding its items.
 * `metadata.db` (a RecordStorage, plus the conversation search) is only an index for listing
 * and search, rebuilt by `reindex`.
 */
import {
  ItemSchema,
  type Conversation,
  type ConversationSummary,
  type Item,
  type LogDamage,
  type Session,
  type StoredItem,
} from '../protocol/index.js';
import { UnreadableStreamError, type LogEntry, type LogStorage } from '../storage/log-storage.js';
import type { RecordStorage } from '../storage/record-storage.js';
import { searchableText, type ConversationSearchIndex, type SearchMessage } from './conversation-search-index.js';
import { readSearchableMessages, searchConversationPage } from './conversation-search-listing.js';
import { ConversationStaging } from './conversation-staging.js';
import { DamagedConversationError, describeStream, type LogDamageRegistry, type StreamLocator } from './log-damage.js';
import { endsDeleted, foldMetadata, METADATA_STREAM, type ConversationState, type InvalidEntryReport, type MetadataEntry } from './metadata-log.js';
import { MetadataStateCache } from './metadata-state-cache.js';
import { readPreview, type ConversationFilters, type ConversationSort } from './conversation-listing.js';
import { ConversationExistsError, readConversationStreams, writeImportedConversation, type ConversationImportTarget } from './conversation-import.js';
import { ConversationIndexRecords, type ConversationIndexChange } from './conversation-index-records.js';
import { cutSessionLog, deleteDurableConversation, type LogRewriteTarget } from './conversation-log-rewrites.js';

export { ConversationExistsError } from './conversation-import.js';
export { DamagedConversationError } from './log-damage.js';
export { CONVERSATION_INDEX, summarize, type ConversationIndexChange } from './conversation-index-records.js';
export { TRASH_PATH } from './conversation-log-rewrites.js';
export { METADATA_STREAM, MetadataEntrySchema, foldMetadata, type ConversationState, type InvalidEntryReport, type MetadataEntry } from './metadata-log.js';

/** Log path of all conversations. */
export const CONVERSATIONS_PATH = 'conversations';

/** Default page size of {@link ConversationStore.listConversations}. */
export const DEFAULT_CONVERSATION_PAGE = 50;

/** Log path of one conversation. */
export function conversationPath(conversationId: string): string {
  return `${CONVERSATIONS_PATH}/${conversationId}`;
}

/** Options of {@link ConversationStore}. */
export interface ConversationStoreOptions {
  /** Full-text search kept next to the listing index; without it `query` listings are refused. */
  search?: ConversationSearchIndex;
  /** Told about log entries that do not match the schema (they are skipped). */
  onInvalidEntry?: (report: InvalidEntryReport) => void;
  /**
   * Where the damage found in conversation logs is kept for clients ({@link logDamage}); the
   * storage's problem listener must feed it too. Without it, no damage is told.
   */
  logDamage?: LogDamageRegistry;
  /** Names where a stream is stored, in messages about damaged logs; default: its path and id. */
  locateStream?: StreamLocator;
  /**
   * Called by {@link ConversationStore.ensureDurable} once a staged conversation's logs, index
   * record and search entry are in real storage, in the same synchronous step in which the
   * conversation stops being staged (what the server keeps beside the logs, such as uploads,
   * moves over without a gap). When it throws, the conversation stays staged and the next
   * `ensureDurable` calls it again.
   */
  onCommitted?: (conversationId: string) => void;
  /**
   * Told when the delayed write of a conversation's new preview to its index record fails
   * (see `PREVIEW_WRITE_DELAY_MS`): the listing keeps the previous preview until the record's
   * next write. Default: nothing is told.
   */
  onPreviewWriteError?: (conversationId: string, error: unknown) => void;
}

const ignore = (): void => undefined;

/**
 * The conversation data access object: the only code that knows how conversations are laid
 * out in storage. Writes go to the log first (synced), then to the index and the search.
 *
 * Staging (SPEC §4: an empty conversation leaves nothing on disk): when built on a
 * StagedLogStorage and a StagedRecordStorage, {@link createConversation} keeps the new
 * conversation's log path, index record and search entry in memory ({@link ConversationStaging});
 * {@link ensureDurable} (called when the first input is accepted) copies them to real storage
 * and switches over. Reads work the same on either side.
 */
export class ConversationStore {
  private readonly search: ConversationSearchIndex | undefined;
  private readonly onInvalidEntry: (report: InvalidEntryReport) => void;
  private readonly damage: LogDamageRegistry | undefined;
  private readonly locateStream: StreamLocator;
  private readonly onCommitted: (conversationId: string) => void;
  private readonly staging: ConversationStaging | undefined;
  private readonly metadataStates = new MetadataStateCache();
  /** The listing records of the conversations, and the live list feed's listeners. */
  private readonly records: ConversationIndexRecords;
  /** What the commit of a staged conversation, the import and the log rewrites get of the store. */
  private readonly writeTarget: ConversationImportTarget & LogRewriteTarget;

  /**
   * @param logs source of truth
   * @param index rebuildable listing index
   * @param options search index and invalid-entry listener
   * @throws Error when only one of `logs` and `index` is a staged storage (staging needs both)
   */
  constructor(
    private readonly logs: LogStorage,
    private readonly index: RecordStorage,
    options: ConversationStoreOptions = {},
  ) {
    this.search = options.search;
    const onInvalidEntry = options.onInvalidEntry ?? ignore;
    this.damage = options.logDamage;
    this.locateStream = options.locateStream ?? describeStream;
    this.onInvalidEntry = (report) => {
      this.damage?.invalidEntry(report, this.locateStream(conversationPath(report.conversationId), report.stream));
      onInvalidEntry(report);
    };
    this.onCommitted = options.onCommitted ?? ignore;
    this.records = new ConversationIndexRecords(index, (conversationId, rootSessionId) => readPreview(logs, conversationPath(conversationId), rootSessionId), {
      ...(options.onPreviewWriteError ? { onPreviewWriteError: options.onPreviewWriteError } : {}),
    });
    this.staging = ConversationStaging.of(logs, index, this.search !== undefined);
    this.writeTarget = {
      logs,
      records: this.records,
      search: this.search,
      metadataStates: this.metadataStates,
      loadConversation: (id) => this.loadConversation(id),
      appendMetadata: (id, entries) => this.appendMetadata(id, entries),
      searchableMessages: (id, sessionIds) => this.searchableMessages(id, sessionIds),
    };
  }

  /**
   * Creates a conversation with its root session. With staged storages it is staged: nothing
   * reaches disk until {@link ensureDurable}. Returns the last metadata seq.
   * @throws Error when the session does not belong to the conversation, or the conversation
   *   already exists (nothing is written then)
   */
  async createConversation(conversation: Conversation, rootSession: Session): Promise<number> {
    const id = conversation.id;
    if (rootSession.conversationId !== id || conversation.rootSessionId !== rootSession.id) {
      throw new Error(`createConversation: session ${rootSession.id} is not the root session of conversation ${id}`);
    }
    const path = conversationPath(id);
    if ((await this.logs.lastSeq(path, METADATA_STREAM)) > 0 || this.isStaged(id)) {
      throw new Error(`createConversation: conversation ${id} already exists`);
    }
    const entries: MetadataEntry[] = [
      { type: 'conversation', conversation },
      { type: 'session', session: rootSession },
    ];
    this.records.created(id);
    if (!this.staging) return this.appendMetadataAs(id, entries, 'created');
    return this.staging.create(id, path, () => this.appendMetadataAs(id, entries, 'created'));
  }

  /** True while a conversation lives only in memory (created, no input yet). */
  isStaged(conversationId: string): boolean {
    return this.staging?.has(conversationId) ?? false;
  }

  /**
   * Makes a staged conversation durable: copies its logs, its index record and its search
   * entry to real storage and switches over, after the writes already queued for it.
   * Idempotent and safe to call concurrently (callers share one commit); a no-op for a
   * conversation that is not staged. On failure the conversation stays staged and a later
   * call retries the steps not yet done.
   * @throws Error when a copy fails
   */
  ensureDurable(conversationId: string): Promise<void> {
    if (!this.staging) return Promise.resolve();
    return this.staging.commit(conversationId, conversationPath(conversationId), this.writeTarget, () => this.onCommitted(conversationId));
  }

  /** Appends state entries to a conversation's metadata log, then updates the index and the search. Returns the last seq. */
  appendMetadata(conversationId: string, entries: MetadataEntry[]): Promise<number> {
    return this.appendMetadataAs(conversationId, entries, 'updated');
  }

  private appendMetadataAs(conversationId: string, entries: MetadataEntry[], kind: 'created' | 'updated'): Promise<number> {
    return this.write(conversationId, async (staged) => {
      const stored = await this.logs.append(conversationPath(conversationId), METADATA_STREAM, entries);
      this.damage?.appended(conversationId, METADATA_STREAM);
      const advanced = this.metadataStates.advance(conversationId, stored as LogEntry<MetadataEntry>[]);
      const state = advanced ? advanced.state : await this.loadConversation(conversationId);
      this.metadataStates.remember(conversationId, state);
      const search = this.searchFor(staged);
      if (state) {
        await this.records.write(state, kind);
        await search?.setConversations([{ conversationId, title: state.conversation.title, updatedAt: state.conversation.updatedAt }]);
      } else {
        await this.records.remove(conversationId);
        await search?.removeConversation(conversationId);
      }
      return stored.at(-1)?.seq ?? 0;
    });
  }

  /**
   * Registers a listener of index changes: every write of a conversation's index record
   * (`created` for a new conversation, `updated` after) and its removal (`deleted`). Listeners
   * are called synchronously after the write; one that throws does not fail the write.
   * Returns the function that removes it.
   */
  onIndexChange(listener: (change: ConversationIndexChange) => void): () => void {
    return this.records.onChange(listener);
  }

  /** Appends completed items to a session's log, then adds their messages to the search; returns them with their seq. */
  appendItems(conversationId: string, sessionId: string, items: Item[]): Promise<StoredItem[]> {
    return this.write(conversationId, async (staged) => {
      const stored = await this.logs.append(conversationPath(conversationId), sessionId, items);
      this.damage?.appended(conversationId, sessionId);
      this.records.noteItems(conversationId, sessionId, items);
      const search = this.searchFor(staged);
      if (search) {
        const messages = items.flatMap((item) => {
          const text = searchableText(item);
          return text === undefined ? [] : [{ conversationId, text }];
        });
        if (messages.length > 0) await search.addMessages(messages);
      }
      return stored.map((entry) => ({ seq: entry.seq, item: entry.value }));
    });
  }

  /**
   * Folds a conversation's metadata log into its current state (see {@link foldMetadata}).
   * @returns undefined when the conversation does not exist or was deleted
   */
  async loadConversation(conversationId: string): Promise<ConversationState | undefined> {
    const entries = await this.logs.read(conversationPath(conversationId), METADATA_STREAM);
    return foldMetadata(conversationId, entries, this.onInvalidEntry);
  }

  /**
   * Folds a conversation's metadata log to open the conversation, telling a damaged
   * conversation from one that does not exist: its metadata log cannot be read, is there but
   * holds no valid conversation entry (emptied, or every line damaged), or is missing while
   * session logs remain. The conversation's index record is removed then (and when no log of
   * it is left at all), so the listing holds only what can be opened (`reindex`
   * lists it again once the log is repaired); the log itself is left as it is.
   * @returns undefined when the conversation does not exist or was deleted
   * @throws DamagedConversationError naming the metadata log and what is wrong with it
   */
  async openConversationState(conversationId: string): Promise<ConversationState | undefined> {
    const path = conversationPath(conversationId);
    let entries: LogEntry[];
    try {
      entries = await this.logs.read(path, METADATA_STREAM);
    } catch (error) {
      if (!(error instanceof UnreadableStreamError)) throw error;
      await this.dropIndexRecord(conversationId);
      throw new DamagedConversationError(conversationId, error.message, { cause: error });
    }
    const state = foldMetadata(conversationId, entries, this.onInvalidEntry);
    if (state || endsDeleted(entries)) return state;
    const streams = await this.logs.listStreams(path);
    // The listing holds only what can be opened: a record left by logs removed behind the
    // server's back goes (`reindex` lists the conversation again once its logs are repaired).
    await this.dropIndexRecord(conversationId);
    if (streams.includes(METADATA_STREAM)) throw new DamagedConversationError(conversationId, `its metadata log ${this.locateStream(path, METADATA_STREAM)} holds no valid conversation entry`);
    if (streams.length === 0) return undefined;
    const left = streams.map((stream) => this.locateStream(path, stream));
    throw new DamagedConversationError(conversationId, `its metadata log ${this.locateStream(path, METADATA_STREAM)} is missing; its other logs remain: ${left.slice(0, 5).join(', ')}${left.length > 5 ? ` and ${left.length - 5} more` : ''}`);
  }

  /**
   * The damaged lines and entries found in a conversation's logs since the store was built
   * (at most 100), in the order they were found; [] without a damage registry.
   */
  logDamage(conversationId: string): LogDamage[] {
    return this.damage?.of(conversationId) ?? [];
  }

  /**
   * Turns an error reading one of a conversation's logs into the error of a conversation that
   * cannot be opened (naming it) when the log cannot be read; other errors are returned as they are.
   */
  damagedBy(conversationId: string, error: unknown): unknown {
    return error instanceof UnreadableStreamError ? new DamagedConversationError(conversationId, error.message, { cause: error }) : error;
  }

  /**
   * Reads items of one session.
   * @param options `cursor` is an exclusive seq; `backward` returns newest first
   */
  async listItems(
    conversationId: string,
    sessionId: string,
    options: { direction?: 'forward' | 'backward'; cursor?: number; limit?: number } = {},
  ): Promise<StoredItem[]> {
    const direction = options.direction ?? 'forward';
    const entries = await this.logs.read(conversationPath(conversationId), sessionId, {
      direction,
      ...(options.cursor !== undefined ? (direction === 'forward' ? { after: options.cursor } : { before: options.cursor }) : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
    const items: StoredItem[] = [];
    for (const entry of entries) {
      const parsed = ItemSchema.safeParse(entry.value);
      if (parsed.success) items.push({ seq: entry.seq, item: parsed.data });
      else this.onInvalidEntry({ conversationId, stream: sessionId, seq: entry.seq, message: parsed.error.message });
    }
    return items;
  }

  /**
   * The searchable texts (user and assistant messages) of the given sessions, read from the
   * logs in order. Entries of other kinds or unexpected shapes are skipped without a schema
   * check (see {@link searchableText}).
   */
  searchableMessages(conversationId: string, sessionIds: string[]): Promise<SearchMessage[]> {
    return readSearchableMessages(this.logs, conversationPath(conversationId), conversationId, sessionIds);
  }

  /**
   * One page of the conversation list, most recently updated first (ties by id). With
   * `query`, only conversations whose title or a user or assistant message matches it (SQLite
   * FTS5 syntax), in the same order; cursors of both kinds of listing are interchangeable.
   * @throws InvalidSearchQueryError for an empty query or a query syntax error
   * @throws Error for a bad cursor, or a query when the store has no search index
   */
  async listConversations(options: { limit?: number; cursor?: string; query?: string; sort?: ConversationSort } & ConversationFilters = {}): Promise<{ conversations: ConversationSummary[]; nextCursor?: string }> {
    const limit = options.limit ?? DEFAULT_CONVERSATION_PAGE;
    const sort = options.sort ?? 'updated';
    if (options.query === undefined) {
      return this.records.page(sort, limit, options.cursor, options);
    }
    if (sort !== 'updated') throw new Error('a search (query) lists by last update only');
    if (!this.search) throw new Error('conversation search is not available: this store was built without a search index');
    const stagedSearch = this.staging?.searchWhileStaged();
    return searchConversationPage([this.search, ...(stagedSearch ? [stagedSearch] : [])], this.records, options.query, limit, options.cursor, options);
  }

  /**
   * Ids of the conversations whose index record shows a running last turn (the candidates of
   * start-up recovery), in key order.
   */
  async listRunningConversationIds(): Promise<string[]> {
    return this.records.runningIds();
  }

  /**
   * Writes a conversation's index record again from its metadata log (the index may lag the
   * log by the last write of a server that died). Removes the record of a conversation that
   * no longer exists.
   */
  async refreshIndexRecord(conversationId: string): Promise<void> {
    await this.write(conversationId, async () => {
      const state = await this.loadConversation(conversationId);
      if (state) await this.records.write(state, 'updated');
      else await this.records.remove(conversationId);
    });
  }

  /**
   * Deletes a conversation (SPEC §4: deletions are entries): appends a `conversation_deleted`
   * entry to its metadata log (from then on it reads as deleted, and `reindex` skips it),
   * removes its index records and search entry, then moves its streams to `trash/<id>` (copied,
   * then the conversation path deleted; a move cut short by a crash is finished by the next
   * delete of the same id, and leaves nothing listed meanwhile). A staged conversation (no
   * input yet, nothing on disk) is discarded. Returns its last summary, or undefined when it
   * does not exist (or was already deleted, in which case a leftover move is finished).
   * @throws DamagedConversationError when one of its logs cannot be read (found before
   *   anything is written, so nothing is moved)
   * @throws Error when a write fails; the deletion entry, once written, stands
   */
  async deleteConversation(conversationId: string, deletedAt: number): Promise<ConversationSummary | undefined> {
    const path = conversationPath(conversationId);
    const staging = this.staging;
    if (staging?.has(conversationId)) {
      return this.write(conversationId, async () => {
        const summary = await this.records.summaryOf(conversationId);
        this.metadataStates.forget(conversationId);
        await staging.discard(conversationId, path);
        this.records.discarded(conversationId, summary);
        return summary;
      });
    }
    let summary: ConversationSummary | undefined;
    try {
      summary = await deleteDurableConversation(this.writeTarget, conversationId, path, deletedAt);
    } catch (error) {
      throw this.damagedBy(conversationId, error);
    }
    this.damage?.forget(conversationId);
    return summary;
  }

  /**
   * Cuts a session's log after `afterSeq`, atomically ({@link LogStorage.replaceStream}): the
   * entries up to it are kept as stored (seq numbers unchanged), the rest dropped. The
   * conversation's search entries are rebuilt and its preview read again. Returns how many
   * entries were dropped.
   * @throws Error when the log cannot be read or replaced; the old log is then intact
   */
  rewindItems(conversationId: string, sessionId: string, afterSeq: number): Promise<number> {
    return this.write(conversationId, async (staged) => {
      const dropped = await cutSessionLog(this.writeTarget, this.searchFor(staged), conversationId, conversationPath(conversationId), sessionId, afterSeq);
      // The new log holds only entries the cut read, so none of the old one's damage.
      if (dropped > 0) this.damage?.forgetStream(conversationId, sessionId);
      return dropped;
    });
  }

  /**
   * Every stream of a conversation as stored (values unchecked, seqs kept), `metadata` first:
   * what an export archives (docs/storage.md, "Export and import").
   * @param sessionIds sessions whose logs are read even when the storage does not list them
   *   (a log file that is no regular file): one that cannot be read fails the read instead of
   *   being left out of the archive
   * @returns undefined when the conversation has no metadata log
   * @throws DamagedConversationError when one of the logs cannot be read
   */
  async readStreams(conversationId: string, sessionIds: string[] = []): Promise<{ stream: string; entries: LogEntry[] }[] | undefined> {
    try {
      return await readConversationStreams(this.logs, conversationPath(conversationId), sessionIds);
    } catch (error) {
      throw this.damagedBy(conversationId, error);
    }
  }

  /** True when the id has logs (also a conversation marked deleted whose files are not moved yet) or is staged. */
  async hasLogs(conversationId: string): Promise<boolean> {
    return this.isStaged(conversationId) || (await this.logs.listStreams(conversationPath(conversationId))).length > 0;
  }

  /**
   * Writes a whole conversation from an archive, all or nothing (see {@link writeImportedConversation}).
   * @throws ConversationExistsError when the id has logs already (nothing is written then)
   * @throws Error when the metadata does not fold to this conversation, or a write fails
   */
  async importConversation(conversationId: string, streams: { stream: string; values: unknown[] }[]): Promise<ConversationState> {
    if (await this.hasLogs(conversationId)) throw new ConversationExistsError(conversationId);
    this.damage?.forget(conversationId);
    return writeImportedConversation(this.writeTarget, conversationId, conversationPath(conversationId), streams);
  }

  /** Ids of every conversation directory in the logs (including deleted-marked ones). */
  async listConversationIds(): Promise<string[]> {
    const paths = await this.logs.listPaths(CONVERSATIONS_PATH);
    return paths.map((entry) => entry.split('/').pop() ?? entry);
  }

  /**
   * Writes the index changes still waiting (new previews), then releases what the store itself
   * opened (the in-memory search of staged conversations); the storages stay open.
   */
  async close(): Promise<void> {
    await this.records.flushPreviews();
    await this.staging?.close();
  }

  /** Removes a conversation's index record, behind the writes queued for it. */
  private dropIndexRecord(conversationId: string): Promise<void> {
    return this.write(conversationId, () => this.records.remove(conversationId));
  }

  private searchFor(staged: boolean): ConversationSearchIndex | undefined {
    return staged ? this.staging?.search : this.search;
  }

  /** Runs a write, behind the queued writes of a staged conversation (see {@link ConversationStaging.write}). */
  private write<T>(conversationId: string, operation: (staged: boolean) => Promise<T>): Promise<T> {
    return this.staging ? this.staging.write(conversationId, operation) : operation(false);
  }
}

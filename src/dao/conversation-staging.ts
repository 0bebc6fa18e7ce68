/**
 * Staging of new conversations (SPEC §4: an empty conversation leaves nothing on disk; see
 * docs/storage.md, "Staged storages"): which conversations live only in the staged storages
 * and the in-memory search beside them, the queue their writes run in, and their commit to
 * real storage or their discard. ConversationStore decides what a write does; this decides
 * where it goes and in which order.
 */
import type { LogStorage } from '../storage/log-storage.js';
import type { RecordStorage } from '../storage/record-storage.js';
import { StagedLogStorage } from '../storage/staged/staged-log-storage.js';
import { StagedRecordStorage } from '../storage/staged/staged-record-storage.js';
import { CONVERSATION_INDEX } from './conversation-index-records.js';
import type { ConversationSearchIndex, SearchMessage } from './conversation-search-index.js';
import type { ConversationState } from './metadata-log.js';
import { SqliteConversationSearchIndex } from './sqlite-conversation-search-index.js';

/** A conversation that lives in the staged storages until its first input. */
interface StagedConversation {
  /** Writes to a staged conversation run one after another, so a commit never overtakes one. */
  tail: Promise<unknown>;
  committing?: Promise<void>;
}

/** What {@link ConversationStaging.commit} needs of the conversation store. */
export interface CommitTarget {
  /** The real search, where the search entry moves to; undefined when the store has none. */
  search: ConversationSearchIndex | undefined;
  /** Folds the conversation's metadata log; undefined when it folds to no conversation. */
  loadConversation(conversationId: string): Promise<ConversationState | undefined>;
  /** The search entries of the given sessions' messages. */
  searchableMessages(conversationId: string, sessionIds: string[]): Promise<SearchMessage[]>;
}

const ignore = (): void => undefined;

/** The staged conversations of one ConversationStore, on its staged log and record storages. */
export class ConversationStaging {
  /** In-memory search of the staged conversations; undefined when the store has no search. */
  readonly search: ConversationSearchIndex | undefined;
  private readonly staged = new Map<string, StagedConversation>();

  /**
   * @param withSearch keep an in-memory search for staged conversations (the store has a
   *   search index)
   */
  constructor(
    readonly logs: StagedLogStorage,
    readonly index: StagedRecordStorage,
    withSearch: boolean,
  ) {
    this.search = withSearch ? new SqliteConversationSearchIndex(':memory:') : undefined;
  }

  /**
   * The staging of a store built on `logs` and `index`: undefined when neither is staged.
   * @throws Error when only one of them is a staged storage (staging needs both)
   */
  static of(logs: LogStorage, index: RecordStorage, withSearch: boolean): ConversationStaging | undefined {
    const stagedLogs = logs instanceof StagedLogStorage;
    const stagedIndex = index instanceof StagedRecordStorage;
    if (stagedLogs !== stagedIndex) {
      throw new Error(`ConversationStore: staging needs both a StagedLogStorage and a StagedRecordStorage (got logs ${stagedLogs ? '' : 'not '}staged, index ${stagedIndex ? '' : 'not '}staged)`);
    }
    if (logs instanceof StagedLogStorage && index instanceof StagedRecordStorage) return new ConversationStaging(logs, index, withSearch);
    return undefined;
  }

  /** True while the conversation lives only in memory. */
  has(conversationId: string): boolean {
    return this.staged.has(conversationId);
  }

  /** The in-memory search while some conversation is staged (when none is, it holds nothing to find). */
  searchWhileStaged(): ConversationSearchIndex | undefined {
    return this.search && this.staged.size > 0 ? this.search : undefined;
  }

  /**
   * Stages a new conversation (its log path and index key live in memory from now on), then
   * runs its first write. When that write fails, the conversation is dropped again, ignoring
   * errors of the cleanup (the write's error is the one to tell).
   * @param path the conversation's log path
   * @throws Error when the path or key is staged already, or what `write` throws
   */
  async create<T>(conversationId: string, path: string, write: () => Promise<T>): Promise<T> {
    this.logs.stage(path);
    this.index.stage(CONVERSATION_INDEX, conversationId);
    this.staged.set(conversationId, { tail: Promise.resolve() });
    try {
      return await write();
    } catch (error) {
      this.staged.delete(conversationId);
      await this.logs.discard(path).catch(ignore);
      await this.index.discard(CONVERSATION_INDEX, conversationId).catch(ignore);
      await this.search?.removeConversation(conversationId).catch(ignore);
      throw error;
    }
  }

  /**
   * Drops a staged conversation's logs, index record and search entry; it is no longer staged
   * from the start of the call. Run it inside {@link write} to keep it behind queued writes.
   * @throws Error when a discard fails
   */
  async discard(conversationId: string, path: string): Promise<void> {
    this.staged.delete(conversationId);
    await this.logs.discard(path);
    await this.index.discard(CONVERSATION_INDEX, conversationId);
    await this.search?.removeConversation(conversationId);
  }

  /**
   * Makes a staged conversation durable: copies its logs, its index record and its search
   * entry to real storage and switches over, after the writes already queued for it.
   * Idempotent and safe to call concurrently (callers share one commit); a no-op for a
   * conversation that is not staged. On failure the conversation stays staged and a later
   * call retries the steps not yet done.
   * @param path the conversation's log path
   * @param committed called once everything is in real storage, in the same synchronous step
   *   in which the conversation stops being staged; when it throws, the conversation stays staged
   * @throws Error when a copy fails, or what `committed` throws
   */
  commit(conversationId: string, path: string, target: CommitTarget, committed: () => void): Promise<void> {
    const entry = this.staged.get(conversationId);
    if (entry === undefined) return Promise.resolve();
    entry.committing ??= this.write(conversationId, async (staged) => {
      if (!staged) return;
      if (this.logs.isStaged(path)) await this.logs.commit(path);
      if (this.index.isStaged(CONVERSATION_INDEX, conversationId)) await this.index.commit(CONVERSATION_INDEX, conversationId);
      if (target.search && this.search) {
        await this.search.removeConversation(conversationId);
        const state = await target.loadConversation(conversationId);
        if (state) {
          await target.search.setConversations([{ conversationId, title: state.conversation.title, updatedAt: state.conversation.updatedAt }]);
          await target.search.addMessages(await target.searchableMessages(conversationId, state.sessions.map((session) => session.id)));
        }
      }
      // No await between these two: nothing can see the conversation committed but not its companions.
      committed();
      this.staged.delete(conversationId);
    }).finally(() => {
      entry.committing = undefined;
    });
    return entry.committing;
  }

  /**
   * Runs a write. Writes to a staged conversation are chained (including its commit), and
   * each learns whether the conversation is still staged when its turn comes; a write to any
   * other conversation runs at once.
   */
  write<T>(conversationId: string, operation: (staged: boolean) => Promise<T>): Promise<T> {
    const entry = this.staged.get(conversationId);
    if (entry === undefined) return operation(false);
    const result = entry.tail.then(() => operation(this.staged.has(conversationId)));
    entry.tail = result.then(ignore, ignore);
    return result;
  }

  /** Closes the in-memory search; the staged storages stay open. */
  async close(): Promise<void> {
    await this.search?.close();
  }
}

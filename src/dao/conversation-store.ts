/**
 * Conversations, sessions, turns and items on top of the two storage interfaces (SPEC §4).
 *
 * Layout (contract): every conversation is the log path `conversations/<conversation-id>`,
 * holding the stream `metadata` (conversation, session and turn states; last entry wins;
 * deletions are entries) and one stream per session (`<session-id>`) holding its items.
 * `metadata.db` (a RecordStorage) is only an index for listing, rebuilt by `reindex`.
 */
import { z } from 'zod';
import {
  ConversationSchema,
  SessionSchema,
  TurnSchema,
  ItemSchema,
  type Conversation,
  type ConversationSummary,
  type Item,
  type Session,
  type StoredItem,
  type Turn,
} from '../protocol/index.js';
import type { LogStorage } from '../storage/log-storage.js';
import type { RecordStorage } from '../storage/record-storage.js';

/** Log path of all conversations. */
export const CONVERSATIONS_PATH = 'conversations';
/** Stream id of a conversation's state log. */
export const METADATA_STREAM = 'metadata';
/** RecordStorage namespace of the conversation index. */
export const CONVERSATION_INDEX = 'conversations';

/** One entry of `metadata.jsonl`. */
export const MetadataEntrySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('conversation'), conversation: ConversationSchema }),
  z.object({ type: z.literal('session'), session: SessionSchema }),
  z.object({ type: z.literal('turn'), turn: TurnSchema }),
  z.object({ type: z.literal('conversation_deleted'), conversationId: z.string(), deletedAt: z.number() }),
]);
/** One entry of `metadata.jsonl`. */
export type MetadataEntry = z.infer<typeof MetadataEntrySchema>;

/** A conversation's state, folded from its metadata log. */
export interface ConversationState {
  conversation: Conversation;
  sessions: Session[];
  turns: Turn[];
  /** Seq of the last metadata entry folded in. */
  metadataSeq: number;
}

/** A metadata or item entry that could not be understood; it is skipped, never fatal. */
export interface InvalidEntryReport {
  conversationId: string;
  stream: string;
  seq: number;
  message: string;
}

/** Log path of one conversation. */
export function conversationPath(conversationId: string): string {
  return `${CONVERSATIONS_PATH}/${conversationId}`;
}

/**
 * The conversation data access object: the only code that knows how conversations are laid
 * out in storage. Writes go to the log first (synced), then to the index.
 */
export class ConversationStore {
  /**
   * @param logs source of truth
   * @param index rebuildable listing index
   * @param onInvalidEntry told about log entries that do not match the schema (skipped)
   */
  constructor(
    private readonly logs: LogStorage,
    private readonly index: RecordStorage,
    private readonly onInvalidEntry: (report: InvalidEntryReport) => void = () => {},
  ) {
    index.defineNamespace({ name: CONVERSATION_INDEX, filterFields: ['cwd'] });
  }

  /** Appends state entries to a conversation's metadata log, then updates the index. Returns the last seq. */
  async appendMetadata(conversationId: string, entries: MetadataEntry[]): Promise<number> {
    const stored = await this.logs.append(conversationPath(conversationId), METADATA_STREAM, entries);
    const state = await this.loadConversation(conversationId);
    if (state) await this.index.set(CONVERSATION_INDEX, conversationId, summarize(state), state.conversation.updatedAt);
    else await this.index.delete(CONVERSATION_INDEX, conversationId);
    return stored.at(-1)?.seq ?? 0;
  }

  /** Appends completed items to a session's log; returns them with their seq. */
  async appendItems(conversationId: string, sessionId: string, items: Item[]): Promise<StoredItem[]> {
    const stored = await this.logs.append(conversationPath(conversationId), sessionId, items);
    return stored.map((entry) => ({ seq: entry.seq, item: entry.value }));
  }

  /**
   * Folds a conversation's metadata log into its current state.
   * @returns undefined when the conversation does not exist or was deleted
   */
  async loadConversation(conversationId: string): Promise<ConversationState | undefined> {
    const entries = await this.logs.read(conversationPath(conversationId), METADATA_STREAM);
    let conversation: Conversation | undefined;
    const sessions = new Map<string, Session>();
    const turns = new Map<string, Turn>();
    let metadataSeq = 0;
    for (const entry of entries) {
      const parsed = MetadataEntrySchema.safeParse(entry.value);
      metadataSeq = entry.seq;
      if (!parsed.success) {
        this.onInvalidEntry({
          conversationId,
          stream: METADATA_STREAM,
          seq: entry.seq,
          message: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(entry)'}: ${issue.message}`).join('; '),
        });
        continue;
      }
      const value = parsed.data;
      if (value.type === 'conversation') conversation = value.conversation;
      else if (value.type === 'session') sessions.set(value.session.id, value.session);
      else if (value.type === 'turn') turns.set(value.turn.id, value.turn);
      else conversation = undefined;
    }
    if (!conversation) return undefined;
    return { conversation, sessions: [...sessions.values()], turns: [...turns.values()], metadataSeq };
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

  /** One page of the conversation list, most recently updated first. */
  async listConversations(options: { limit?: number; cursor?: string } = {}): Promise<{ conversations: ConversationSummary[]; nextCursor?: string }> {
    const page = await this.index.list<ConversationSummary>(CONVERSATION_INDEX, {
      orderBy: 'updatedAt',
      order: 'desc',
      limit: options.limit ?? 50,
      ...(options.cursor ? { cursor: options.cursor } : {}),
    });
    return { conversations: page.records.map((record) => record.value), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  /** Ids of every conversation directory in the logs (including deleted-marked ones). */
  async listConversationIds(): Promise<string[]> {
    const paths = await this.logs.listPaths(CONVERSATIONS_PATH);
    return paths.map((entry) => entry.split('/').pop() ?? entry);
  }
}

/** The listing summary of a conversation state. */
export function summarize(state: ConversationState): ConversationSummary {
  const { conversation } = state;
  const rootTurns = state.turns.filter((turn) => turn.sessionId === conversation.rootSessionId);
  const lastTurn = rootTurns.sort((a, b) => a.startedAt - b.startedAt).at(-1);
  return {
    id: conversation.id,
    title: conversation.title,
    cwd: conversation.workLocation[0]?.cwd ?? '',
    createdAt: conversation.createdAt,
    updatedAt: conversation.updatedAt,
    lastTurnStatus: lastTurn?.status ?? null,
  };
}

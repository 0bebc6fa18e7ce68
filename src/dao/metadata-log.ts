/**
 * The metadata log of a conversation (SPEC §4: `metadata.jsonl` holds conversation, session
 * and turn states; the last entry wins; deletions are entries): its entry schema and the fold
 * of its entries into the current state.
 */
import { z } from 'zod';
import { ConversationSchema, SessionSchema, TurnSchema, type Conversation, type Session, type Turn } from '../protocol/index.js';
import type { LogEntry } from '../storage/log-storage.js';
import { formatKeyPath } from '../key-path.js';

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
  /** In the order they first appear in the log. */
  sessions: Session[];
  /** In the order they first appear in the log. */
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

/** Stream id of a conversation's state log. */
export const METADATA_STREAM = 'metadata';

/**
 * Which state an entry replaces, read from its `type` and id alone: `conversation` (also for
 * deletions), `session:<id>` or `turn:<id>`. Undefined when the entry has no such shape (it
 * is then invalid).
 */
function entryKey(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as { type?: unknown; session?: { id?: unknown } | null; turn?: { id?: unknown } | null };
  if (entry.type === 'conversation' || entry.type === 'conversation_deleted') return 'conversation';
  if (entry.type === 'session' && typeof entry.session?.id === 'string') return `session:${entry.session.id}`;
  if (entry.type === 'turn' && typeof entry.turn?.id === 'string') return `turn:${entry.turn.id}`;
  return undefined;
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${formatKeyPath(issue.path) || '(entry)'}: ${issue.message}`).join('; ');
}

/**
 * Folds metadata entries into the current state: for the conversation and for each session
 * and turn, the last valid entry wins. Only the candidates are validated with the schema,
 * from the last one backwards until one is valid, so folding a long log costs one schema
 * check per state rather than per entry; an invalid candidate is reported and the one
 * before it is used. Entries of no known shape are reported too.
 *
 * @returns undefined when there is no valid conversation entry or the last one is a deletion
 */
export function foldMetadata(
  conversationId: string,
  entries: LogEntry[],
  onInvalidEntry: (report: InvalidEntryReport) => void,
): ConversationState | undefined {
  const candidates = new Map<string, number[]>();
  const reports: InvalidEntryReport[] = [];
  const report = (entry: LogEntry, message: string): void => {
    reports.push({ conversationId, stream: METADATA_STREAM, seq: entry.seq, message });
  };
  entries.forEach((entry, index) => {
    const key = entryKey(entry.value);
    if (key === undefined) {
      const parsed = MetadataEntrySchema.safeParse(entry.value);
      report(entry, parsed.success ? 'entry of no known shape' : describeIssues(parsed.error));
      return;
    }
    const list = candidates.get(key);
    if (list) list.push(index);
    else candidates.set(key, [index]);
  });
  let conversation: Conversation | undefined;
  const sessions: Session[] = [];
  const turns: Turn[] = [];
  for (const indexes of candidates.values()) {
    for (let position = indexes.length - 1; position >= 0; position -= 1) {
      const entry = entries[indexes[position] as number] as LogEntry;
      const parsed = MetadataEntrySchema.safeParse(entry.value);
      if (!parsed.success) {
        report(entry, describeIssues(parsed.error));
        continue;
      }
      const value = parsed.data;
      if (value.type === 'conversation') conversation = value.conversation;
      else if (value.type === 'session') sessions.push(value.session);
      else if (value.type === 'turn') turns.push(value.turn);
      break;
    }
  }
  for (const invalid of reports.sort((left, right) => left.seq - right.seq)) onInvalidEntry(invalid);
  if (!conversation) return undefined;
  return { conversation, sessions, turns, metadataSeq: entries.at(-1)?.seq ?? 0 };
}

/**
 * Whether metadata entries that fold to no conversation ({@link foldMetadata} returned
 * undefined) say it was deleted: their last conversation entry that matches the schema is a
 * deletion. Otherwise they hold no valid conversation entry at all (an empty or damaged log).
 */
export function endsDeleted(entries: LogEntry[]): boolean {
  for (let index = entries.length - 1; index >= 0; index -= 1) {
    const value = (entries[index] as LogEntry).value;
    if (entryKey(value) !== 'conversation') continue;
    const parsed = MetadataEntrySchema.safeParse(value);
    if (parsed.success) return parsed.data.type === 'conversation_deleted';
  }
  return false;
}

/**
 * Folds entries just appended to a conversation's metadata log into the state folded before
 * them: the same result as {@link foldMetadata} over the whole log, without reading it again.
 * The entries are the writer's own, already of a known shape.
 * @param state the state whose `metadataSeq` is the seq just before `appended`; undefined when
 *   the log was empty (the first entry must then be the conversation)
 * @returns undefined when the conversation is deleted or still has no conversation entry
 */
export function applyMetadataEntries(state: ConversationState | undefined, appended: LogEntry<MetadataEntry>[]): ConversationState | undefined {
  let conversation = state?.conversation;
  const sessions = state ? [...state.sessions] : [];
  const turns = state ? [...state.turns] : [];
  const replaceOrAdd = <T extends { id: string }>(list: T[], value: T): void => {
    const index = list.findIndex((existing) => existing.id === value.id);
    if (index >= 0) list[index] = value;
    else list.push(value);
  };
  for (const { value } of appended) {
    if (value.type === 'conversation') conversation = value.conversation;
    else if (value.type === 'conversation_deleted') return undefined;
    else if (value.type === 'session') replaceOrAdd(sessions, value.session);
    else replaceOrAdd(turns, value.turn);
  }
  if (!conversation) return undefined;
  return { conversation, sessions, turns, metadataSeq: appended.at(-1)?.seq ?? state?.metadataSeq ?? 0 };
}

/**
 * Export and import of whole conversations (SPEC §2 `openvaala export` / `import`;
 * docs/storage.md, "Export and import"): a conversation's logs and attachments to and from a
 * {@link ConversationArchive}, through the conversation store, so an import updates the index
 * and the search like any other write and works on every storage backend.
 */
import { parseArchive, type ConversationArchive } from '../dao/conversation-archive.js';
import { foldMetadata, METADATA_STREAM, type ConversationState, type ConversationStore } from '../dao/conversation-store.js';
import type { LogEntry } from '../storage/log-storage.js';
import { newId } from '../ids.js';
import { ItemSchema } from '../protocol/index.js';
import { VERSION } from '../package-info.js';
import type { AttachmentStore } from './attachments.js';
import { ArchiveFormatError } from '../dao/conversation-archive.js';
import { StateConflictError } from './state-conflict-error.js';

/** What export and import use of the runtime. */
export interface TransferHost {
  readonly store: ConversationStore;
  readonly attachments: AttachmentStore | undefined;
}

/** What an import did. */
export interface ImportOutcome {
  /** The id the conversation has now. */
  conversationId: string;
  /** The id it had in the archive. */
  archivedConversationId: string;
  /** True when the conversation was stored under new ids (a copy asked for with `asNew`). */
  renamed: boolean;
  state: ConversationState;
  /** Items written, over every session. */
  items: number;
  attachments: number;
}

/**
 * Reads a conversation's logs, as stored, and its attachments into an archive. The logs are
 * read stream by stream while the conversation may still be written to, so an export taken
 * during a turn holds what was stored at each read (the next import opens it like a
 * conversation of a stopped server: a running turn is recorded interrupted). Damaged lines,
 * and entries whose values are not valid for their stream, are left out as every read leaves
 * them out (the store's `logDamage` names them), so the archive can be imported.
 * @returns undefined when the conversation does not exist
 * @throws DamagedConversationError when one of its logs cannot be read, or its metadata log
 *   holds no valid conversation entry: an archive without them would not be the conversation
 */
export async function exportConversation(host: TransferHost, conversationId: string): Promise<ConversationArchive | undefined> {
  const state = await host.store.openConversationState(conversationId);
  if (!state) return undefined;
  const streams = await host.store.readStreams(conversationId, state.sessions.map((session) => session.id));
  if (!streams) return undefined;
  return {
    conversationId,
    exportedAt: Date.now(),
    openvaalaVersion: VERSION,
    streams: streams.map(({ stream, entries }) => ({ stream, entries: readableEntries(conversationId, stream, entries).map((entry) => ({ seq: entry.seq, value: entry.value })) })),
    attachments: host.attachments?.listFiles(conversationId) ?? [],
  };
}

/**
 * The entries of one stream that reading the conversation takes: a metadata entry its fold
 * skips, or an item that is not a valid item, is left out, as every read leaves it out (the
 * store's `logDamage` names it). An archive holding it would be refused by import.
 */
function readableEntries(conversationId: string, stream: string, entries: LogEntry[]): LogEntry[] {
  if (stream !== METADATA_STREAM) return entries.filter((entry) => ItemSchema.safeParse(entry.value).success);
  const skipped = new Set<number>();
  foldMetadata(conversationId, entries, (report) => skipped.add(report.seq));
  return skipped.size === 0 ? entries : entries.filter((entry) => !skipped.has(entry.seq));
}

/**
 * Checks what the archive's lines cannot show alone: the metadata folds to the conversation
 * the manifest names, every session stream is a session of it, and every item names the
 * session whose stream holds it.
 * @throws ArchiveFormatError naming the stream, seq or field at fault
 */
function checkConsistency(archive: ConversationArchive): ConversationState {
  const metadata = archive.streams.find((stream) => stream.stream === METADATA_STREAM);
  const problems: string[] = [];
  const state = foldMetadata(archive.conversationId, (metadata?.entries ?? []) as LogEntry[], (report) => problems.push(`metadata seq ${report.seq}: ${report.message}`));
  if (problems.length > 0) throw new ArchiveFormatError(problems[0] as string);
  if (!state) throw new ArchiveFormatError('the metadata entries hold no conversation (or end with a deletion)');
  if (state.conversation.id !== archive.conversationId) throw new ArchiveFormatError(`the metadata's conversation is ${state.conversation.id}, the manifest names ${archive.conversationId}`);
  const sessions = new Set(state.sessions.map((session) => session.id));
  if (!sessions.has(state.conversation.rootSessionId)) throw new ArchiveFormatError(`the root session ${state.conversation.rootSessionId} has no session entry`);
  for (const session of state.sessions) {
    if (!/^sess_[0-9A-Za-z]{1,64}$/.test(session.id)) throw new ArchiveFormatError(`session id ${JSON.stringify(session.id)} is not sess_ followed by letters and digits`);
    if (session.conversationId !== archive.conversationId) throw new ArchiveFormatError(`session ${session.id} belongs to conversation ${session.conversationId}, not ${archive.conversationId}`);
  }
  for (const { stream, entries } of archive.streams) {
    if (stream === METADATA_STREAM) continue;
    if (!sessions.has(stream)) throw new ArchiveFormatError(`stream "${stream}" is not a session of the conversation (its metadata lists ${[...sessions].join(', ')})`);
    for (const entry of entries) {
      const sessionId = (entry.value as { sessionId?: unknown }).sessionId;
      if (sessionId !== stream) throw new ArchiveFormatError(`stream "${stream}" seq ${entry.seq}: sessionId is ${JSON.stringify(sessionId)}, not the stream's session`);
    }
  }
  return state;
}

/** The refusal of an archive whose conversation is stored here, naming it by id and, where it can be read, title. */
async function existingConversation(host: TransferHost, conversationId: string): Promise<StateConflictError> {
  const stored = await host.store.loadConversation(conversationId).catch(() => undefined);
  const name = stored ? `conversation ${conversationId} (${JSON.stringify(stored.conversation.title)})` : `conversation ${conversationId}`;
  return new StateConflictError(`${name} is stored here already; import with asNew for a copy under new ids`, 'conversation_exists');
}

/** Replaces every string equal to a key of `ids` anywhere in a JSON value (ids are whole values, never parts of text). */
function renameIds(value: unknown, ids: Map<string, string>): unknown {
  if (typeof value === 'string') return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((element) => renameIds(element, ids));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, element]) => [key, renameIds(element, ids)]));
  return value;
}

/** The archive with new conversation, session and turn ids, everywhere they appear as values and as stream names. */
function renamed(archive: ConversationArchive, state: ConversationState): ConversationArchive {
  const ids = new Map<string, string>([[archive.conversationId, newId('conv')]]);
  for (const session of state.sessions) ids.set(session.id, newId('sess'));
  for (const turn of state.turns) ids.set(turn.id, newId('turn'));
  return {
    ...archive,
    conversationId: ids.get(archive.conversationId) as string,
    streams: archive.streams.map(({ stream, entries }) => ({ stream: ids.get(stream) ?? stream, entries: entries.map((entry) => ({ seq: entry.seq, value: renameIds(entry.value, ids) })) })),
  };
}

/** Options of {@link importConversation}. */
export interface ImportOptions {
  /** Store a copy under new conversation, session and turn ids, whether the archive's id is taken or not. */
  asNew?: boolean;
}

/**
 * Imports an archive (the text of an `openvaala export` file): checks all of it first, then
 * writes its attachments and logs through the store (which updates the index and the search).
 * The conversation keeps its ids; an archive whose conversation id is stored here already (the
 * same archive imported twice, or a conversation that never left) is refused, as a silent
 * second copy would be a duplicate the user did not ask for. With `asNew` it gets a new
 * conversation id, new session ids and new turn ids, replaced wherever they appear (as a fork
 * gets new ids). Item ids are kept (they only need to be unique within a conversation).
 * Nothing of a failed import is left behind.
 * @throws ArchiveFormatError naming the line, stream or field at fault (nothing written)
 * @throws StateConflictError (`conversation_exists`) naming the stored conversation and its title, without `asNew` (nothing written)
 * @throws Error when the archive has attachments and this server keeps none, or a write fails
 */
export function importConversation(host: TransferHost, text: string, options: ImportOptions = {}): Promise<ImportOutcome> {
  // One import at a time per server: the check that an id is free and the writes under it are
  // then never interleaved with another import of the same archive.
  const previous = importQueues.get(host) ?? Promise.resolve();
  const result = previous.then(() => importNow(host, text, options));
  importQueues.set(host, result.then(ignore, ignore));
  return result;
}

const importQueues = new WeakMap<TransferHost, Promise<void>>();
const ignore = (): void => undefined;

async function importNow(host: TransferHost, text: string, options: ImportOptions): Promise<ImportOutcome> {
  const parsed = parseArchive(text);
  const state = checkConsistency(parsed);
  if (parsed.attachments.length > 0 && !host.attachments) throw new Error('the archive has attachments but this server stores no attachments');
  if (!options.asNew && (await host.store.hasLogs(parsed.conversationId))) throw await existingConversation(host, parsed.conversationId);
  const archive = options.asNew ? renamed(parsed, state) : parsed;
  const conversationId = archive.conversationId;
  try {
    for (const attachment of archive.attachments) host.attachments?.restore(conversationId, attachment.name, attachment.bytes);
    const imported = await host.store.importConversation(
      conversationId,
      archive.streams.map(({ stream, entries }) => ({ stream, values: entries.map((entry) => entry.value) })),
    );
    return {
      conversationId,
      archivedConversationId: parsed.conversationId,
      renamed: archive !== parsed,
      state: imported,
      items: archive.streams.reduce((sum, stream) => sum + (stream.stream === METADATA_STREAM ? 0 : stream.entries.length), 0),
      attachments: archive.attachments.length,
    };
  } catch (error) {
    // The store removed the logs it wrote; the files written here go too (the id was free).
    host.attachments?.removeFiles(conversationId);
    throw error;
  }
}

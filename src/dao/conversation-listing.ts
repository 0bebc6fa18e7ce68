/**
 * What the conversation index holds and how it is listed (SPEC §4: `metadata.db` is an index
 * rebuilt from the logs): the summary of a conversation state, its preview, the stored index
 * value with its filter fields, and the cursors of the two sort orders.
 */
import type { ConversationSummary } from '../protocol/index.js';
import type { LogStorage } from '../storage/log-storage.js';
import { searchableText } from './conversation-search-index.js';
import type { ConversationState } from './metadata-log.js';

/** Most characters of a summary's `preview`. */
export const PREVIEW_LENGTH = 200;
/** Entries read backwards from the end of a root session while looking for its preview. */
const PREVIEW_SCAN_ENTRIES = 2000;
/** Prefix that marks a cursor of the `created` sort (a record cursor never starts with it). */
const CREATED_CURSOR_PREFIX = 'cr-';

/** The order of a listing: by creation or by last update, newest first. */
export type ConversationSort = 'created' | 'updated';

/** Filters of a listing; each one absent means "any". */
export interface ConversationFilters {
  /** Exact working directory of the first work location entry. */
  cwd?: string;
  /** Name of the first (default) executor. */
  executor?: string;
  /** true: only archived ones; false: only the others. */
  archived?: boolean;
}

/** The index value: the summary plus a string form of `archived`, which the index filters on. */
export type IndexedSummary = ConversationSummary & { listState: 'archived' | 'active' };

/** The start of a message as a preview: whitespace runs collapsed, at most {@link PREVIEW_LENGTH} characters. */
export function previewText(text: string): string {
  return [...text.replace(/\s+/g, ' ').trim()].slice(0, PREVIEW_LENGTH).join('');
}

/** The preview of the last searchable message among stored values (undefined when none has text). */
export function previewOfItems(values: unknown[]): string | undefined {
  for (let index = values.length - 1; index >= 0; index -= 1) {
    const text = searchableText(values[index]);
    if (text !== undefined) return previewText(text);
  }
  return undefined;
}

/**
 * Reads the preview of a session from the end of its log (the last user or assistant message
 * among its last {@link PREVIEW_SCAN_ENTRIES} entries); '' when there is none.
 */
export async function readPreview(logs: LogStorage, path: string, sessionId: string): Promise<string> {
  let before: number | undefined;
  for (let scanned = 0; scanned < PREVIEW_SCAN_ENTRIES; ) {
    const entries = await logs.read(path, sessionId, { direction: 'backward', limit: 200, ...(before !== undefined ? { before } : {}) });
    const found = previewOfItems(entries.map((entry) => entry.value).reverse());
    if (found !== undefined) return found;
    if (entries.length < 200) return '';
    scanned += entries.length;
    before = (entries.at(-1) as { seq: number }).seq;
  }
  return '';
}

/** The listing summary of a conversation state, given the root session's preview. */
export function summarizeState(state: ConversationState, preview: string): ConversationSummary {
  const { conversation } = state;
  const rootTurns = state.turns.filter((turn) => turn.sessionId === conversation.rootSessionId && turn.rewound !== true);
  const lastTurn = rootTurns.sort((a, b) => a.startedAt - b.startedAt).at(-1);
  const first = conversation.workLocation[0];
  return {
    id: conversation.id,
    title: conversation.title,
    cwd: first?.cwd ?? '',
    executor: first?.executor ?? '',
    createdAt: conversation.createdAt,
    updatedAt: conversation.updatedAt,
    lastTurnStatus: lastTurn?.status ?? null,
    ...(lastTurn?.stopReason !== undefined && lastTurn.stopReason !== 'end_turn' ? { lastTurnStopReason: lastTurn.stopReason } : {}),
    running: state.sessions.some((session) => session.activeTurnId !== null || session.queuedInputs.length > 0),
    preview,
    archived: conversation.archived === true,
  };
}

/** The index value of a summary. */
export function toIndexValue(summary: ConversationSummary): IndexedSummary {
  return { ...summary, listState: summary.archived ? 'archived' : 'active' };
}

/** The summary in an index value, with defaults for records written before a field existed. */
export function fromIndexValue(value: Partial<IndexedSummary> & Pick<ConversationSummary, 'id'>): ConversationSummary {
  return {
    id: value.id,
    title: value.title ?? '',
    cwd: value.cwd ?? '',
    executor: value.executor ?? 'local',
    createdAt: value.createdAt ?? 0,
    updatedAt: value.updatedAt ?? 0,
    lastTurnStatus: value.lastTurnStatus ?? null,
    ...(value.lastTurnStopReason !== undefined ? { lastTurnStopReason: value.lastTurnStopReason } : {}),
    running: value.running ?? false,
    preview: value.preview ?? '',
    archived: value.archived ?? value.listState === 'archived',
  };
}

/** The index `where` of listing filters (`archived` defaults to false: archived ones are left out). */
export function filterWhere(filters: ConversationFilters): Record<string, string> {
  return {
    ...(filters.cwd !== undefined ? { cwd: filters.cwd } : {}),
    ...(filters.executor !== undefined ? { executor: filters.executor } : {}),
    listState: filters.archived === true ? 'archived' : 'active',
  };
}

/** Whether a summary passes listing filters (same rules as {@link filterWhere}). */
export function matchesFilters(summary: ConversationSummary, filters: ConversationFilters): boolean {
  return (filters.cwd === undefined || summary.cwd === filters.cwd) && (filters.executor === undefined || summary.executor === filters.executor) && summary.archived === (filters.archived === true);
}

/** The cursor handed to clients for a record cursor of one sort order. */
export function wrapCursor(sort: ConversationSort, recordCursor: string): string {
  return sort === 'created' ? CREATED_CURSOR_PREFIX + recordCursor : recordCursor;
}

/**
 * The record cursor inside a client's cursor of one sort order.
 * @throws Error when the cursor was made for the other sort order
 */
export function unwrapCursor(sort: ConversationSort, cursor: string): string {
  const created = cursor.startsWith(CREATED_CURSOR_PREFIX);
  if (created !== (sort === 'created')) throw new Error(`the cursor was made for sort "${created ? 'created' : 'updated'}", not "${sort}"`);
  return created ? cursor.slice(CREATED_CURSOR_PREFIX.length) : cursor;
}

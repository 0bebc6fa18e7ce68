/**
 * Pickers: a list to choose from with a search field (type to filter, ↑↓ to move, Enter to
 * choose, Esc to close). The conversation picker searches the server's full-text index
 * (`conversation/list` `query`) and follows the live list feed (`conversations/subscribe`) so
 * a conversation's running state changes while the picker is open; the model and agent
 * pickers list `models/list` and `agents/list`; the rewind picker lists the user's messages.
 */
import type { RuntimeClient } from '../client/runtime-client.js';
import type { AnyNotification, ConversationSummary } from '../protocol/index.js';
import { lastTurnMark } from '../protocol/stop-reasons.js';
import { truncateLine, type StyledLine } from './styled-text.js';
import type { TranscriptModel } from './transcript-model.js';
import { terminalLine } from '../tools/terminal-text.js';
import { localTimeOfDay, timeAgo } from '../client/time-text.js';

/** One choice. */
export interface PickerItem {
  value: string;
  label: string;
  detail?: string;
  /** Shown as a marker before the label (e.g. running). */
  badge?: { text: string; color: 'green' | 'yellow' | 'red' | 'cyan' };
}

/** A picker on screen. */
export interface PickerState {
  kind: 'conversation' | 'model' | 'agent' | 'rewind';
  title: string;
  query: string;
  items: PickerItem[];
  selected: number;
  /** True when the server filters by the query (else the items are filtered here). */
  serverSearch: boolean;
  loading: boolean;
  error?: string;
}

/** The items a picker shows for its query. */
export function visibleItems(picker: PickerState): PickerItem[] {
  if (picker.serverSearch || picker.query.trim() === '') return picker.items;
  const words = picker.query.toLowerCase().split(/\s+/).filter(Boolean);
  return picker.items.filter((item) => words.every((word) => `${item.label} ${item.detail ?? ''} ${item.value}`.toLowerCase().includes(word)));
}

/** The picker's lines: title, search field, the items around the selection. */
export function pickerLines(picker: PickerState, width: number, height: number): StyledLine[] {
  const items = visibleItems(picker);
  const lines: StyledLine[] = [
    [{ text: '─'.repeat(width), style: { color: 'cyan' } }],
    truncateLine([{ text: `${picker.title} `, style: { bold: true } }, { text: 'search: ', style: { dim: true } }, { text: picker.query }, { text: ' ', style: { inverse: true } }, ...(picker.loading ? [{ text: '  loading…', style: { dim: true } }] : [])], width),
  ];
  if (picker.error) lines.push([{ text: picker.error, style: { color: 'red' } }]);
  const room = Math.max(1, height - lines.length - 1);
  const start = Math.min(Math.max(0, picker.selected - room + 1), Math.max(0, items.length - room));
  for (const [offset, item] of items.slice(start, start + room).entries()) {
    const index = start + offset;
    const marker = index === picker.selected ? '› ' : '  ';
    lines.push(
      truncateLine(
        [
          { text: marker, style: { color: 'cyan' } },
          ...(item.badge ? [{ text: `${item.badge.text} `, style: { color: item.badge.color } }] : []),
          { text: item.label, style: index === picker.selected ? { inverse: true } : { bold: true } },
          ...(item.detail ? [{ text: `  ${item.detail}`, style: { dim: true } }] : []),
        ],
        width,
      ),
    );
  }
  if (items.length === 0 && !picker.loading) lines.push([{ text: '  nothing matches', style: { dim: true } }]);
  lines.push([{ text: '  type to search · ↑↓ move · Enter choose · Esc close', style: { dim: true } }]);
  return lines;
}

/** A conversation of the list as a picker item. */
export function conversationItem(summary: ConversationSummary): PickerItem {
  return {
    value: summary.id,
    label: terminalLine(summary.title) || summary.id,
    detail: `${timeAgo(summary.updatedAt)} · ${terminalLine(summary.cwd)}${summary.preview ? ` · ${summary.preview.replace(/\s+/g, ' ').slice(0, 60)}` : ''}`,
    ...lastTurnBadge(summary),
  };
}

/** The badge of a conversation in the picker: running, or its last turn's mark (protocol `lastTurnMark`). */
function lastTurnBadge(summary: ConversationSummary): Pick<PickerItem, 'badge'> {
  if (summary.running) return { badge: { text: '● running', color: 'yellow' } };
  const mark = lastTurnMark(summary);
  if (mark === undefined) return {};
  return mark.kind === 'failed' ? { badge: { text: `✗ ${mark.text}`, color: 'red' } } : { badge: { text: `⚠ ${mark.text}`, color: 'yellow' } };
}

/** The full-text query for what was typed: every word as a quoted prefix (FTS5 syntax). */
export function searchQuery(typed: string): string | undefined {
  const words = typed.split(/\s+/).filter(Boolean);
  return words.length > 0 ? words.map((word) => `"${word.replace(/"/g, '""')}"*`).join(' ') : undefined;
}

/** Loads the conversations matching a query, newest first. */
export async function loadConversations(client: RuntimeClient, typed: string): Promise<PickerItem[]> {
  const query = searchQuery(typed);
  const { conversations } = await client.request('conversation/list', { limit: 100, ...(query ? { query } : {}) });
  return conversations.map(conversationItem);
}

/**
 * Applies a list-feed notification to the conversation picker's items: a conversation's new
 * running state or title, or a new or deleted conversation.
 * @returns the new items, or undefined when the event changes nothing shown
 */
export function applyListFeed(items: PickerItem[], event: AnyNotification, query: string): PickerItem[] | undefined {
  if (event.method === 'conversation/updated' && event.params.summary) {
    const summary = event.params.summary;
    const index = items.findIndex((item) => item.value === summary.id);
    if (index < 0) return undefined;
    return items.map((item, position) => (position === index ? conversationItem(summary) : item));
  }
  if (event.method === 'conversation/created' && query.trim() === '') return [conversationItem(event.params.summary), ...items];
  if (event.method === 'conversation/deleted') return items.filter((item) => item.value !== event.params.conversationId);
  return undefined;
}

/** The models of the catalog. */
export async function loadModels(client: RuntimeClient): Promise<PickerItem[]> {
  const { models, defaultModel } = await client.request('models/list', {});
  return models.map((model) => ({
    value: model.id,
    label: model.id,
    detail: `${model.displayName !== model.id ? `${model.displayName} · ` : ''}${model.contextWindow ? `${Math.round(model.contextWindow / 1000)}k context` : ''}${model.id === defaultModel ? ' · default' : ''}`,
  }));
}

/** The agents of `agents.yaml`. */
export async function loadAgents(client: RuntimeClient): Promise<PickerItem[]> {
  const { agents } = await client.request('agents/list', {});
  return agents.map((agent) => ({ value: agent.name, label: agent.name, detail: `${agent.description ?? ''}${agent.model ? ` · ${agent.model}` : ''}${agent.default ? ' · default' : ''} · approvals ${agent.approvals.default}` }));
}

/**
 * The user's messages of the root session (newest first) to rewind to: choosing one drops it
 * and everything after it. The value is the id of the item before it (the rewind point).
 */
export function rewindItems(model: TranscriptModel): PickerItem[] {
  const stored = model.entries.filter((entry) => entry.item && entry.sessionId === model.rootSessionId);
  const items: PickerItem[] = [];
  stored.forEach((entry, index) => {
    const item = entry.item;
    const before = stored[index - 1]?.item;
    if (item?.kind !== 'user_message' || !before) return;
    const text = item.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
    items.push({ value: `${before.id}\n${text}`, label: text.replace(/\s+/g, ' ').slice(0, 120), detail: localTimeOfDay(item.createdAt) });
  });
  return items.reverse();
}

/**
 * How much text a session's history holds in memory, for the runtime's choice of which idle
 * conversations to close (`Runtime.evictIdleConversations`): a conversation that streamed a
 * 1.6-million-character answer costs megabytes while it stays open, one of forty short steps a
 * few kilobytes, and only the first is worth reading again from storage to save them.
 */
import type { Item } from '../protocol/index.js';

/** Deepest nesting of an item's fields that is measured (items nest a few levels: tool calls, content parts). */
const MAX_DEPTH = 8;

/**
 * The characters (UTF-16 code units) of every string in `value`, keys included, down to
 * {@link MAX_DEPTH} levels: an estimate of the text an item keeps in memory, which costs time
 * in the number of fields, not in their length.
 */
export function textLength(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return 0;
  let total = 0;
  if (Array.isArray(value)) {
    for (const each of value) total += textLength(each, depth + 1);
    return total;
  }
  for (const [key, each] of Object.entries(value)) total += key.length + textLength(each, depth + 1);
  return total;
}

/**
 * The text length of a history that grows at its end and is sometimes replaced (a rewind),
 * remembered between calls: only items added since the last call are measured, unless the
 * history no longer continues the one measured, which is then measured again.
 */
export class HistorySize {
  private measured = 0;
  private lastItem: Item | undefined;
  private characters = 0;

  /** The text length of `items` (see {@link textLength}), in characters. */
  of(items: readonly Item[]): number {
    const continues = items.length >= this.measured && (this.measured === 0 || items[this.measured - 1] === this.lastItem);
    if (!continues) {
      this.measured = 0;
      this.characters = 0;
    }
    for (let index = this.measured; index < items.length; index++) this.characters += textLength(items[index]);
    this.measured = items.length;
    this.lastItem = items.at(-1);
    return this.characters;
  }
}

/**
 * The bounds of the idle conversations kept open: by number, by the text their histories hold,
 * and by time unused; and the measure of a history's text that the second bound reads.
 */
import { describe, expect, it } from 'vitest';
import { conversationsToClose, type IdleConversation } from '../../src/runtime/conversation-eviction.js';
import { HistorySize, textLength } from '../../src/runtime/history-size.js';
import type { Item } from '../../src/protocol/index.js';

const NOW = 1_000_000;
const BOUNDS = { maxIdleOpenConversations: 3, maxIdleHistoryChars: 1_000, idleConversationMs: 60_000 };

/** Idle conversations `a`, `b`, … used one second apart (the last most recently), with the given history sizes. */
function idle(...historyChars: number[]): IdleConversation[] {
  return historyChars.map((chars, index) => ({ conversationId: String.fromCharCode(97 + index), usedAt: NOW - (historyChars.length - index) * 1_000, historyChars: chars }));
}

describe('choosing the idle conversations to close', () => {
  it('keeps the most recently used within the number bound and closes the rest, least recently used first', () => {
    expect(conversationsToClose(idle(10, 10, 10, 10, 10), BOUNDS, NOW)).toEqual(['a', 'b']);
    expect(conversationsToClose(idle(10, 10), BOUNDS, NOW)).toEqual([]);
  });

  it('closes a conversation whose history alone is over the text bound, however few are open', () => {
    expect(conversationsToClose(idle(10, 5_000, 10), BOUNDS, NOW)).toEqual(['b']);
    expect(conversationsToClose(idle(1_001), BOUNDS, NOW)).toEqual(['a']);
  });

  it('keeps the most recently used while their texts fit together, and closes older ones that no longer fit', () => {
    // c (600) is kept, b (300) fits beside it, a (200) would pass 1,000.
    expect(conversationsToClose(idle(200, 300, 600), BOUNDS, NOW)).toEqual(['a']);
  });

  it('counts conversations still in their grace toward the bounds, and never closes them', () => {
    const conversations = idle(10, 10, 10, 10).map((each, index) => (index >= 2 ? { ...each, inGrace: true } : each));
    // c and d, just used, take two of the three places: b keeps the last, a closes now.
    expect(conversationsToClose(conversations, BOUNDS, NOW)).toEqual(['a']);
    // Alone over the text bound but in its grace: kept until its grace is over.
    expect(conversationsToClose([{ conversationId: 'big', usedAt: NOW, historyChars: 5_000, inGrace: true }], BOUNDS, NOW)).toEqual([]);
    // In their grace beyond the number bound: none of them closes, the older one does.
    const recent = idle(10, 10, 10, 10, 10).map((each, index) => (index >= 1 ? { ...each, inGrace: true } : each));
    expect(conversationsToClose(recent, BOUNDS, NOW)).toEqual(['a']);
  });

  it('closes any conversation unused for the idle time', () => {
    const conversations = idle(10, 10);
    expect(conversationsToClose(conversations, BOUNDS, NOW + 58_500)).toEqual(['a']);
    expect(conversationsToClose(conversations, BOUNDS, NOW + 60_000)).toEqual(['a', 'b']);
  });
});

describe('the text a history holds', () => {
  const message = (text: string): Item => ({ kind: 'assistant_message', id: `item_${text.length}`, text, createdAt: 0 }) as unknown as Item;

  it('counts every string of an item, nested ones and keys included', () => {
    expect(textLength({ a: 'xyz', b: [{ c: 'pq' }, 'r'], d: 5, e: null })).toBe(1 + 3 + 1 + 1 + 2 + 1 + 1 + 1);
  });

  it('measures only the items added since the last call, and measures again a history that was replaced', () => {
    const size = new HistorySize();
    const items = [message('a'.repeat(100))];
    const first = size.of(items);
    expect(first).toBe(textLength(items[0]));
    items.push(message('b'.repeat(50_000)));
    expect(size.of(items)).toBe(first + textLength(items[1]));
    // A rewind keeps a shorter history: measured from the start again.
    items.splice(0, items.length, message('c'.repeat(10)));
    expect(size.of(items)).toBe(textLength(items[0]));
    // The same length but another item at its end: not the history measured.
    items.splice(0, 1, message('d'.repeat(20)));
    expect(size.of(items)).toBe(textLength(items[0]));
  });
});

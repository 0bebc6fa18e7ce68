/**
 * The terminal UI marks an answer or reasoning that did not end whole: cut off by the
 * provider's stream (`failed`: the turn retried it, or failed) or interrupted, so a cut-off
 * answer followed by its retry does not read as the answer given twice.
 */
import { describe, expect, it } from 'vitest';
import { entryLines } from '../../src/tui/entry-lines.js';
import { plainText } from '../../src/tui/styled-text.js';
import type { Item, ItemStatus } from '../../src/protocol/index.js';

const base = (status: ItemStatus) => ({ id: 'i', sessionId: 's', turnId: 't', createdAt: 1, completedAt: 2, status });

/** The item's lines as plain text (without the separating blank line). */
function shown(item: Item): string[] {
  return entryLines({ key: item.id, sessionId: 's', seq: 1, item, version: 0 }, 80, { reasoning: true, output: false }, 's')
    .slice(0, -1)
    .map((line) => plainText(line));
}

describe('terminal UI: answers and reasoning cut short', () => {
  it.each<[ItemStatus, string | undefined]>([
    ['failed', '  ■ cut off'],
    ['interrupted', '  ■ interrupted'],
    ['completed', undefined],
  ])('an answer ended %s is marked %s under its text', (status, mark) => {
    const lines = shown({ ...base(status), kind: 'assistant_message', text: 'The answer is', model: 'm' });
    expect(lines[0]).toBe('The answer is');
    expect(lines.slice(1)).toEqual(mark ? [mark] : []);
  });

  it('marks cut-off reasoning the same way', () => {
    const lines = shown({ ...base('failed'), kind: 'reasoning', summary: 'half a thought', summaryParts: ['half a thought'] });
    expect(lines.at(-1)).toBe('  ■ cut off');
    expect(lines.join('\n')).toContain('half a thought');
  });
});

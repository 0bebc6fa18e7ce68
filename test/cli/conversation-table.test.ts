/**
 * The conversation table of `openvaala conversations` and the terminal UI's resume picker with
 * titles and directories written elsewhere: a line break or tab cannot break a row, escape
 * sequences are gone, and wide characters (emoji, CJK) keep the columns aligned.
 */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { formatConversationList } from '../../src/cli/conversations.js';
import type { ConversationSummary } from '../../src/protocol/index.js';
import { conversationItem } from '../../src/tui/pickers.js';

function summary(id: string, cwd: string, title: string): ConversationSummary {
  return { id, cwd, title, updatedAt: Date.UTC(2026, 11, 3, 12, 0), lastTurnStatus: 'completed', running: false } as unknown as ConversationSummary;
}

describe('formatConversationList', () => {
  it('keeps each conversation on one line whatever its directory and title hold', () => {
    const table = formatConversationList([
      summary('conv_a', '/home/user/two\nlines', 'title\r\nwith\tbreaks'),
      summary('conv_b', '/home/user/\u001b[31mred\u001b[0m', 'plain'),
    ]);
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('/home/user/two\\nlines');
    expect(lines[1]).toContain('title\\nwith breaks');
    expect(lines[2]).toContain('/home/user/red');
    // eslint-disable-next-line no-control-regex
    expect(table).not.toMatch(/\u001b/);
  });

  it('aligns the columns by terminal width: the titles start in the same column after wide directories', () => {
    const table = formatConversationList([summary('conv_a', '/home/user/日本語', 'one'), summary('conv_b', '/home/user/😀😀', 'two'), summary('conv_c', '/home/user/abc', 'three')]);
    const lines = table.trimEnd().split('\n');
    const titleColumns = lines.slice(1).map((line) => stringWidth(line.slice(0, line.lastIndexOf('  ') + 2)));
    expect(new Set(titleColumns).size).toBe(1);
  });
});

describe('the resume picker', () => {
  it('shows a title and a directory on one line each', () => {
    const item = conversationItem(summary('conv_a', '/home/user/two\nlines', 'a\nb \u001b]0;pwned\u0007'));
    expect(item.label).toBe('a\\nb ');
    expect(item.detail).toContain('/home/user/two\\nlines');
  });

  it('says why a last turn ended when its answer may be cut or it failed, and nothing for a normal finish', () => {
    const cut = conversationItem({ ...summary('conv_a', '/w', 'cut'), lastTurnStopReason: 'max_tokens' });
    expect(cut.badge).toEqual({ text: '⚠ output limit reached', color: 'yellow' });
    const refused = conversationItem({ ...summary('conv_b', '/w', 'refused'), lastTurnStopReason: 'refusal' });
    expect(refused.badge).toEqual({ text: '⚠ refused by the provider', color: 'yellow' });
    const failed = conversationItem({ ...summary('conv_c', '/w', 'failed'), lastTurnStatus: 'failed', lastTurnStopReason: 'model_error' });
    expect(failed.badge).toEqual({ text: '✗ model error', color: 'red' });
    // A record written before stop reasons were kept: the status alone.
    expect(conversationItem({ ...summary('conv_d', '/w', 'old'), lastTurnStatus: 'failed' }).badge).toEqual({ text: '✗ failed', color: 'red' });
    expect(conversationItem({ ...summary('conv_g', '/w', 'stopped'), lastTurnStatus: 'interrupted', lastTurnStopReason: 'user_interrupt' }).badge).toBeUndefined();
    expect(conversationItem(summary('conv_e', '/w', 'fine')).badge).toBeUndefined();
    expect(conversationItem({ ...summary('conv_f', '/w', 'busy'), running: true, lastTurnStopReason: 'max_tokens' }).badge).toEqual({ text: '● running', color: 'yellow' });
  });
});

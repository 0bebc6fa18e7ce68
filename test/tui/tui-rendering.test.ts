/**
 * The terminal UI's pure parts: Markdown and code to styled lines, NO_COLOR, wrapping, the
 * composer's editing and large pastes, the visible window of a long transcript, and the
 * refusal of `openvaala tui` without a terminal.
 */
import { describe, expect, it } from 'vitest';
import { ComposerState } from '../../src/tui/composer-state.js';
import { renderMarkdown } from '../../src/tui/markdown.js';
import { parseSlashCommand } from '../../src/tui/commands.js';
import { plainText, toAnsi, wrapLine } from '../../src/tui/styled-text.js';
import { TranscriptModel } from '../../src/tui/transcript-model.js';
import { Viewport } from '../../src/tui/viewport.js';
import { runTui } from '../../src/tui/index.js';
import type { Item } from '../../src/protocol/index.js';

describe('Markdown in the terminal', () => {
  it('renders headings, lists, inline styles and highlighted code; colours only without NO_COLOR', () => {
    const lines = renderMarkdown('# Title\n\nSome **bold** and `code` [link](https://example.com).\n\n- one\n- two\n\n```ts\nconst x = 1; // note\n```', 40);
    const text = lines.map(plainText);
    expect(text).toEqual(['Title', '', 'Some bold and code link', '(https://example.com).', '', '• one', '• two', '', 'ts', '  const x = 1; // note']);
    const code = lines.at(-1) ?? [];
    expect(toAnsi(code, true)).toContain('\u001b[1;34mconst\u001b[0m');
    // eslint-disable-next-line no-control-regex
    expect(toAnsi(code, false)).not.toMatch(/\u001b\[[0-9;]*3[0-9]m|\u001b\[90m/);
    expect(toAnsi(lines[0] ?? [], false)).toContain('\u001b[1;4m');
  });

  it('keeps an unfinished code fence open while an answer streams', () => {
    expect(renderMarkdown('Look:\n\n```py\nprint("hi")', 40).map(plainText)).toEqual(['Look:', '', 'py', '  print("hi")']);
  });

  it('wraps at spaces within the width, and strips escape sequences from output', () => {
    const wrapped = wrapLine([{ text: 'alpha beta gamma delta' }], 11).map(plainText);
    expect(wrapped).toEqual(['alpha beta', 'gamma delta']);
    expect(renderMarkdown('red \u001b[31mtext\u001b[0m here', 40).map(plainText)).toEqual(['red text here']);
  });
});

describe('the last step to the terminal', () => {
  it('removes escape sequences and control characters from any span, such as a conversation title in the status bar', () => {
    const line = [{ text: ' title \u001b]0;T\u0007 with\u009b31m escape\r ', style: { inverse: true } }, { text: 'plain' }];
    const drawn = toAnsi(line, true);
    expect(drawn).toBe('\u001b[7m title  with escape \u001b[0mplain');
    expect(drawn).not.toContain('\u001b]');
  });
});

describe('composer', () => {
  it('keeps a large paste whole behind a placeholder, and history recalls prompts', () => {
    const composer = new ComposerState();
    composer.insert('see ');
    const pasted = Array.from({ length: 20 }, (_, index) => `line ${index}`).join('\n');
    composer.insert(pasted);
    expect(composer.text).toBe(`see [pasted text #1: 20 lines, ${pasted.length} characters]`);
    expect(composer.take()).toBe(`see ${pasted}`);
    composer.insert('second');
    composer.take();
    composer.vertical(-1);
    expect(composer.text).toBe('second');
    composer.vertical(-1);
    expect(composer.text).toContain('[pasted text #1');
  });

  it('finds the @file and /command words at the cursor; // sends a literal slash', () => {
    const composer = new ComposerState();
    composer.insert('look at @src/cl');
    expect(composer.completionWord()).toEqual({ kind: 'file', query: 'src/cl', start: 8 });
    composer.clear();
    composer.insert('/res');
    expect(composer.completionWord()).toEqual({ kind: 'command', query: 'res', start: 0 });
    expect(parseSlashCommand('/model  mock/x ')).toEqual({ name: 'model', argument: 'mock/x' });
    expect(parseSlashCommand('//not a command')).toBeUndefined();
  });
});

describe('the transcript window', () => {
  function model(count: number): TranscriptModel {
    const transcript = new TranscriptModel();
    transcript.reset({ conversation: { id: 'conv_1', title: 't', workLocation: [{ executor: 'local', cwd: '/' }], rootSessionId: 'sess_1', createdAt: 0, updatedAt: 0 }, sessions: [], turns: [] });
    const items = Array.from({ length: count }, (_, index) => ({ seq: index + 1, item: { id: `item_${index}`, sessionId: 'sess_1', turnId: 'turn_1', createdAt: 0, completedAt: 0, status: 'completed', kind: 'assistant_message', model: 'm', text: `answer ${index}` } as Item }));
    transcript.prependStored(items, false);
    return transcript;
  }

  it('draws only the entries on screen, and scrolls by pages to the top', () => {
    const transcript = model(5000);
    const viewport = new Viewport(false);
    const size = { width: 80, height: 20 };
    let frame = viewport.frame(transcript.entries, undefined, size, 'sess_1');
    expect(frame.lines.at(-2)).toBe('answer 4999');
    expect(frame.atEnd).toBe(true);
    let anchor = viewport.scroll(transcript.entries, frame.top, 18, size, 'sess_1');
    frame = viewport.frame(transcript.entries, anchor, size, 'sess_1');
    expect(frame.lines).toContain('answer 4981');
    expect(frame.lines).not.toContain('answer 4999');
    // Each item is two lines (its text and a blank line): 5,000 items are 10,000 lines.
    let pages = 1;
    // Counts the frames drawn, the first included.
    while (!frame.atTop) {
      anchor = viewport.scroll(transcript.entries, frame.top, 18, size, 'sess_1');
      frame = viewport.frame(transcript.entries, anchor, size, 'sess_1');
      pages++;
    }
    expect(frame.lines[0]).toBe('answer 0');
    // The first page is the end; every PageUp moves 18 lines up the 9,980 lines above it.
    expect(pages).toBe(1 + Math.ceil((10_000 - 20) / 18) - 1);
  });
});

describe('openvaala tui', () => {
  it('refuses to run without a terminal, saying what to use instead', async () => {
    const notTerminal = { isTTY: false } as unknown as NodeJS.ReadStream & NodeJS.WriteStream;
    await expect(runTui({ cwd: '/' }, { stdin: notTerminal, stdout: notTerminal, stderr: notTerminal })).rejects.toThrow('the terminal UI needs a terminal; for scripts use: openvaala exec');
  });
});

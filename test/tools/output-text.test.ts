/**
 * The shared rules for long and terminal-shaped output: head and tail around one marker naming
 * the omitted range (the bounded collector of every executor, and the cut of tool results), and
 * the cleaning of terminal control before the model reads a result.
 */
import { describe, expect, it } from 'vitest';
import { OutputCollector } from '../../src/executors/output-collector.js';
import { truncateMiddle } from '../../src/executors/output-truncation.js';
import { cleanTerminalText, toolOutputForModel } from '../../src/tools/terminal-text.js';

/** `count` numbered lines of 33 bytes each (`line 00001 ` + 22 dots + line feed). */
function numberedLines(count: number): string {
  return Array.from({ length: count }, (_, index) => `line ${String(index + 1).padStart(5, '0')} ${'.'.repeat(22)}\n`).join('');
}

describe('truncateMiddle', () => {
  it('leaves text that fits alone', () => {
    expect(truncateMiddle('short\n', 100)).toEqual({ text: 'short\n', truncated: false });
  });

  it('keeps whole lines of head and tail and names the omitted bytes and lines, 1-based and inclusive', () => {
    const text = `${numberedLines(5000)}ERROR: the build failed\n`;
    const cut = truncateMiddle(text, 1000);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(1000);
    expect(cut.text.startsWith('line 00001 ')).toBe(true);
    expect(cut.text.endsWith('ERROR: the build failed\n')).toBe(true);
    const { omitted } = cut;
    expect(omitted).toBeDefined();
    const bytes = Buffer.from(text);
    // The omitted range starts and ends exactly where the kept text does.
    const [head, tail] = cut.text.split(/\[… .* …\]\n/);
    expect(omitted?.fromByte).toBe(Buffer.byteLength(head as string) + 1);
    expect(omitted?.toByte).toBe(bytes.length - Buffer.byteLength(tail as string));
    expect(omitted).toMatchObject({ totalBytes: bytes.length, totalLines: 5001 });
    expect(omitted?.fromLine).toBe((head as string).split('\n').length);
    expect(cut.text).toContain(`[… ${(omitted?.toByte ?? 0) - (omitted?.fromByte ?? 0) + 1} bytes omitted (bytes ${omitted?.fromByte}–${omitted?.toByte} of ${bytes.length}, lines ${omitted?.fromLine}–${omitted?.toLine} of 5001) …]`);
    expect(tail?.startsWith(`line ${String((omitted?.toLine ?? 0) + 1).padStart(5, '0')}`)).toBe(true);
  });

  it('never splits a multi-byte character', () => {
    const cut = truncateMiddle('é'.repeat(1000), 301);
    expect(cut.text).not.toContain('\uFFFD');
    expect(cut.omitted?.totalBytes).toBe(2000);
  });

  it('merges with an earlier cut, so one marker names the range of the original output', () => {
    const text = `${numberedLines(5000)}ERROR at the end\n`;
    const first = truncateMiddle(text, 20_000);
    const second = truncateMiddle(first.text, 2000);
    expect(second.text.match(/bytes omitted/g)).toHaveLength(1);
    const direct = Buffer.from(text);
    const [head, tail] = second.text.split(/\[… .* …\]\n/);
    expect(second.omitted?.fromByte).toBe(Buffer.byteLength(head as string) + 1);
    expect(second.omitted?.toByte).toBe(direct.length - Buffer.byteLength(tail as string));
    expect(second.omitted?.totalLines).toBe(5001);
    expect(tail?.startsWith(`line ${String((second.omitted?.toLine ?? 0) + 1).padStart(5, '0')}`)).toBe(true);
    expect(head?.split('\n').length).toBe(second.omitted?.fromLine);
  });
});

describe('OutputCollector', () => {
  it('keeps everything under the cap', () => {
    const collector = new OutputCollector(100);
    collector.add('one\n');
    collector.add('two\n');
    expect(collector.result()).toEqual({ output: 'one\ntwo\n', truncated: false, omittedBytes: 0 });
  });

  it('keeps head and tail of a runaway output in bounded memory, with the same marker as a cut of the whole', () => {
    const collector = new OutputCollector(4096);
    const chunk = numberedLines(2000);
    // 200 chunks of 66 KB: 13 MB of output, of which only the cap is ever held.
    for (let round = 0; round < 200; round += 1) collector.add(round === 199 ? `${chunk}FATAL: out of memory\n` : chunk);
    const result = collector.result();
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(4096 + 128);
    expect(result.output.startsWith('line 00001 ')).toBe(true);
    expect(result.output.endsWith('FATAL: out of memory\n')).toBe(true);
    expect(result.omitted).toMatchObject({ totalBytes: 200 * chunk.length + 'FATAL: out of memory\n'.length, totalLines: 400_001 });
    const [head, tail] = result.output.split(/\[… .* …\]\n/);
    expect(result.omitted?.fromByte).toBe(Buffer.byteLength(head as string) + 1);
    expect(result.omitted?.toByte).toBe((result.omitted?.totalBytes ?? 0) - Buffer.byteLength(tail as string));
    // The last omitted line is the one before the first kept line of the tail.
    const firstTailLine = Number(/^line (\d+)/.exec(tail as string)?.[1]);
    expect(firstTailLine, JSON.stringify(tail?.slice(0, 40))).toBeGreaterThan(1900);
    // Line numbers restart in every chunk: the tail is in the last one, after 199 chunks of 2000 lines.
    expect(result.omitted?.toLine).toBe(199 * 2000 + firstTailLine - 1);
  });

  it('streams output live until the cap has been streamed', () => {
    const streamed: string[] = [];
    const collector = new OutputCollector(10, (chunk) => streamed.push(chunk));
    for (let index = 0; index < 10; index += 1) collector.add('abcd');
    expect(streamed.join('')).toBe('abcdabcdabcd');
  });
});

describe('cleaning terminal output for the model', () => {
  it.each([
    ['colours', '\u001b[32mok\u001b[0m\n', 'ok\n'],
    ['bold and 256 colours', '\u001b[1;38;5;196mred\u001b[m', 'red'],
    ['an OSC-8 link', 'see \u001b]8;;https://example.com\u001b\\the docs\u001b]8;;\u001b\\ now', 'see the docs now'],
    ['a window title', '\u001b]0;my title\u0007prompt$ ', 'prompt$ '],
    ['cursor movement', 'a\u001b[2Cb\u001b[1A\u001b[?25l', 'ab'],
    ['a carriage-return progress line', 'progress 10%\rprogress 55%\rprogress 100%\ndone\n', 'progress 100%\ndone\n'],
    ['a shorter redraw after an erase-line sequence', 'downloading 1234 files\r\u001b[2Kdone\n', 'done\n'],
    ['a shorter redraw without erasing', 'abcdef\rxy\n', 'xycdef\n'],
    ['CRLF line endings', 'one\r\ntwo\r\n', 'one\ntwo\n'],
    ['backspaces (over-striking)', 'N\bNA\bAM\bME\b\b\b\bname', 'name'],
    ['bell, NUL, DEL and C1 controls', 'ding\u0007 nul\u0000 del\u007f c1\u0085 tab\tkept', 'ding nul del c1 tab\tkept'],
  ])('%s', (_name, raw, clean) => {
    expect(cleanTerminalText(raw)).toBe(clean);
  });

  it('keeps the line count, so line numbers of a marker stay right', () => {
    const raw = 'a\r\nb\u001b[K\n\u001b[31mc\u001b[0m\r\n';
    expect(cleanTerminalText(raw).split('\n')).toHaveLength(raw.split('\n').length);
  });

  it('drops an escape sequence cut off by truncation', () => {
    expect(cleanTerminalText('text \u001b[38;5')).toBe('text ');
  });

  it('cuts, then cleans, what the model reads', () => {
    const output = `\u001b[33mwarning\u001b[0m\n${numberedLines(3000)}\u001b[31merror: at the end\u001b[0m\n`;
    const text = toolOutputForModel(output, 2000);
    expect(text.startsWith('warning\nline 00001')).toBe(true);
    expect(text.endsWith('error: at the end\n')).toBe(true);
    expect(text).toMatch(/\n\[… \d+ bytes omitted \(bytes \d+–\d+ of \d+, lines \d+–\d+ of 3002\) …\]\n/);
    expect(text).not.toContain('\u001b');
  });
});

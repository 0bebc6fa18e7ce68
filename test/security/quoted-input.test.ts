/**
 * A message that quotes input (the parser's excerpt of a file that is not JSON, a damaged log
 * line) never carries the input's control characters: a binary file given to `import` used to
 * make the command line print its bytes, escape sequences included, to the terminal.
 */
import { describe, expect, it } from 'vitest';
import { convertCodexRollout } from '../../src/dao/codex-rollout.js';
import { parseArchive } from '../../src/dao/conversation-archive.js';
import { jsonSyntaxProblem, printableText } from '../../src/printable-text.js';
import { terminalText } from '../../src/tools/terminal-text.js';
import { parseLine } from '../../src/storage/file/line-reader.js';

/** The start of a zip file with a terminal's clear-screen sequence and bytes that are not UTF-8. */
const BINARY = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0xff, 0xfe, 0x07, 0x41]).toString('utf8');
/** What a terminal would act on, or what shows no input. */
// Control characters are what this pattern looks for.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffd]/;

function messageOf(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an error');
}

describe('printableText', () => {
  it('writes control characters, bytes that were not text and lone surrogates as escapes, and keeps the rest', () => {
    expect(printableText('a\u001b[2Jb\u0000c\u0085d\ufffde\u202ef')).toBe('a\\u001b[2Jb\\u0000c\\u0085d\\ufffde\\u202ef');
    expect(printableText('x\ud800y')).toBe('x\\ud800y');
    expect(printableText('tab\tline\nemoji 😀 ümlaut 日本')).toBe('tab\tline\nemoji 😀 ümlaut 日本');
  });

  it('says what JSON.parse found wrong on one line, with its excerpt printable', () => {
    let thrown: unknown;
    try {
      JSON.parse(BINARY);
    } catch (error) {
      thrown = error;
    }
    const problem = jsonSyntaxProblem(thrown);
    expect(problem).toContain("Unexpected token 'P'");
    expect(problem).toContain('\\u001b[2J');
    expect(problem).not.toMatch(UNPRINTABLE);
    expect(problem).not.toContain('\n');
    expect(jsonSyntaxProblem('plain')).toBe('plain');
  });
});

describe('terminalText', () => {
  it('removes escape sequences (title, screen, cursor, colour, hyperlink) and control characters, keeping the text', () => {
    expect(terminalText('a\u001b]0;HACKED TITLE\u0007b')).toBe('ab');
    expect(terminalText('c\u001b[2J\u001b[Hd\u001b[31mred\u001b[0m')).toBe('cdred');
    expect(terminalText('e\u009b31mf\u0000g\u007fh\u0008i')).toBe('efghi');
    expect(terminalText('link \u001b]8;;http://x\u0007here\u001b]8;;\u0007')).toBe('link here');
  });

  it('makes a carriage return a line break, so the line it would overwrite stays visible, and keeps tabs and line feeds', () => {
    expect(terminalText('secret\rshown\r\nnext\ttab\n')).toBe('secret\nshown\nnext\ttab\n');
    expect(terminalText('ümlaut 日本 😀')).toBe('ümlaut 日本 😀');
  });

  it('shows bidirectional overrides and isolates as code points, so a command cannot read as another (Trojan Source)', () => {
    // Shown as is, "rm -rf ~ #" would read with its end reversed.
    expect(terminalText('echo safe \u202e# ~ fr- mr\u202c')).toBe('echo safe <U+202E># ~ fr- mr<U+202C>');
    expect(terminalText('a\u2066b\u2069c\u202ad\u202de')).toBe('a<U+2066>b<U+2069>c<U+202A>d<U+202D>e');
    // Right-to-left text and its marks are text, kept as they are.
    expect(terminalText('שלום \u200fעולם')).toBe('שלום \u200fעולם');
  });
});

describe('parsers that quote the input they refuse', () => {
  it('an archive that is a binary file', () => {
    const message = messageOf(() => parseArchive(BINARY));
    expect(message).toContain('line 1: not valid JSON');
    expect(message).not.toMatch(UNPRINTABLE);
  });

  it('a Codex rollout that is a binary file', () => {
    const message = messageOf(() => convertCodexRollout(BINARY, { agent: 'build', model: 'mock/mock-model' }));
    expect(message).toContain('not valid JSON');
    expect(message).not.toMatch(UNPRINTABLE);
  });

  it('a log line of binary garbage, whose reason the damage reports show', () => {
    const parsed = parseLine(Buffer.from(BINARY));
    expect(parsed.valid).toBe(false);
    expect(parsed.valid ? '' : parsed.reason).toContain('not valid JSON');
    expect(parsed.valid ? '' : parsed.reason).not.toMatch(UNPRINTABLE);
  });
});

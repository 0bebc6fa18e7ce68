/**
 * Styled terminal text for the terminal UI: spans with a style, lines of spans, wrapping to a
 * width in terminal cells, and conversion to ANSI SGR escapes (ECMA-48). Colours are left out
 * when `NO_COLOR` is set (https://no-color.org); bold, dim, italic and inverse stay, since
 * they are not colours and keep the cursor and headings visible.
 */
import { terminalText } from '../tools/terminal-text.js';

/** Colours the UI uses (the 8 standard ANSI colours plus grey). */
export type ColorName = 'red' | 'green' | 'yellow' | 'blue' | 'magenta' | 'cyan' | 'white' | 'gray';

/** How a span looks. */
export interface TextStyle {
  color?: ColorName;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
}

/** A run of text in one style (no newlines). */
export interface Span {
  text: string;
  style?: TextStyle;
}

/** One line of styled text. */
export type StyledLine = Span[];

const COLOR_CODES: Record<ColorName, number> = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, white: 37, gray: 90 };

/** True when colours must be left out (`NO_COLOR` set to any non-empty value). */
export function colorDisabled(environment: NodeJS.ProcessEnv = process.env): boolean {
  return (environment.NO_COLOR ?? '') !== '';
}

/**
 * Terminal cells a code point takes: 0 for combining marks and zero-width characters, 2 for
 * East Asian wide and full-width characters and most emoji (Unicode UAX #11), else 1.
 */
export function codePointWidth(codePoint: number): number {
  if (codePoint === 0x200b || codePoint === 0x200d || (codePoint >= 0x300 && codePoint <= 0x36f) || (codePoint >= 0xfe00 && codePoint <= 0xfe0f)) return 0;
  if (codePoint < 0x1100) return 1;
  if (
    codePoint <= 0x115f ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf && codePoint !== 0x303f) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1faff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Terminal cells a string takes (no escapes in it). */
export function textWidth(text: string): number {
  let width = 0;
  for (const character of text) width += codePointWidth(character.codePointAt(0) ?? 0);
  return width;
}

/** Terminal cells a line takes. */
export function lineWidth(line: StyledLine): number {
  return line.reduce((sum, span) => sum + textWidth(span.text), 0);
}

/** The plain text of a line. */
export function plainText(line: StyledLine): string {
  return line.map((span) => span.text).join('');
}

/**
 * Tabs become spaces (to the next multiple of 4) and other control characters are dropped, so
 * that model or command output cannot move the cursor or change the terminal's state.
 */
export function sanitize(text: string): string {
  // ANSI sequences in command output are removed rather than interpreted; a carriage return
  // inside one line of the screen would move the cursor, so it is dropped here.
  return terminalText(text.replace(/\r/g, '')).replace(/\t/g, '    ');
}

/** A character {@link sanitize} would remove or change: a control character (C0, DEL, C1). */
// eslint-disable-next-line no-control-regex
const NEEDS_SANITIZING = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Wraps a line to `width` cells: at spaces when a word fits, else inside the word. Each
 * continuation line starts with `continuation` (for hanging indents and gutters), which is
 * counted in the width.
 * @returns at least one line
 */
export function wrapLine(line: StyledLine, width: number, continuation: StyledLine = []): StyledLine[] {
  const limit = Math.max(1, width);
  if (lineWidth(line) <= limit) return [line];
  const continuationWidth = lineWidth(continuation);
  // Words keep their styles: a word is a list of (character, style) cells.
  type Cell = { character: string; style: TextStyle | undefined; width: number };
  const cells: Cell[] = [];
  for (const span of line) for (const character of span.text) cells.push({ character, style: span.style, width: codePointWidth(character.codePointAt(0) ?? 0) });
  const lines: StyledLine[] = [];
  let current: Cell[] = [];
  let currentWidth = 0;
  let lineLimit = limit;
  const flush = () => {
    lines.push([...(lines.length > 0 ? continuation : []), ...toSpans(current)]);
    current = [];
    currentWidth = 0;
    lineLimit = Math.max(1, limit - continuationWidth);
  };
  let index = 0;
  while (index < cells.length) {
    // The next word, with the spaces that follow it.
    let end = index;
    while (end < cells.length && cells[end]?.character !== ' ') end++;
    while (end < cells.length && cells[end]?.character === ' ') end++;
    const word = cells.slice(index, end);
    const wordWidth = word.reduce((sum, cell) => sum + cell.width, 0);
    const trimmedWidth = wordWidth - word.filter((cell, position) => cell.character === ' ' && word.slice(position).every((rest) => rest.character === ' ')).length;
    if (currentWidth + trimmedWidth <= lineLimit) {
      current.push(...word);
      currentWidth += wordWidth;
    } else if (trimmedWidth <= lineLimit && current.length > 0) {
      flush();
      current.push(...word);
      currentWidth += wordWidth;
    } else {
      for (const cell of word) {
        if (currentWidth + cell.width > lineLimit && current.length > 0) {
          if (cell.character === ' ') continue;
          flush();
        }
        current.push(cell);
        currentWidth += cell.width;
      }
    }
    index = end;
  }
  if (current.length > 0 || lines.length === 0) flush();
  return lines.map(trimEnd);

  function toSpans(row: Cell[]): StyledLine {
    const spans: StyledLine = [];
    for (const cell of row) {
      const last = spans.at(-1);
      if (last && last.style === cell.style) last.text += cell.character;
      else spans.push({ text: cell.character, ...(cell.style ? { style: cell.style } : {}) });
    }
    return spans;
  }
}

function trimEnd(line: StyledLine): StyledLine {
  const copy = line.map((span) => ({ ...span }));
  while (copy.length > 0) {
    const last = copy.at(-1) as Span;
    const trimmed = last.text.replace(/ +$/, '');
    if (trimmed !== '' || last.style?.inverse) {
      if (!last.style?.inverse) last.text = trimmed;
      break;
    }
    copy.pop();
  }
  return copy;
}

/** Cuts a line to `width` cells, ending with `…` when something was cut. */
export function truncateLine(line: StyledLine, width: number): StyledLine {
  if (lineWidth(line) <= width) return line;
  const result: StyledLine = [];
  let used = 0;
  for (const span of line) {
    let text = '';
    for (const character of span.text) {
      const cell = codePointWidth(character.codePointAt(0) ?? 0);
      if (used + cell > width - 1) break;
      text += character;
      used += cell;
    }
    if (text) result.push({ text, ...(span.style ? { style: span.style } : {}) });
    if (used >= width - 1) break;
  }
  result.push({ text: '…' });
  return result;
}

function sgr(style: TextStyle, color: boolean): string {
  const codes: number[] = [];
  if (style.bold) codes.push(1);
  if (style.dim) codes.push(2);
  if (style.italic) codes.push(3);
  if (style.underline) codes.push(4);
  if (style.inverse) codes.push(7);
  if (color && style.color) codes.push(COLOR_CODES[style.color]);
  return codes.length > 0 ? `\u001b[${codes.join(';')}m` : '';
}

/**
 * The line as text with ANSI SGR escapes, each styled span closed with a reset; control
 * characters in the spans' text are removed (see {@link sanitize}).
 * @param color false leaves colours out (`NO_COLOR`)
 */
export function toAnsi(line: StyledLine, color: boolean): string {
  let text = '';
  for (const span of line) {
    const open = span.style ? sgr(span.style, color) : '';
    // The last check before the terminal: a span built from a title or a status that skipped sanitize.
    const shown = NEEDS_SANITIZING.test(span.text) ? sanitize(span.text) : span.text;
    text += open ? `${open}${shown}\u001b[0m` : shown;
  }
  return text;
}

/** Splits plain text into lines of one span each, in one style. */
export function plainLines(text: string, style?: TextStyle): StyledLine[] {
  return sanitize(text.replace(/\r\n?/g, '\n'))
    .split('\n')
    .map((line) => (line === '' ? [] : [{ text: line, ...(style ? { style } : {}) }]));
}

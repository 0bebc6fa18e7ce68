/**
 * Turning what a program wrote for a terminal into plain text: for the model, the text a
 * terminal would finally show, without the control sequences that drew it; for a person
 * reading the command line, the same without the redrawing (`terminalText`).
 *
 * - ANSI/VT escape sequences (colours, OSC-8 links, cursor movement, titles) are removed
 *   with `strip-ansi`; an "erase line" sequence (`ESC [ K`, `ESC [ 2 K`) also clears what the
 *   line held so far, as a progress bar redrawn with it would show.
 * - A carriage return moves back to the start of the line and a backspace one character
 *   left; what comes next overwrites, so a progress line collapses to its final state
 *   (`10%\r55%\r100%` → `100%`) and over-striking (`a\bb`) leaves the last character.
 *   A `\r\n` line ending is a plain line break.
 * - Other C0 control characters (BEL, NUL, form feed…), DEL and C1 controls are dropped;
 *   tab and line feed are kept.
 */
/* eslint-disable no-control-regex -- matching control characters is what this module is for */
import stripAnsi from 'strip-ansi';
import { showBidiControls } from '../bidi-controls.js';
import { truncateMiddle } from '../executors/output-truncation.js';

/** Erase in line (to the end, or the whole line): treated as clearing the line so far. */
const ERASE_LINE = /\u001b\[[02]?K|\u009b[02]?K/g;
/** Stands for an erase-line sequence while the other sequences are stripped (a C0 control that strip-ansi keeps). */
const ERASE_PLACEHOLDER = '\u0001';
/** Control characters dropped after the line editing: C0 except tab/LF, DEL, C1. */
const DROPPED_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** An escape sequence cut off at the end of a text (the rest was truncated away). */
const DANGLING_ESCAPE = /\u001b(?:\[[0-9;?]*|\][^\u0007\u001b]*)?$/;

/** Applies carriage returns, backspaces and erase-line placeholders to one line. */
function renderLine(line: string): string {
  if (!/[\r\b\u0001]/.test(line)) return line;
  const cells: string[] = [];
  let cursor = 0;
  for (const character of line) {
    if (character === '\r') cursor = 0;
    else if (character === '\b') cursor = Math.max(0, cursor - 1);
    else if (character === ERASE_PLACEHOLDER) cells.length = cursor;
    else {
      cells[cursor] = character;
      cursor += 1;
    }
  }
  // A cursor moved past the end by nothing but text leaves no holes; holes only come from an
  // erase followed by a backward move, and show as spaces.
  return Array.from(cells, (cell) => cell ?? ' ').join('');
}

/**
 * The plain text a terminal would show for `text` (see the module comment). Line breaks are
 * kept, so line numbers stay those of the original output.
 */
export function cleanTerminalText(text: string): string {
  // A literal SOH in the output is dropped first, so that only erase-line sequences become one.
  const withPlaceholders = text.replace(/\u0001/g, '').replace(DANGLING_ESCAPE, '').replace(ERASE_LINE, ERASE_PLACEHOLDER);
  const stripped = stripAnsi(withPlaceholders);
  const lines = stripped.split('\n').map((line) => renderLine(line.endsWith('\r') ? line.slice(0, -1) : line));
  return lines.join('\n').replace(DROPPED_CONTROLS, '');
}

/**
 * Text written elsewhere (an answer, a command's output, a title) as a person should see it on
 * a terminal: escape sequences and control characters removed as {@link cleanTerminalText}
 * removes them, but carriage returns and backspaces are not replayed: a carriage return becomes
 * a line break, so nothing the text would draw over stays hidden (an approval question shows
 * the whole command, not the part written last). Bidirectional overrides and isolates are
 * shown as `<U+…>` (see `showBidiControls`). Tabs and line feeds are kept.
 */
export function terminalText(text: string): string {
  return showBidiControls(stripAnsi(text.replace(DANGLING_ESCAPE, '')).replace(/\r\n?/g, '\n').replace(DROPPED_CONTROLS, ''));
}


/**
 * {@link terminalText} kept to one line, for a table cell, a header or a list entry: a line
 * break is written `\n` and a tab as a space, so a directory or title holding them cannot
 * break the rows around it.
 */
export function terminalLine(text: string): string {
  return terminalText(text.replace(/\r\n|\r|\n/g, '\\n').replace(/\t/g, ' '));
}

/**
 * The text of a tool result as the model reads it: cut to `limitBytes` (head and tail around
 * one marker naming the omitted bytes and lines of the output as stored, see
 * `truncateMiddle`), then cleaned of terminal control (`cleanTerminalText`). This is the one
 * place the model's cap is applied; stored items keep the output as the tool produced it.
 */
export function toolOutputForModel(output: string, limitBytes: number): string {
  return cleanTerminalText(truncateMiddle(output, limitBytes).text);
}

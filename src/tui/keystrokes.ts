/**
 * Splitting one read of the terminal into keys. Ink's `useInput` reports a chunk without escape
 * sequences as one input, so keys typed faster than the UI reads them (or sent together by a
 * remote terminal) would reach it as text with control characters inside: an Enter or a
 * Ctrl+S after a word would be lost. Each control character is reported here as Ink reports it
 * when it arrives alone (Ink's `parse-keypress`: Ctrl+letter as `ctrl` with the letter, Tab,
 * Backspace, Delete, Return), and the runs of text between them as text.
 */
import type { Key } from 'ink';

const NO_KEY: Key = { upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false, return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false, super: false, hyper: false, capsLock: false, numLock: false };

// Escape (0x1b) is left out: Ink splits escape sequences itself.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001a\u001c-\u001f\u007f]/;

/** True when `input` (one input as Ink reports it) holds a control character among other characters. */
export function holdsSeveralKeys(input: string): boolean {
  return input.length > 1 && CONTROL.test(input);
}

/** The input and key Ink reports for one control character arriving alone. */
function controlKey(character: string): [string, Key] {
  const code = character.charCodeAt(0);
  if (character === '\r') return [character, { ...NO_KEY, return: true }];
  if (character === '\n') return [character, NO_KEY];
  if (character === '\t') return ['', { ...NO_KEY, tab: true }];
  if (character === '\b') return ['', { ...NO_KEY, backspace: true }];
  if (character === '\u007f') return ['', { ...NO_KEY, delete: true }];
  if (code === 0) return ['`', { ...NO_KEY, ctrl: true }];
  if (code <= 0x1a) return [String.fromCharCode(code + 0x60), { ...NO_KEY, ctrl: true }];
  return [character, NO_KEY];
}

/**
 * Splits one input into the keys it holds, in order: each control character as its own key
 * (see the module comment), the text between them as one input each.
 * @returns pairs of `[input, key]` as Ink's `useInput` would have reported them one by one
 */
export function splitKeystrokes(input: string): Array<[string, Key]> {
  const keys: Array<[string, Key]> = [];
  let text = '';
  for (const character of input) {
    if (!CONTROL.test(character)) {
      text += character;
      continue;
    }
    if (text !== '') keys.push([text, NO_KEY]);
    text = '';
    keys.push(controlKey(character));
  }
  if (text !== '') keys.push([text, NO_KEY]);
  return keys;
}

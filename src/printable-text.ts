/**
 * Messages that quote input must not carry the input's control characters to a terminal: a
 * binary file given where JSON was expected made the parser's message quote `ESC [ 2 J` (clear
 * the screen) and NUL bytes, which the command line then printed. This module writes such
 * characters as visible `\u` escapes; the rest of the text is kept as it is. (Text shown as
 * text, such as answers and command output, is cleaned by `terminalText` of
 * `tools/terminal-text.ts` instead.)
 */

/**
 * C0 controls other than tab and line feed, DEL, C1 controls, lone surrogates, the byte-order
 * mark, the line and paragraph separators, the bidirectional controls, and U+FFFD (what UTF-8
 * decoding makes of bytes that are not text).
 */
// Matching control characters is the point of this pattern.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffd]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with every character a terminal would act on or that shows no input (see
 * {@link UNPRINTABLE}) written as `\uXXXX`; tabs and line feeds are kept.
 * @param text any text, e.g. a message quoting a file's bytes
 * @returns the same text, safe to print on a terminal
 */
export function printableText(text: string): string {
  return text.replace(UNPRINTABLE, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * What `JSON.parse` said was wrong, with its excerpt of the input made printable (see
 * {@link printableText}) and on one line: the parser quotes up to a few dozen characters of the
 * text it was given, which may be a binary file's bytes.
 * @param error what `JSON.parse` threw (a SyntaxError), or anything else thrown while parsing
 * @returns the message, e.g. `Unexpected token 'P', "PK\u0003\u0004" is not valid JSON`
 */
export function jsonSyntaxProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return printableText(message).replace(/\n/g, '\\n');
}


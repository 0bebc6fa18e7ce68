/**
 * The byte-preservation rules of `apply_patch` (docs/tools.md, "apply_patch"), one row per
 * edge of a file: final line break present or absent, LF / CRLF / mixed / lone CR line
 * endings, byte-order mark, empty file, file of only a line break, trailing whitespace, and a
 * large file. Each row updates `file.txt` (holding `input`) with the update-section lines of
 * `patch`, and the file must then hold exactly `expected` — or, for a row with `rejected`,
 * the patch must fail with a message matching it and the file must keep its bytes.
 */

/** One edge case of the table. */
export interface EdgeCase {
  /** Short name, used as the test title. */
  name: string;
  /** Content of `file.txt` before the patch (JavaScript escapes spell every byte). */
  input: string;
  /** Lines of the `*** Update File: file.txt` section, after its header. */
  patch: string[];
  /** Content of `file.txt` afterwards. */
  expected?: string;
  /** For a patch that must be refused: what its error says. `file.txt` keeps `input`. */
  rejected?: RegExp;
}

const LARGE_LINE_COUNT = 130_000;
const largeFile = (changed?: number): string => {
  const lines: string[] = [];
  for (let line = 1; line <= LARGE_LINE_COUNT; line++) lines.push(line === changed ? 'changed' : String(line));
  return `${lines.join('\n')}\n`;
};

/** The table. */
export const EDGE_CASES: readonly EdgeCase[] = [
  // Final line break.
  { name: 'no final line break: the updated file ends with one (first line changed)', input: 'line1\nline2\nline3', patch: ['@@', '-line1', '+LINE1'], expected: 'LINE1\nline2\nline3\n' },
  { name: 'no final line break, last line changed', input: 'a\nb', patch: ['@@', ' a', '-b', '+B'], expected: 'a\nB\n' },
  { name: 'no final line break, last line replaced by two', input: 'a\nb', patch: ['@@', '-b', '+B1', '+B2'], expected: 'a\nB1\nB2\n' },
  { name: 'no final line break, lines added after the last one', input: 'a\nb', patch: ['@@', ' b', '+c'], expected: 'a\nb\nc\n' },
  { name: 'no final line break, pure addition appends at the end', input: 'a\nb', patch: ['@@', '+c', '+d'], expected: 'a\nb\nc\nd\n' },
  { name: 'no final line break, last line removed: the line before keeps its break', input: 'a\nb\nc', patch: ['@@', ' b', '-c'], expected: 'a\nb\n' },
  { name: 'no final line break, End of File marker', input: 'a\nb', patch: ['@@', '-b', '+B', '*** End of File'], expected: 'a\nB\n' },
  { name: 'final line break kept', input: 'a\nb\n', patch: ['@@', '-a', '+A'], expected: 'A\nb\n' },
  { name: 'final line break kept when the last line changes', input: 'a\nb\n', patch: ['@@', '-b', '+B'], expected: 'a\nB\n' },
  { name: 'trailing blank lines kept', input: 'a\n\n\n', patch: ['@@', '-a', '+A'], expected: 'A\n\n\n' },
  // Line endings.
  { name: 'CRLF file: added lines get CRLF', input: 'a\r\nb\r\nc\r\n', patch: ['@@', ' a', '-b', '+B', '+B2', ' c'], expected: 'a\r\nB\r\nB2\r\nc\r\n' },
  { name: 'CRLF file without final line break, lines appended: each ends with CRLF', input: 'a\r\nb', patch: ['@@', ' b', '+c'], expected: 'a\r\nb\r\nc\r\n' },
  { name: 'CRLF patch on an LF file writes LF', input: 'a\nb\n', patch: ['@@', '-a\r', '+A\r', ' b\r'], expected: 'A\nb\n' },
  { name: 'mixed file: each untouched line keeps its ending', input: 'one\r\ntwo\nthree\r\nfour\n', patch: ['@@', ' two', '-three', '+THREE', ' four'], expected: 'one\r\ntwo\nTHREE\r\nfour\n' },
  { name: "mixed file: an added line gets the first line's ending, even after an LF line", input: 'one\r\ntwo\nthree\r\n', patch: ['@@', ' two', '+two and a half'], expected: 'one\r\ntwo\ntwo and a half\r\nthree\r\n' },
  { name: 'lone CR inside an untouched line kept', input: 'a\rb\nc\nd\n', patch: ['@@', '-c', '+C'], expected: 'a\rb\nC\nd\n' },
  { name: 'lone CR at the end of the file kept (then the final LF)', input: 'a\nb\r', patch: ['@@', '-a', '+A'], expected: 'A\nb\r\n' },
  { name: 'CR before CRLF kept', input: 'a\r\r\nb\n', patch: ['@@', '-b', '+B'], expected: 'a\r\r\nB\r\n' },
  { name: 'CR-only file (no LF anywhere): each CR is a line break, added lines get CR', input: 'a\rb\rc\r', patch: ['@@', ' a', '-b', '+B', '+B2'], expected: 'a\rB\rB2\rc\r' },
  { name: 'CR-only file without final line break: it ends with CR', input: 'a\rb', patch: ['@@', '-a', '+A'], expected: 'A\rb\r' },
  { name: 'CR-only file: a line that is not there is still refused', input: 'a\rb\r', patch: ['@@', '-a\rb', '+x'], rejected: /lines were not found/ },
  { name: 'a file with one LF is not CR-only: its lone CRs stay inside lines', input: 'a\rb\rc\n', patch: ['@@', '-b', '+B'], rejected: /lines were not found/ },
  // Byte-order mark.
  { name: 'byte-order mark kept', input: '\uFEFFa\nb\n', patch: ['@@', '-a', '+A'], expected: '\uFEFFA\nb\n' },
  { name: 'byte-order mark kept in a CRLF file without final line break', input: '\uFEFFa\r\nb', patch: ['@@', '-b', '+B'], expected: '\uFEFFa\r\nB\r\n' },
  // Empty and nearly empty files.
  { name: 'empty file: added lines end with LF', input: '', patch: ['@@', '+x', '+y'], expected: 'x\ny\n' },
  { name: 'empty file with a byte-order mark', input: '\uFEFF', patch: ['@@', '+x'], expected: '\uFEFFx\n' },
  { name: 'file of only a line break: lines appended after it', input: '\n', patch: ['@@', '+x'], expected: '\nx\n' },
  { name: 'file of only a line break: its empty line replaced', input: '\n', patch: ['@@', '-', '+x'], expected: 'x\n' },
  { name: 'file of only CRLF: added line gets CRLF', input: '\r\n', patch: ['@@', '+x'], expected: '\r\nx\r\n' },
  // Trailing whitespace.
  { name: 'trailing whitespace of untouched and context lines kept', input: 'a  \nb\t\nc \n', patch: ['@@', ' a', '-b', '+B', ' c'], expected: 'a  \nB\nc \n' },
  { name: 'trailing whitespace of added lines written as sent', input: 'a\nb\n', patch: ['@@', '-b', '+B  '], expected: 'a\nB  \n' },
  { name: 'a removed line matched without its trailing whitespace is removed whole', input: 'a\nb   \nc\n', patch: ['@@', '-b', '+B'], expected: 'a\nB\nc\n' },
  // Size.
  { name: 'one line of a 130,000-line file', input: largeFile(), patch: ['@@', ' 1', '-2', '+changed', ' 3'], expected: largeFile(2) },
];

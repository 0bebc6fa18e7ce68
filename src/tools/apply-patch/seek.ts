/**
 * Fuzzy line matching for the Codex `apply_patch` format: where in a file does a run of
 * patch lines belong? Models copy context imperfectly, so — like Codex's applier — matching
 * runs in passes of decreasing strictness, and the first pass that finds a position wins:
 *
 * 1. exact text;
 * 2. trailing whitespace ignored;
 * 3. leading and trailing whitespace ignored;
 * 4. additionally, typographic punctuation normalised to ASCII (dashes, curly quotes,
 *    non-breaking and other special spaces), because models tend to write ASCII where the
 *    file has `–`, `“` or U+00A0 and the other way round.
 */

/** Characters treated as their ASCII counterpart by the last matching pass. */
const ASCII_EQUIVALENTS: ReadonlyMap<string, string> = new Map([
  // hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign
  ...['\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212'].map((dash) => [dash, '-'] as const),
  // left/right single quotes, low-9 and high-reversed-9 single quotes
  ...['\u2018', '\u2019', '\u201A', '\u201B'].map((quote) => [quote, "'"] as const),
  // left/right double quotes, low-9 and high-reversed-9 double quotes
  ...['\u201C', '\u201D', '\u201E', '\u201F'].map((quote) => [quote, '"'] as const),
  // no-break space, en/em and other fixed-width spaces, narrow no-break, math and ideographic spaces
  ...['\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000'].map(
    (space) => [space, ' '] as const,
  ),
]);
const SPECIAL_CHARACTERS = new RegExp(`[${[...ASCII_EQUIVALENTS.keys()].join('')}]`, 'gu');

/**
 * Trims `text` and replaces typographic dashes, quotes and spaces with ASCII ones.
 * @returns the text as the most lenient matching pass compares it
 */
export function normaliseForMatching(text: string): string {
  return text.trim().replace(SPECIAL_CHARACTERS, (character) => ASCII_EQUIVALENTS.get(character) ?? character);
}

/**
 * The lines of a file as `seekSequence` reads them: an array of strings, or a table that
 * makes each line on demand (so a large file is not split into millions of strings).
 */
export interface LineSource {
  readonly length: number;
  /** The line at `index` (0-based), without its line break. */
  at(index: number): string | undefined;
  /** Optional fast exact comparison of the line at `index` with `text`, without making the line. */
  equals?(index: number, text: string): boolean;
}

type LineComparison = (lines: LineSource, index: number, patchLine: string) => boolean;

const lineAt = (lines: LineSource, index: number): string => lines.at(index) ?? '';

const MATCHING_PASSES: readonly LineComparison[] = [
  (lines, index, patchLine) => (lines.equals !== undefined ? lines.equals(index, patchLine) : lineAt(lines, index) === patchLine),
  (lines, index, patchLine) => lineAt(lines, index).trimEnd() === patchLine.trimEnd(),
  (lines, index, patchLine) => lineAt(lines, index).trim() === patchLine.trim(),
  (lines, index, patchLine) => normaliseForMatching(lineAt(lines, index)) === normaliseForMatching(patchLine),
];

function matchesAt(lines: LineSource, pattern: readonly string[], position: number, same: LineComparison): boolean {
  for (let offset = 0; offset < pattern.length; offset++) {
    if (!same(lines, position + offset, pattern[offset]!)) return false;
  }
  return true;
}

/**
 * Finds where `pattern` occurs in `lines`, at or after `start`, trying the passes described
 * above in order (a stricter match later in the file beats a looser one earlier).
 *
 * With `atEndOfFile` (the chunk ended with `*** End of File`), the pattern must end the file;
 * trailing blank lines of the file are tolerated after it.
 *
 * The cost is linear in the number of lines times the pattern's length (per pass).
 *
 * @param lines the file's lines, without line endings (an array or a `LineSource`)
 * @param pattern the lines to find; an empty pattern matches at `start`
 * @param start first index a match may begin at
 * @returns the index of the first matched line, or undefined when there is no match
 */
export function seekSequence(lines: LineSource, pattern: readonly string[], start: number, atEndOfFile: boolean): number | undefined {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return undefined;
  const endCandidates = atEndOfFile ? endOfFileCandidates(lines, pattern.length, start) : [];
  const lastPosition = lines.length - pattern.length;
  for (const same of MATCHING_PASSES) {
    if (atEndOfFile) {
      const found = endCandidates.find((position) => matchesAt(lines, pattern, position, same));
      if (found !== undefined) return found;
      continue;
    }
    for (let position = Math.max(0, start); position <= lastPosition; position += 1) {
      if (matchesAt(lines, pattern, position, same)) return position;
    }
  }
  return undefined;
}

function endOfFileCandidates(lines: LineSource, patternLength: number, start: number): number[] {
  const positions: number[] = [];
  let end = lines.length;
  for (;;) {
    const position = end - patternLength;
    if (position >= start && position >= 0) positions.push(position);
    if (end === 0 || lineAt(lines, end - 1).trim() !== '') break;
    end -= 1;
  }
  return positions;
}

/**
 * Redaction of one range of a longer text (a piece of a file that a client reads in pieces,
 * the part of a stream that may go out now, or a whole text). Redacting the piece on its own
 * would miss a value its edges cut, and hand out the rest of it: the piece is therefore
 * redacted within the text around it, and what it shows depends only on the whole text,
 * never on where the piece begins.
 *
 * The rule, for a whole text: every place where a form of a value occurs is hidden, including
 * occurrences that overlap (so no value's end survives next to another value: with values
 * `abcdef` and `defghi`, `abcdefghi` is one `***`), and so is every extra span the caller
 * names (a piece of a value that a cut left: see `cut-pieces.ts`); a run of overlapping
 * hidden spans becomes one `***`, written at the run's first position. A range `[from, to)`
 * shows its part of that: the characters of it outside every run, and a `***` for each run
 * that begins inside it. Ranges that follow one another thus concatenate to the redacted
 * whole text, and whether a position is hidden, or begins a run, is decided by the text at
 * most one longest form's length around it: that much context on each side suffices.
 */

import type { FormMatcher } from './form-matcher.js';

/** A span `[start, end)` of a text, positions in UTF-16 units (or bytes, for byte ranges). */
export interface Span {
  start: number;
  end: number;
}

/**
 * The part `[from, to)` of `text`, redacted by the rule of the module comment.
 * @param text the range with its context: at least the longest form's length before `from`
 *   (or from the start of the whole text) and after `to` (or to its end)
 * @param forms the forms to hide
 * @param from first position of the range in `text`
 * @param to end of the range in `text` (exclusive)
 * @param replacement what a run of hidden spans becomes
 * @param extra further spans of `text` to hide (pieces of values left by cuts), in any order
 */
export function redactRange(text: string, forms: FormMatcher, from: number, to: number, replacement: string, extra: readonly Span[] = []): string {
  const parts: string[] = [];
  // Positions of the range before `cursor` are given out (or hidden) already.
  let cursor = from;
  // End of the furthest hidden span seen: a span starting before it extends the same run.
  let runEnd = 0;
  const hide = (start: number, end: number): void => {
    if (start >= runEnd && start >= from) parts.push(text.slice(cursor, start), replacement);
    runEnd = Math.max(runEnd, end);
    cursor = Math.max(cursor, Math.min(runEnd, to));
  };
  const spans = extra.filter((span) => span.end > span.start).sort((a, b) => a.start - b.start);
  let next = 0;
  const scanner = forms.scanner(text);
  // Each position is searched from, not only the ends of matches: overlapping occurrences must be seen too.
  for (let match = scanner.next(0); match !== undefined && match.index < to; match = scanner.next(match.index + 1)) {
    // Extra spans and occurrences are taken in the order of their starts, so runs are built left to right.
    for (; next < spans.length && (spans[next] as Span).start <= match.index; next++) hide((spans[next] as Span).start, (spans[next] as Span).end);
    hide(match.index, match.index + match.length);
  }
  for (; next < spans.length && (spans[next] as Span).start < to; next++) hide((spans[next] as Span).start, (spans[next] as Span).end);
  // Nothing hidden in the range: the text as it is, without a copy when the range is all of it.
  if (parts.length === 0 && cursor === from) return from === 0 && to === text.length ? text : text.slice(from, to);
  if (cursor < to) parts.push(text.slice(cursor, to));
  return parts.join('');
}

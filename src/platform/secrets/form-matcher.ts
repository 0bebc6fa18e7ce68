/**
 * Finding secret values' forms in text: at each position the longest form that occurs there,
 * the leftmost such position first. One regular expression (an alternation, longest first)
 * finds the usual short forms in one pass; V8 refuses to compile a literal of some tens of
 * thousands of characters ("Regular expression too large"), and values may have 65,536, their
 * escaped forms more, so forms longer than {@link LONG_FORM} are searched for with `indexOf`.
 */

/** Forms longer than this many UTF-16 units are not put in the regular expression. */
export const LONG_FORM = 1024;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A form found in a text. */
export interface FormMatch {
  index: number;
  length: number;
}

/** Searches one text; positions asked for must not decrease (see {@link FormMatcher.scanner}). */
export interface FormScanner {
  /** The leftmost match at or after `from`, the longest form where several begin, if any. */
  next(from: number): FormMatch | undefined;
}

/** A fixed set of forms to find. */
export class FormMatcher {
  private readonly pattern: RegExp | undefined;
  private readonly long: string[];

  /** @param forms the forms (non-empty strings) */
  constructor(forms: Iterable<string>) {
    const sorted = [...new Set(forms)].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
    this.long = sorted.filter((form) => form.length > LONG_FORM);
    const short = sorted.filter((form) => form.length <= LONG_FORM);
    this.pattern = short.length > 0 ? new RegExp(short.map(escapeRegExp).join('|'), 'g') : undefined;
  }

  /**
   * A search of `text`. Each call of `next` must ask for a position no smaller than the one
   * before: what is known about later positions is kept, so the long forms are searched for
   * again only once the search has passed their last occurrence found.
   */
  scanner(text: string): FormScanner {
    const pattern = this.pattern;
    const long = this.long;
    // Per long form: its next occurrence at or after the last position asked for (-1: none left).
    const found = long.map(() => -2);
    let shortMatch: FormMatch | undefined | null = null;
    return {
      next(from) {
        let best: FormMatch | undefined;
        if (pattern) {
          if (shortMatch === null || (shortMatch !== undefined && shortMatch.index < from)) {
            pattern.lastIndex = from;
            const match = pattern.exec(text);
            shortMatch = match ? { index: match.index, length: match[0].length } : undefined;
          }
          best = shortMatch;
        }
        long.forEach((form, index) => {
          let at = found[index] as number;
          if (at === -2 || (at >= 0 && at < from)) found[index] = at = text.indexOf(form, from);
          // Long forms are longer than any short one: at the same position, a long form wins.
          if (at >= 0 && (!best || at < best.index || (at === best.index && form.length > best.length))) best = { index: at, length: form.length };
        });
        return best;
      },
    };
  }
}

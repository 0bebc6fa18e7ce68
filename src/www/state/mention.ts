/**
 * `@`-mentions of workspace files in the composer: the word being completed is read from the
 * text and the cursor at the moment it is needed (never from an earlier keystroke), and of
 * directory listings requested while typing only the answer to the latest counts: answers can
 * arrive in another order than their requests, and an older one names a word no longer typed.
 */

/** The `@`-word that ends at the cursor. */
export interface MentionWord {
  /** Index of the `@` in the text. */
  start: number;
  /** What follows the `@` up to the cursor (a path, possibly with directories). */
  query: string;
}

/** The `@`-word ending at `cursor` (a UTF-16 index into `text`), if the cursor ends one. */
export function mentionAt(text: string, cursor: number): MentionWord | undefined {
  const match = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, cursor));
  if (!match) return undefined;
  const query = match[2] as string;
  return { start: cursor - query.length - 1, query };
}

/**
 * Replaces the `@`-word ending at `cursor` with `@option`, followed by a space for a file (an
 * option ending in `/` is a directory, whose entries are offered next).
 * @returns the new text and where the cursor goes, or undefined when no `@`-word ends at the cursor
 */
export function completeMention(text: string, cursor: number, option: string): { text: string; cursor: number } | undefined {
  const word = mentionAt(text, cursor);
  if (!word) return undefined;
  const inserted = `@${option}${option.endsWith('/') ? '' : ' '}`;
  return { text: text.slice(0, word.start) + inserted + text.slice(cursor), cursor: word.start + inserted.length };
}

/** Tells, for lookups that overlap, whether an answer is to the latest one still wanted. */
export class LatestLookup {
  private latest = 0;

  /** Starts a lookup; the returned function is true while no later lookup started and none was cancelled since. */
  begin(): () => boolean {
    const ticket = ++this.latest;
    return () => ticket === this.latest;
  }

  /** Makes every lookup started so far stale (the word being completed is gone). */
  cancel(): void {
    this.latest++;
  }
}

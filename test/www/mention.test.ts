/**
 * `@`-mentions in the web composer: the word completed is the one at the cursor when the
 * choice is made, and only the latest of overlapping directory lookups is answered.
 */
import { describe, expect, it } from 'vitest';
import { completeMention, LatestLookup, mentionAt } from '../../src/www/state/mention.js';

describe('@-mentions', () => {
  it('finds the @-word that ends at the cursor, and none after a space or inside a word', () => {
    expect(mentionAt('Read @no', 8)).toEqual({ start: 5, query: 'no' });
    expect(mentionAt('@src/cl', 7)).toEqual({ start: 0, query: 'src/cl' });
    expect(mentionAt('Read @notes.md ', 15)).toBeUndefined();
    expect(mentionAt('mail me@example', 15)).toBeUndefined();
  });

  it('completes the word typed so far, including keys typed after the list was drawn', () => {
    // The list was drawn for "@n"; "o" was typed before the choice.
    expect(completeMention('Read @no', 8, 'notes.md')).toEqual({ text: 'Read @notes.md ', cursor: 15 });
    expect(completeMention('see @sr and more', 7, 'src/')).toEqual({ text: 'see @src/ and more', cursor: 9 });
    expect(completeMention('no mention', 10, 'notes.md')).toBeUndefined();
  });

  it('answers only the latest lookup, and none after a cancel', () => {
    const lookups = new LatestLookup();
    const first = lookups.begin();
    const second = lookups.begin();
    expect(first()).toBe(false);
    expect(second()).toBe(true);
    lookups.cancel();
    expect(second()).toBe(false);
  });
});

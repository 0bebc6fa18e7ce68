/**
 * Unicode's bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069):
 * invisible, they reorder how the text around them is shown, so a command or a patch could
 * read as another one where a person decides on it ("Trojan Source", CVE-2021-42574). Where a
 * person reads a command, arguments or a diff to approve, they are shown as `<U+202E>`.
 */

/** The characters in question. */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

function visibleCodePoint(character: string): string {
  return `<U+${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * `text` with each bidirectional embedding, override and isolate written as `<U+XXXX>`; other
 * text, right-to-left letters and the direction marks (U+200E, U+200F) included, is unchanged.
 */
export function showBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, visibleCodePoint);
}

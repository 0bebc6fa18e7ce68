/**
 * The title a client gives a conversation from its first prompt (`openvaala exec`, the ACP
 * adapter), as other coding agents list sessions.
 */

/** Longest title given, in characters. */
const TITLE_MAX_CHARACTERS = 80;

/**
 * A conversation's title from its first prompt: the first non-empty line, white space folded,
 * cut to 80 characters with an ellipsis; empty when the prompt has no text.
 */
export function titleOf(prompt: string): string {
  const line = prompt.split('\n').map((text) => text.replace(/\s+/g, ' ').trim()).find((text) => text !== '') ?? '';
  const characters = [...line];
  return characters.length <= TITLE_MAX_CHARACTERS ? line : `${characters.slice(0, TITLE_MAX_CHARACTERS - 1).join('')}…`;
}

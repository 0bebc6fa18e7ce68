/**
 * How a long message is cut into full-text search documents. FTS5 tokenizes a document into
 * its pending-terms hash in one go, and that hash's slot array, sized for the most distinct
 * terms it ever held, stays allocated for as long as the connection is open (SQLite
 * `ext/fts5/fts5_hash.c`): one message of 1.6 MB with 200,000 distinct words kept 4 MiB
 * and left the C heap fragmented by as much again. Cut into pieces of at most
 * {@link SEARCH_PIECE_CHARACTERS}, between which FTS5 may flush, the hash never outgrows a
 * piece.
 */

import stripAnsi from 'strip-ansi';

/**
 * The text the search index holds for a title or a message: terminal escape sequences removed
 * (`strip-ansi`), so the words a terminal shows are the words a search finds (a title written
 * with a colour code reads "RED", and is found by it).
 */
export function indexedText(text: string): string {
  return stripAnsi(text);
}

/** The longest piece of a message indexed as one search document, in characters (UTF-16 code units). */
export const SEARCH_PIECE_CHARACTERS = 32 * 1024;

/**
 * How many characters a piece repeats from the end of the one before it, at most: a phrase
 * shorter than this that crosses a cut is still found.
 */
export const SEARCH_PIECE_OVERLAP_CHARACTERS = 256;

const WHITESPACE = /\s/;

/**
 * The pieces of `text` to index: the text itself when it fits {@link SEARCH_PIECE_CHARACTERS},
 * else consecutive pieces of at most that length, each cut at the last whitespace before the
 * limit (or at the limit inside one very long word), each but the first starting at a word
 * boundary up to {@link SEARCH_PIECE_OVERLAP_CHARACTERS} before the previous cut. Every
 * character of `text` is in at least one piece.
 * @param text a message's searchable text
 * @param limit the longest piece, characters (tests use a small one); at least 2 × the overlap
 * @throws Error when `limit` is not an integer of at least twice the overlap
 */
export function searchDocumentPieces(text: string, limit = SEARCH_PIECE_CHARACTERS): string[] {
  if (!Number.isSafeInteger(limit) || limit < 2 * SEARCH_PIECE_OVERLAP_CHARACTERS) {
    throw new Error(`searchDocumentPieces: limit must be an integer of at least ${2 * SEARCH_PIECE_OVERLAP_CHARACTERS} characters, got ${limit}`);
  }
  if (text.length <= limit) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    if (text.length - start <= limit) {
      pieces.push(text.slice(start));
      break;
    }
    let end = start + limit;
    // Cut after the last whitespace of the piece, unless that would leave it shorter than half.
    const lastSpace = lastWhitespaceBefore(text, end, start + limit / 2);
    if (lastSpace !== -1) end = lastSpace + 1;
    // Never between the two halves of a surrogate pair.
    else if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    pieces.push(text.slice(start, end));
    start = overlapStart(text, end);
  }
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The index of the last whitespace character in `[from, before)`, or -1. */
function lastWhitespaceBefore(text: string, before: number, from: number): number {
  for (let index = before - 1; index >= from; index--) if (WHITESPACE.test(text.charAt(index))) return index;
  return -1;
}

/** Where the piece after a cut at `end` starts: the first word start within the overlap before `end`, else `end`. */
function overlapStart(text: string, end: number): number {
  for (let index = Math.max(1, end - SEARCH_PIECE_OVERLAP_CHARACTERS); index < end; index++) {
    if (WHITESPACE.test(text.charAt(index - 1)) && !WHITESPACE.test(text.charAt(index))) return index;
  }
  return end;
}

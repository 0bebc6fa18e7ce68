/**
 * The cutting of long messages into search documents: every character indexed, pieces
 * bounded, cuts at whitespace with a word-aligned overlap, never inside a surrogate pair.
 */
import { expect, it } from 'vitest';
import { SEARCH_PIECE_CHARACTERS, SEARCH_PIECE_OVERLAP_CHARACTERS, searchDocumentPieces } from '../../src/dao/search-document-pieces.js';

/** Asserts the pieces cover `text` in order: each piece occurs in `text` at or after the previous one's start, and they reach its end. */
function expectCovering(text: string, pieces: string[], limit: number): void {
  let covered = 0;
  let previousStart = -1;
  for (const piece of pieces) {
    expect(piece.length).toBeLessThanOrEqual(limit);
    expect(piece.length).toBeGreaterThan(0);
    const start = text.indexOf(piece, Math.max(0, covered - SEARCH_PIECE_OVERLAP_CHARACTERS));
    expect(start).toBeGreaterThan(previousStart);
    expect(start).toBeLessThanOrEqual(covered);
    covered = start + piece.length;
    previousStart = start;
  }
  expect(covered).toBe(text.length);
}

it('keeps a message that fits one document whole', () => {
  expect(searchDocumentPieces('')).toEqual(['']);
  expect(searchDocumentPieces('a short message')).toEqual(['a short message']);
  const exact = 'x'.repeat(SEARCH_PIECE_CHARACTERS);
  expect(searchDocumentPieces(exact)).toEqual([exact]);
});

it('cuts a long message at whitespace, each piece after the first starting at a word within the overlap', () => {
  const words = Array.from({ length: 3000 }, (_, index) => `word${index}`);
  const text = words.join(' ');
  const pieces = searchDocumentPieces(text, 1024);
  expectCovering(text, pieces, 1024);
  for (const [index, piece] of pieces.entries()) {
    // Whole words only: a piece starts and ends on word boundaries.
    expect(piece).toMatch(/^word\d+( |$)/);
    if (index < pieces.length - 1) expect(piece.endsWith(' ')).toBe(true);
    if (index > 0) {
      const previous = pieces[index - 1] as string;
      const firstWord = piece.split(' ')[0] as string;
      // The first word of a piece is among the last words of the one before (the overlap).
      expect(previous.slice(-SEARCH_PIECE_OVERLAP_CHARACTERS - firstWord.length - 1)).toContain(` ${firstWord} `);
    }
  }
});

it('cuts inside a word longer than a document, never between the halves of a surrogate pair', () => {
  const text = '😀'.repeat(1500);
  const pieces = searchDocumentPieces(text, 1001);
  expect(pieces.join('')).toBe(text);
  for (const piece of pieces) {
    expect(piece.length).toBeLessThanOrEqual(1001);
    expect(piece.length % 2).toBe(0);
  }
  const letters = 'y'.repeat(5000);
  const letterPieces = searchDocumentPieces(letters, 1000);
  expect(letterPieces.join('')).toBe(letters);
  expect(letterPieces.map((piece) => piece.length)).toEqual([1000, 1000, 1000, 1000, 1000]);
});

it('refuses a limit that leaves no room past the overlap, naming it', () => {
  expect(() => searchDocumentPieces('text', SEARCH_PIECE_OVERLAP_CHARACTERS)).toThrow(/limit must be an integer of at least 512 characters, got 256/);
  expect(() => searchDocumentPieces('text', 1000.5)).toThrow(/got 1000.5/);
});

/**
 * The transcript's visible window. Only the entries on screen are turned into lines, so a
 * 5,000-item conversation costs what one screen costs: the window either follows the end
 * (new output scrolls in) or is anchored at an entry and a line inside it, and scrolling
 * walks entries from there. Each entry's lines are cached by entry, version, width and toggles.
 */
import { entryLines, type RenderToggles } from './entry-lines.js';
import { toAnsi, type StyledLine } from './styled-text.js';
import type { TranscriptEntry } from './transcript-model.js';

/** Where the window's top line is; undefined: the window follows the end. */
export type ScrollAnchor = { key: string; line: number } | undefined;

/** What one frame of the transcript shows. */
export interface ViewportFrame {
  /** Exactly `height` lines as ANSI text (blank ones padded). */
  lines: string[];
  /** The anchor of the top line (for scrolling from here). */
  top: { index: number; line: number };
  /** True when the first line of the first entry held is visible. */
  atTop: boolean;
  /** True when the window shows the end. */
  atEnd: boolean;
}

interface CacheEntry {
  version: number;
  width: number;
  toggles: string;
  lines: string[];
}

/** Turns entries into lines on demand and lays out windows of them. */
export class Viewport {
  private cache = new WeakMap<TranscriptEntry, CacheEntry>();

  constructor(
    private readonly color: boolean,
    private toggles: RenderToggles = { reasoning: false, output: false },
  ) {}

  /** Changes what is shown in full; cached lines are redone as they are needed. */
  setToggles(toggles: RenderToggles): void {
    this.toggles = toggles;
  }

  /** The ANSI lines of one entry at `width` (cached). */
  linesOf(entry: TranscriptEntry, width: number, rootSessionId: string | undefined): string[] {
    const toggles = `${this.toggles.reasoning ? 1 : 0}${this.toggles.output ? 1 : 0}`;
    const cached = this.cache.get(entry);
    if (cached && cached.version === entry.version && cached.width === width && cached.toggles === toggles) return cached.lines;
    const lines = entryLines(entry, width, this.toggles, rootSessionId).map((line: StyledLine) => toAnsi(line, this.color));
    this.cache.set(entry, { version: entry.version, width, toggles, lines });
    return lines;
  }

  /**
   * Lays out one window of `entries` (the caller puts a header entry first: the
   * conversation's start, or "loading older items").
   */
  frame(entries: readonly TranscriptEntry[], anchor: ScrollAnchor, size: { width: number; height: number }, rootSessionId: string | undefined): ViewportFrame {
    const { width, height } = size;
    const linesAt = (index: number) => this.linesOf(entries[index] as TranscriptEntry, width, rootSessionId);
    const anchorIndex = anchor ? entries.findIndex((entry) => entry.key === anchor.key) : -1;
    if (anchor && anchorIndex >= 0) {
      // Fill forward from the anchor; when the end comes before the window is full, the window is the end's.
      const lines: string[] = [];
      const startLine = Math.min(anchor.line, Math.max(0, linesAt(anchorIndex).length - 1));
      let index = anchorIndex;
      let line = startLine;
      while (lines.length < height && index < entries.length) {
        const block = linesAt(index);
        lines.push(...block.slice(line, line + height - lines.length));
        index++;
        line = 0;
      }
      if (lines.length >= height) return { lines, top: { index: anchorIndex, line: startLine }, atTop: anchorIndex === 0 && startLine === 0, atEnd: false };
    }
    // Follow the end: walk back from the last entry until the window is full.
    const collected: string[][] = [];
    let total = 0;
    let index = entries.length - 1;
    while (total < height && index >= 0) {
      const block = linesAt(index);
      collected.unshift(block);
      total += block.length;
      index--;
    }
    const flat = collected.flat();
    const skip = Math.max(0, flat.length - height);
    const visible = flat.slice(skip);
    while (visible.length < height) visible.push('');
    return { lines: visible, top: { index: index + 1, line: skip }, atTop: index + 1 === 0 && skip === 0, atEnd: true };
  }

  /**
   * The anchor `lines` lines above (negative: below) a top position; undefined when the rest
   * from there fits on one screen (the window follows the end again).
   */
  scroll(entries: readonly TranscriptEntry[], from: { index: number; line: number }, lines: number, size: { width: number; height: number }, rootSessionId: string | undefined): ScrollAnchor {
    const count = (index: number) => this.linesOf(entries[index] as TranscriptEntry, size.width, rootSessionId).length;
    let index = from.index;
    let line = from.line - lines;
    while (line < 0 && index > 0) {
      index--;
      line += count(index);
    }
    if (line < 0) line = 0;
    while (index < entries.length - 1 && line >= count(index)) {
      line -= count(index);
      index++;
    }
    let rest = -line;
    for (let position = index; position < entries.length && rest <= size.height; position++) rest += count(position);
    if (rest <= size.height) return undefined;
    const entry = entries[index];
    return entry ? { key: entry.key, line } : undefined;
  }
}

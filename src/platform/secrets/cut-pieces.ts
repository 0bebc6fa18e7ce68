/**
 * Pieces of secret values that a cut left (SPEC §9: secrets redacted wherever they would
 * appear). The server cuts text before it is redacted: a long command output keeps its head
 * and tail around an omission marker, `read_file` shortens long lines, a background command's
 * output is read in parts, a preview keeps a message's start. A value the cut splits is no
 * longer whole in what is left, so matching values finds nothing there, and the part left
 * would go out. The redaction therefore also hides, at each cut, the longest part next to it
 * that could be a piece of a value: before a cut, a tail that is a proper prefix of a form;
 * after a cut, a head that is a proper suffix of one. The text the cut removed is what would
 * tell whether it was a piece; without it, the safe reading is that it was.
 *
 * Cuts known from the text itself are found here (the markers the cutters write); the cuts
 * of texts read in parts are told by the caller (see `SecretRedactor.redactPiece`).
 */
import { LINE_SHORTENED_MARKER } from '../../tools/cut-markers.js';
import type { Span } from './range-redaction.js';

/**
 * The omission marker of `omissionMarker` (`executors/output-truncation.ts`):
 * `[… 104857 bytes omitted (bytes 32769–137625 of 168000, lines 812–3410 of 5000) …]`, on a
 * line of its own between the kept head and tail.
 */
const OMISSION_MARKER = /\[… (\d+) bytes omitted \(bytes (\d+)–(\d+) of (\d+), lines (\d+)–(\d+) of (\d+)\) …\]/g;

/** Finds the pieces of a fixed set of forms that a cut can leave; see the module comment. */
export class PieceFinder {
  private readonly byFirstUnit = new Map<string, string[]>();
  private readonly byLastUnit = new Map<string, string[]>();
  private readonly forms: readonly string[];
  /** Length of the longest form, UTF-16 units. */
  readonly longest: number;

  /** @param forms the forms of every value (non-empty) */
  constructor(forms: readonly string[]) {
    this.forms = forms;
    for (const form of forms) {
      add(this.byFirstUnit, form[0] as string, form);
      add(this.byLastUnit, form[form.length - 1] as string, form);
    }
    this.longest = forms.reduce((longest, form) => Math.max(longest, form.length), 0);
  }

  /** Whether `text[index, end)` is a proper prefix of a form (so, at a cut or a stream's end, may be a piece of one). */
  beginsForm(text: string, index: number, end = text.length): boolean {
    const candidates = this.byFirstUnit.get(text[index] as string);
    if (!candidates || index >= end) return false;
    const rest = text.slice(index, end);
    return candidates.some((form) => form.length > rest.length && form.startsWith(rest));
  }

  /** Where the longest piece ending at `end` (a cut) begins: the first `index` for which {@link beginsForm} holds, or `end` when none does. */
  prefixPieceStart(text: string, end: number): number {
    for (let index = Math.max(0, end - this.longest + 1); index < end; index++) if (this.beginsForm(text, index, end)) return index;
    return end;
  }

  /** Where the longest piece beginning at `start` (a cut) ends: the last `end` for which `text[start, end)` is a proper suffix of a form, or `start`. */
  suffixPieceEnd(text: string, start: number): number {
    for (let end = Math.min(text.length, start + this.longest - 1); end > start; end--) {
      const candidates = this.byLastUnit.get(text[end - 1] as string);
      if (!candidates) continue;
      const piece = text.slice(start, end);
      if (candidates.some((form) => form.length > piece.length && form.endsWith(piece))) return end;
    }
    return start;
  }

  /**
   * Whether `text`, the start of a stream whose beginning is a cut, could still grow into a
   * longer piece: some form holds it after its first unit with more of the form after it. While
   * it can, the piece the stream begins with is not known yet.
   */
  suffixCouldGrow(text: string): boolean {
    return this.forms.some((form) => {
      for (let at = form.indexOf(text, 1); at >= 1; at = form.indexOf(text, at + 1)) if (at + text.length < form.length) return true;
      return false;
    });
  }

  /**
   * The pieces next to the cuts that `text` shows by their markers: before and after each
   * omission marker, and before each `read_file` line-shortened marker.
   */
  markedCutPieces(text: string): Span[] {
    const spans: Span[] = [];
    if (!text.includes('[… ')) return spans;
    for (const match of text.matchAll(OMISSION_MARKER)) this.omissionPieces(text, match, spans);
    for (let at = text.indexOf(LINE_SHORTENED_MARKER); at >= 0; at = text.indexOf(LINE_SHORTENED_MARKER, at + 1)) {
      spans.push({ start: this.prefixPieceStart(text, at), end: at });
    }
    // Empty spans are left for `redactRange`, which skips them.
    return spans;
  }

  /**
   * The pieces around one omission marker. The marker stands on a line of its own: the line
   * break before it is the head's own when the head ended with one (then the head ends a line,
   * and no value, which holds no line break, was cut there), else added. The marker's byte
   * positions tell which, when the text begins with the head, as every cutter writes it; the
   * line numbers tell in the same way whether the tail begins a line. When they do not fit the
   * text, the marker was moved (quoted elsewhere) and both sides are taken as cuts.
   */
  private omissionPieces(text: string, match: RegExpMatchArray, spans: Span[]): void {
    const at = match.index as number;
    const number = (group: number): number => Number(match[group]);
    const [fromByte, toByte, totalBytes, toLine, totalLines] = [number(2), number(3), number(4), number(6), number(7)];
    const breakBefore = at > 0 && text[at - 1] === '\n';
    const headEnd = breakBefore ? at - 1 : at;
    const headBytes = Buffer.byteLength(text.slice(0, at), 'utf8');
    // The head ended with its own line break exactly when the text before the marker is the head.
    if (!(breakBefore && headBytes === fromByte - 1)) spans.push({ start: this.prefixPieceStart(text, headEnd), end: headEnd });
    const markerEnd = at + match[0].length;
    if (text[markerEnd] !== '\n') return;
    const tailStart = markerEnd + 1;
    const tail = Buffer.from(text.slice(tailStart), 'utf8').subarray(0, totalBytes - toByte);
    let newlines = 0;
    for (let index = tail.indexOf(0x0a); index >= 0; index = tail.indexOf(0x0a, index + 1)) newlines += 1;
    const tailLines = tail.length === 0 ? 0 : newlines + (tail[tail.length - 1] === 0x0a ? 0 : 1);
    // A tail that begins a line ends the output's lines without sharing the last omitted byte's line.
    const beginsLine = tail.length === totalBytes - toByte && toLine + tailLines === totalLines;
    if (!beginsLine) spans.push({ start: tailStart, end: this.suffixPieceEnd(text, tailStart) });
  }
}

function add(map: Map<string, string[]>, key: string, form: string): void {
  const list = map.get(key);
  if (list) list.push(form);
  else map.set(key, [form]);
}

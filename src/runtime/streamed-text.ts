/**
 * Text assembled from a stream of small pieces (an item's deltas), kept for late subscribers.
 * Appending with `+=` would build a rope holding one node per piece until something flattens
 * it: 200,000 deltas would be 200,000 entries. Here pieces are joined into flat strings as they
 * come, so the text costs its characters plus a bounded number of entries, whatever the number
 * of deltas.
 */

/** Pieces gathered before they are joined into one chunk. */
const PIECES_PER_CHUNK = 256;
/** Chunks kept before they are joined into one (each join copies the text once). */
const MAX_CHUNKS = 256;

/** Append-only text whose stored parts stay few, with slices that read a prefix of it in pieces. */
export class StreamedText {
  private chunks: string[] = [];
  private pending: string[] = [];
  private size = 0;

  /** Appends a piece (empty pieces are ignored). */
  append(piece: string | undefined): void {
    if (!piece) return;
    this.pending.push(piece);
    this.size += piece.length;
    if (this.pending.length < PIECES_PER_CHUNK) return;
    this.chunks.push(this.pending.join(''));
    this.pending = [];
    if (this.chunks.length >= MAX_CHUNKS) this.chunks = [this.chunks.join('')];
  }

  /** Length in UTF-16 code units. */
  get length(): number {
    return this.size;
  }

  /** Number of strings held (chunks and pieces not joined yet); stays under 512. */
  get parts(): number {
    return this.chunks.length + this.pending.length;
  }

  /** The whole text. */
  toString(): string {
    return [...this.chunks, ...this.pending].join('');
  }

  /**
   * The first `end` code units (default: all), as consecutive slices of at most `maxChars`
   * (never cutting a surrogate pair unless `maxChars` is 1); they concatenate to that prefix.
   * Reading a prefix fixed earlier is safe while the text keeps growing: it only appends.
   */
  *slices(maxChars: number, end = this.size): Generator<string> {
    let buffered = '';
    let remaining = end;
    for (const part of [...this.chunks, ...this.pending]) {
      if (remaining <= 0) break;
      buffered += part.length <= remaining ? part : part.slice(0, remaining);
      remaining -= part.length;
      while (buffered.length >= maxChars) {
        let cut = maxChars;
        const last = buffered.charCodeAt(cut - 1);
        if (cut > 1 && last >= 0xd800 && last <= 0xdbff) cut -= 1;
        yield buffered.slice(0, cut);
        buffered = buffered.slice(cut);
      }
    }
    if (buffered) yield buffered;
  }
}

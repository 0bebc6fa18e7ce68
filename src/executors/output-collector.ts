/**
 * Collecting a command's output under the byte cap of `CommandRequest.maxOutputBytes`, the
 * same way on every executor: text is kept in arrival order up to the cap (never splitting a
 * UTF-8 character), streamed to `onOutput` as it is kept, and what comes after is only counted.
 */

/** The longest prefix of `text` that fits in `limitBytes` UTF-8 bytes, not splitting characters. */
export function utf8Prefix(text: string, limitBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const character of text) {
    const size = Buffer.byteLength(character, 'utf8');
    if (bytes + size > limitBytes) break;
    bytes += size;
    end += character.length;
  }
  return text.slice(0, end);
}

/** Output kept so far and what was dropped. */
export interface CollectedOutput {
  /** The kept text, at most `maxOutputBytes` UTF-8 bytes. */
  output: string;
  /** True when anything was dropped. */
  truncated: boolean;
  /** Bytes dropped after the cap. */
  omittedBytes: number;
}

/**
 * Accumulates decoded output chunks under a byte cap. Once the cap is reached everything after
 * is dropped, so an earlier short prefix is never followed by later text that happens to fit.
 */
export class OutputCollector {
  private readonly chunks: string[] = [];
  private collectedBytes = 0;
  private omittedBytes = 0;

  /**
   * @param maxOutputBytes cap on the kept text, in UTF-8 bytes
   * @param onOutput receives each kept piece as it arrives (for live streaming)
   */
  constructor(
    private readonly maxOutputBytes: number,
    private readonly onOutput?: (chunk: string) => void,
  ) {}

  /** Adds a decoded chunk: keeps what fits under the cap, counts the rest. */
  add(text: string): void {
    if (text.length === 0) return;
    const size = Buffer.byteLength(text, 'utf8');
    const room = this.maxOutputBytes - this.collectedBytes;
    const kept = size <= room ? text : utf8Prefix(text, Math.max(0, room));
    const keptBytes = kept === text ? size : Buffer.byteLength(kept, 'utf8');
    this.omittedBytes += size - keptBytes;
    this.collectedBytes += keptBytes;
    if (this.omittedBytes > 0) this.collectedBytes = this.maxOutputBytes;
    if (kept.length > 0) {
      this.chunks.push(kept);
      this.onOutput?.(kept);
    }
  }

  /** The kept text and the truncation accounting. */
  result(): CollectedOutput {
    return { output: this.chunks.join(''), truncated: this.omittedBytes > 0, omittedBytes: this.omittedBytes };
  }
}

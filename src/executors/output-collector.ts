/**
 * Collecting a command's output under the byte cap of `CommandRequest.maxOutputBytes`, the
 * same way on every executor (local, bubblewrap, SSH, virtual, and the background and
 * terminal processes of `Executor.spawn`): the first half of the cap keeps the head, the
 * second half keeps a rolling tail, and what falls between is only counted. Memory stays
 * bounded by the cap however much a command writes; the result is head + a marker line
 * naming the omitted bytes and lines (see `output-truncation.ts`) + tail.
 */
import { countNewlines, headCut, joinAroundMarker, tailCut, type OmittedRange } from './output-truncation.js';

/** Output kept so far and what was dropped. */
export interface CollectedOutput {
  /** The kept text: all of it when it fit, else head + marker line + tail. */
  output: string;
  /** True when anything was dropped. */
  truncated: boolean;
  /** Bytes dropped between head and tail (0 when nothing was). */
  omittedBytes: number;
  /** What was dropped, in positions of the whole output, when anything was. */
  omitted?: OmittedRange;
}

/**
 * Accumulates decoded output chunks: the head up to half the cap, then a tail of the newest
 * bytes up to the other half. Chunks are streamed to `onOutput` as they arrive until the cap's
 * worth of bytes has been streamed (clients watching live see no more than the item keeps).
 */
export class OutputCollector {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private headFull = false;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private totalBytes = 0;
  private totalNewlines = 0;
  private droppedBytes = 0;
  private droppedNewlines = 0;
  private lastByte = -1;
  /** Last byte dropped from the tail: tells whether the omission ends with a line break. */
  private lastDroppedByte = -1;
  private streamedBytes = 0;

  /**
   * @param maxOutputBytes cap on the kept text, in UTF-8 bytes (head and tail get half each)
   * @param onOutput receives chunks as they arrive, until `maxOutputBytes` have been streamed
   */
  constructor(
    private readonly maxOutputBytes: number,
    private readonly onOutput?: (chunk: string) => void,
  ) {
    this.headLimit = Math.floor(maxOutputBytes / 2);
    this.tailLimit = maxOutputBytes - this.headLimit;
  }

  /** Total bytes seen so far. */
  get bytesSeen(): number {
    return this.totalBytes;
  }

  /** Adds a decoded chunk. */
  add(text: string): void {
    if (text.length === 0) return;
    let bytes = Buffer.from(text, 'utf8');
    if (this.onOutput && this.streamedBytes < this.maxOutputBytes) {
      this.streamedBytes += bytes.length;
      this.onOutput(text);
    }
    this.totalBytes += bytes.length;
    this.totalNewlines += countNewlines(bytes);
    this.lastByte = bytes[bytes.length - 1] as number;
    if (!this.headFull) {
      const room = this.headLimit - this.headBytes;
      if (bytes.length <= room) {
        this.head.push(bytes);
        this.headBytes += bytes.length;
        return;
      }
      this.headFull = true;
      // Until the whole cap is used nothing is dropped; the head/tail split is made at the end.
      this.head.push(bytes.subarray(0, room));
      this.headBytes += room;
      bytes = bytes.subarray(room);
    }
    this.tail.push(bytes);
    this.tailBytes += bytes.length;
    this.trimTail();
  }

  /** Drops the oldest tail bytes beyond the tail's share of the cap, counting them. */
  private trimTail(): void {
    while (this.tailBytes > this.tailLimit) {
      const oldest = this.tail[0] as Buffer;
      const excess = this.tailBytes - this.tailLimit;
      const dropped = excess >= oldest.length ? oldest : oldest.subarray(0, excess);
      this.droppedBytes += dropped.length;
      this.droppedNewlines += countNewlines(dropped);
      this.lastDroppedByte = dropped[dropped.length - 1] as number;
      if (dropped === oldest) this.tail.shift();
      else this.tail[0] = oldest.subarray(excess);
      this.tailBytes -= dropped.length;
    }
  }

  /** The kept text and the truncation accounting. */
  result(): CollectedOutput {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (this.droppedBytes === 0) {
      return { output: Buffer.concat([head, tail]).toString('utf8'), truncated: false, omittedBytes: 0 };
    }
    // Cut at line breaks (or at least character boundaries): the bytes given up join the omission.
    const headEnd = headCut(head, head.length);
    const tailStart = tailCut(tail, tail.length, true);
    const keptHead = head.subarray(0, headEnd);
    const keptTail = tail.subarray(tailStart);
    const omittedBytes = this.droppedBytes + (head.length - headEnd) + tailStart;
    const newlinesBefore = countNewlines(keptHead);
    const newlinesOmitted = this.droppedNewlines + countNewlines(head, headEnd) + countNewlines(tail, 0, tailStart);
    const lastOmittedIsNewline = tailStart > 0 ? tail[tailStart - 1] === 0x0a : this.lastDroppedByte === 0x0a;
    const range: OmittedRange = {
      fromByte: headEnd + 1,
      toByte: headEnd + omittedBytes,
      totalBytes: this.totalBytes,
      fromLine: newlinesBefore + 1,
      toLine: newlinesBefore + newlinesOmitted + (lastOmittedIsNewline ? 0 : 1),
      totalLines: this.totalNewlines + (this.lastByte === 0x0a ? 0 : 1),
    };
    return { output: joinAroundMarker(keptHead.toString('utf8'), range, keptTail.toString('utf8')), truncated: true, omittedBytes, omitted: range };
  }

}

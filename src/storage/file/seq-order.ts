/**
 * Which lines of a stream file are its entries, decided line by line in file order (SPEC §4:
 * each line carries its seq; seqs grow by one per line). Every reader of stream files uses this
 * one rule — forward and backward reads, the tail read that finds where the next append goes,
 * and the whole-file read of `reindex` — so they all see the same entries.
 *
 * - A line whose seq is not above the last entry's does not follow it: skipped.
 * - A line whose seq jumps ahead (more than one above the last entry's) is an entry only when
 *   the next line's seq is above its own (lines were lost before it). When the next line does
 *   not follow it, the jump is the one damaged line (a seq edited or flipped): it is skipped, and
 *   the lines after it are read as following the entry before it — one bad seq must not hide
 *   everything written after it. A jump on the last line read is an entry.
 */
/** A valid line: its seq, its value, and where it starts (a byte offset, or a line number). */
export interface SeqLine {
  seq: number;
  value: unknown;
  offset: number;
}

/** Takes one entry in file order; returns true to stop reading. */
export type EntrySink = (seq: number, value: unknown, offset: number) => boolean;

/** Why a line whose seq is not above the one of the entry before it is skipped (said after "corrupt line skipped: "). */
export function seqDoesNotFollow(seq: number, previous: number): string {
  return `its seq ${seq} does not follow seq ${previous} of the line before it (seqs grow by one per line)`;
}

/** Why a line that jumped ahead was skipped (said after "corrupt line skipped: "). */
export function seqJumpsAhead(seq: number, previous: number, next: number): string {
  return `its seq ${seq} jumps ahead of seq ${previous} of the entry before it, and the next line (seq ${next}) does not follow it (seqs grow by one per line)`;
}

/** The rule above, fed the valid lines of one read in file order. */
export class SeqOrder {
  private previous = 0;
  private jump: SeqLine | undefined;
  /** Lines skipped so far, with why; the reader reports them. */
  readonly skipped: { offset: number; reason: string }[] = [];

  /** seq of the last entry taken (0 before any). */
  get lastSeq(): number {
    return this.previous;
  }

  /**
   * Feeds the next valid line; `take` gets the entries it settles, in order (none, one, or a
   * held jump and then this line).
   * @returns true when `take` asked to stop
   */
  push(seq: number, value: unknown, offset: number, take: EntrySink): boolean {
    const jump = this.jump;
    if (jump !== undefined) {
      this.jump = undefined;
      if (seq > jump.seq) {
        this.previous = jump.seq;
        if (take(jump.seq, jump.value, jump.offset)) return true;
      } else this.skipped.push({ offset: jump.offset, reason: seqJumpsAhead(jump.seq, this.previous, seq) });
    }
    if (seq <= this.previous) {
      this.skipped.push({ offset, reason: seqDoesNotFollow(seq, this.previous) });
      return false;
    }
    if (seq > this.previous + 1) {
      this.jump = { seq, value, offset };
      return false;
    }
    this.previous = seq;
    return take(seq, value, offset);
  }

  /**
   * The end of the lines read: a jump still held is an entry (no line after it says otherwise).
   * @returns true when `take` asked to stop
   */
  finish(take: EntrySink): boolean {
    const jump = this.jump;
    if (jump === undefined) return false;
    this.jump = undefined;
    this.previous = jump.seq;
    return take(jump.seq, jump.value, jump.offset);
  }

  /** Hands the skipped lines to `report` and forgets them. */
  async reportSkipped(report: (offset: number, reason: string) => Promise<void> | void): Promise<void> {
    for (const { offset, reason } of this.skipped.splice(0)) await report(offset, reason);
  }
}

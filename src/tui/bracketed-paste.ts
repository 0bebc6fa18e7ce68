/**
 * Bracketed pastes taken whole from the terminal's input, before Ink sees it. A terminal sends
 * a paste as `ESC[200~` text `ESC[201~` in one write, but a pseudo-terminal hands it over in
 * reads of about 4 KB, and Ink reports each read as its own input: a long paste would become
 * several pastes, and a marker cut between two reads would reach the composer as text (or, cut
 * in the start marker, the pasted new lines as Enter keys). The paste is therefore collected
 * here from the raw text up to its end marker, whatever the reads; only the keys around it go
 * on to Ink, with one `ESC[200~` in the paste's place so that it is handled in order with them.
 */
import { Readable } from 'node:stream';

/** What a terminal sends before a paste. */
export const PASTE_START = '\u001b[200~';
/** What a terminal sends after a paste. */
export const PASTE_END = '\u001b[201~';

/**
 * How long a cut `ESC[20…` at the end of a read waits for the read that completes it. The reads
 * of one write follow each other within a millisecond; a lone Esc key waits at most this long.
 */
export const CUT_MARKER_WAIT_MS = 50;
/**
 * How long a paste without its end marker waits for more text before what came is taken as the
 * whole paste, so that input cannot stay swallowed by a paste whose end was lost.
 */
export const UNFINISHED_PASTE_WAIT_MS = 3000;

/** A part of the input: keys for Ink, or one whole paste. */
export type InputPart = { keys: string } | { paste: string };

/**
 * Splits the terminal's text, read by read, into keys and whole pastes. Without timers: the
 * waits of `PasteSeparatingInput` decide when `release` and `endUnfinished` are called.
 */
export class PasteSplitter {
  /** The paste being collected, from its start marker on. */
  private paste: string | undefined;
  /** The end of the last read when it may be a marker cut short. */
  private held = '';
  /** True when `held` is the end of an unfinished paste: never a key. */
  private heldFromPaste = false;

  /** True while a paste has started and its end marker has not come. */
  get pasting(): boolean {
    return this.paste !== undefined;
  }

  /** True while the end of the last read is kept back as a possible marker. */
  get holding(): boolean {
    return this.held !== '';
  }

  /** The parts of one read, in order; a paste is reported once its end marker has come. */
  push(chunk: string): InputPart[] {
    const parts: InputPart[] = [];
    let rest = chunk;
    for (;;) {
      if (this.paste !== undefined) {
        // Only the end marker ends a paste: what looks like a start marker inside is its text.
        const from = Math.max(0, this.paste.length - PASTE_END.length + 1);
        this.paste += rest;
        const end = this.paste.indexOf(PASTE_END, from);
        if (end === -1) return parts;
        parts.push({ paste: this.paste.slice(0, end) });
        rest = this.paste.slice(end + PASTE_END.length);
        this.paste = undefined;
        continue;
      }
      const text = this.held + rest;
      this.held = '';
      this.heldFromPaste = false;
      const start = text.indexOf(PASTE_START);
      // An end marker outside a paste follows one taken as ended already: it is no key.
      const strayEnd = text.indexOf(PASTE_END);
      const marker = start === -1 ? strayEnd : strayEnd === -1 ? start : Math.min(start, strayEnd);
      if (marker === -1) {
        this.held = markerCutAtEnd(text);
        const keys = text.slice(0, text.length - this.held.length);
        if (keys !== '') parts.push({ keys });
        return parts;
      }
      if (marker > 0) parts.push({ keys: text.slice(0, marker) });
      if (marker === start) this.paste = '';
      rest = text.slice(marker + PASTE_START.length);
    }
  }

  /**
   * Gives up waiting for the rest of a marker held back: a lone Esc (or Alt+[) goes on as the
   * key it is; a longer `ESC[20…`, or what ended an unfinished paste, can only be a marker whose
   * rest was lost, and is dropped.
   */
  release(): InputPart[] {
    const held = this.held;
    const key = held !== '' && held.length <= 2 && !this.heldFromPaste;
    this.held = '';
    this.heldFromPaste = false;
    return key ? [{ keys: held }] : [];
  }

  /**
   * Takes what came of a paste whose end marker did not follow as the whole paste. An `ESC[20…`
   * at its end is kept back as a marker cut short: the rest of the end marker may still come.
   */
  endUnfinished(): InputPart[] {
    if (this.paste === undefined) return [];
    const cut = markerCutAtEnd(this.paste);
    const paste = this.paste.slice(0, this.paste.length - cut.length);
    this.paste = undefined;
    this.held = cut;
    this.heldFromPaste = cut !== '';
    return [{ paste }];
  }
}

/** The longest end of `text` that begins a paste marker (and so may be one cut by the read). */
function markerCutAtEnd(text: string): string {
  for (let length = Math.min(text.length, PASTE_START.length - 1); length > 0; length--) {
    const end = text.slice(-length);
    if (PASTE_START.startsWith(end) || PASTE_END.startsWith(end)) return end;
  }
  return '';
}

/**
 * The terminal's input as Ink should read it: `stream` stands for `stdin` in Ink's `render`
 * (raw mode, ref and unref pass through to the terminal) and carries the keys; each paste goes
 * to `onPaste` whole, just before the `ESC[200~` that marks its place in `stream`.
 */
export class PasteSeparatingInput {
  /** The stream to give Ink as its stdin. */
  readonly stream: NodeJS.ReadStream;
  private readonly splitter = new PasteSplitter();
  private readonly output = new Readable({ read: () => undefined });
  private timer: NodeJS.Timeout | undefined;
  private reading = false;

  constructor(
    private readonly stdin: NodeJS.ReadStream,
    private readonly onPaste: (text: string) => void,
  ) {
    const setRawMode = (enabled: boolean) => {
      stdin.setRawMode(enabled);
      if (enabled) this.startReading();
      else this.stopReading();
      return this.stream;
    };
    const ref = () => {
      stdin.ref();
      return this.stream;
    };
    const unref = () => {
      stdin.unref();
      return this.stream;
    };
    this.stream = Object.assign(this.output, { isTTY: stdin.isTTY, setRawMode, ref, unref }) as unknown as NodeJS.ReadStream;
  }

  /** Stops reading the terminal (and waiting for the rest of a paste or marker). */
  dispose(): void {
    this.stopReading();
  }

  private readonly onReadable = () => {
    let chunk: string | Buffer | null;
    while ((chunk = this.stdin.read() as string | Buffer | null) !== null) this.deliver(this.splitter.push(chunk.toString()));
    this.wait();
  };

  /** Waits for the rest of an unfinished paste or of a marker held back, whichever is pending. */
  private wait(): void {
    this.clearTimer();
    if (this.splitter.pasting) this.timer = setTimeout(() => this.afterWait(this.splitter.endUnfinished()), UNFINISHED_PASTE_WAIT_MS);
    else if (this.splitter.holding) this.timer = setTimeout(() => this.afterWait(this.splitter.release()), CUT_MARKER_WAIT_MS);
  }

  private afterWait(parts: InputPart[]): void {
    this.timer = undefined;
    this.deliver(parts);
    // An unfinished paste may leave the start of its end marker held back.
    this.wait();
  }

  private startReading(): void {
    if (this.reading) return;
    this.reading = true;
    // Decoded here, not by Ink: a character cut between two reads must not become two.
    this.stdin.setEncoding('utf8');
    this.stdin.on('readable', this.onReadable);
  }

  private stopReading(): void {
    if (!this.reading) return;
    this.reading = false;
    this.stdin.removeListener('readable', this.onReadable);
    this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Passes keys on to Ink, and each paste to `onPaste` with its place among them marked. */
  private deliver(parts: InputPart[]): void {
    for (const part of parts) {
      if ('keys' in part) this.output.push(part.keys);
      else {
        this.onPaste(part.paste);
        this.output.push(PASTE_START);
      }
    }
  }
}

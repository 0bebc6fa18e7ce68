/**
 * Redaction of secret values (SPEC §9: "secrets … redacted wherever they would appear"):
 * every string leaving the server (protocol answers and notifications), every entry written
 * to a conversation log and every server log line has each known secret value replaced by
 * `***`. A value is matched literally in each of its forms (itself, its `.env` quoting, its
 * JSON escaping: see `secret-encodings.ts`); every occurrence is hidden, overlapping ones
 * included, and a run of them becomes one `***` (see `range-redaction.ts`), so no part of a
 * value survives next to another.
 *
 * Text the server cut before it is redacted is redacted with its cuts: what a cut left of a
 * value is hidden too (see `cut-pieces.ts`). Streamed text (`item/delta`) is redacted as a
 * stream, not chunk by chunk, so a value split across chunks is caught too:
 * {@link SecretRedactor.redactStreamChunk} holds back a chunk's tail while it could be the
 * beginning of a value. A piece of a file is redacted within the bytes around it
 * ({@link SecretRedactor.redactByteRange}), so a value its edges cut is caught as well.
 */
import { PieceFinder } from './cut-pieces.js';
import { commandReadCuts, isCutPreview } from './cut-texts.js';
import { FormMatcher } from './form-matcher.js';
import { redactRange, type Span } from './range-redaction.js';
import { encodedForms } from './secret-encodings.js';

/** What replaces a secret value. */
export const REDACTED = '***';

/** Forms matched on bytes: each form's UTF-8 bytes, one character per byte (`latin1`). */
interface ByteForms {
  matcher: FormMatcher;
  /** Bytes of the longest form. */
  longest: number;
}

/** Which ends of a text are cuts: it is a part of a longer text that continues before it (`start`) or after it (`end`). */
export interface TextCuts {
  start?: boolean;
  end?: boolean;
}

/**
 * What a stream's redaction holds between chunks ({@link SecretRedactor.redactStreamChunk}):
 * the raw end of the stream so far, of which the part from `from` on is not given out yet (it
 * could still become a value) and the part before is kept as context (a value overlapping it
 * may still continue a run).
 */
export interface StreamHeld {
  /** Raw text: context already given out, then the text not given out yet. */
  text: string;
  /** Where the text not given out yet begins in `text`. */
  from: number;
  /** Spans of `text` hidden as a piece of a value that the stream's start cut. */
  hidden: Span[];
  /** True while the stream's start is a cut and the piece it begins with is not known yet. */
  leadingCut: boolean;
}

/** The set of secret values to hide, and the functions that hide them. */
export class SecretRedactor {
  private matcher: FormMatcher | undefined;
  private pieces: PieceFinder | undefined;
  /** The forms of every value. */
  private forms: string[] = [];
  /** Built on the first byte range redacted after the values change. */
  private byteForms: ByteForms | undefined;
  /** Redacted copies of shared objects (one notification goes to many connections), until the values change. */
  private shared = new WeakMap<object, unknown>();

  /** Replaces the values to hide (called whenever a secret is set or removed). */
  setValues(values: Iterable<string>): void {
    const distinct = [...new Set(values)].filter((value) => value.length > 0);
    this.forms = [...new Set(distinct.flatMap(encodedForms))].filter((form) => form.length > 0);
    this.matcher = this.forms.length > 0 ? new FormMatcher(this.forms) : undefined;
    this.pieces = this.forms.length > 0 ? new PieceFinder(this.forms) : undefined;
    this.byteForms = undefined;
    this.shared = new WeakMap();
  }

  /**
   * {@link redact} of an object sent to many connections, computed once per object (and per
   * set of values): the object must not change after it is first redacted.
   */
  redactShared<T extends object>(value: T): T {
    if (!this.matcher) return value;
    if (this.shared.has(value)) return this.shared.get(value) as T;
    const redacted = this.redact(value);
    this.shared.set(value, redacted);
    return redacted;
  }

  /** Whether any value is known (when not, every function here returns its input unchanged). */
  get active(): boolean {
    return this.matcher !== undefined;
  }

  /**
   * `text` with every occurrence of a secret value, in each of its forms, hidden (a run of
   * overlapping ones as one `***`), and the pieces of values left next to the cuts its markers
   * show (see `cut-pieces.ts`).
   */
  redactText(text: string): string {
    return this.redactPiece(text);
  }

  /**
   * {@link redactText} of a text that is a part of a longer one: where `cuts` says it
   * continues, what could be a piece of a value at that end (a leading proper suffix of a form,
   * a trailing proper prefix) is hidden too.
   * @param text the part
   * @param cuts which of its ends are cuts (none: a whole text)
   */
  redactPiece(text: string, cuts: TextCuts = {}): string {
    const matcher = this.matcher;
    const pieces = this.pieces;
    if (!matcher || !pieces) return text;
    const spans = pieces.markedCutPieces(text);
    if (cuts.start) spans.push({ start: 0, end: pieces.suffixPieceEnd(text, 0) });
    if (cuts.end) spans.push({ start: pieces.prefixPieceStart(text, text.length), end: text.length });
    return redactRange(text, matcher, 0, text.length, REDACTED, spans);
  }

  /**
   * What a stream whose start is a cut (it continues text given out before, such as the next
   * read of a command's output) begins its redaction with, in place of `undefined`: the piece
   * of a value it may begin with is hidden too.
   */
  cutStreamStart(): StreamHeld {
    return { text: '', from: 0, hidden: [], leadingCut: true };
  }

  /**
   * One chunk of a stream of text, redacted so that the concatenation of what every chunk
   * gives, followed by {@link endStream}, equals {@link redactPiece} of the whole stream (with
   * its start a cut when it began with {@link cutStreamStart}, its end when `endStream` is told
   * so). A value split across chunks is therefore caught: from the first position where the
   * rest of the text so far could still be the beginning of a form (at most the longest form's
   * length − 1 characters from the end), nothing is given yet; it is held for the next chunk,
   * with as much text before it as a value may span.
   * @param held what the previous chunk of the stream held (`undefined` at the start)
   * @param chunk the new text of the stream
   * @returns `text`, the redacted text that may go out now, and `held`, what to pass with the next chunk
   */
  redactStreamChunk(held: StreamHeld | undefined, chunk: string): { text: string; held: StreamHeld | undefined } {
    const buffer = (held?.text ?? '') + chunk;
    const from = held?.from ?? 0;
    const matcher = this.matcher;
    const pieces = this.pieces;
    if (!matcher || !pieces) return { text: buffer.slice(from), held: undefined };
    const hidden = [...(held?.hidden ?? [])];
    if (held?.leadingCut) {
      // The piece a cut start leaves is known once no form could make it longer.
      if (pieces.suffixCouldGrow(buffer)) return { text: '', held: { text: buffer, from: 0, hidden: [], leadingCut: true } };
      hidden.push({ start: 0, end: pieces.suffixPieceEnd(buffer, 0) });
    }
    let undecided = buffer.length;
    for (let index = Math.max(from, buffer.length - pieces.longest + 1); index < buffer.length; index++) {
      if (pieces.beginsForm(buffer, index)) {
        undecided = index;
        break;
      }
    }
    const text = redactRange(buffer, matcher, from, undecided, REDACTED, hidden);
    if (undecided === buffer.length) return { text, held: undefined };
    const keep = Math.max(0, undecided - pieces.longest);
    const shifted = hidden.filter((span) => span.end > keep).map((span) => ({ start: Math.max(0, span.start - keep), end: span.end - keep }));
    return { text, held: { text: buffer.slice(keep), from: undecided - keep, hidden: shifted, leadingCut: false } };
  }

  /**
   * What a stream held at its end, redacted: the last text of the stream to give out.
   * @param held what the last chunk held
   * @param cuts `end: true` when the stream stops where its text goes on (an output bound, a
   *   command that keeps running): what could begin a value is then hidden, not given out
   */
  endStream(held: StreamHeld | undefined, cuts: Pick<TextCuts, 'end'> = {}): string {
    if (!held) return '';
    const matcher = this.matcher;
    const pieces = this.pieces;
    if (!matcher || !pieces) return held.text.slice(held.from);
    const hidden = [...held.hidden];
    if (held.leadingCut) hidden.push({ start: 0, end: pieces.suffixPieceEnd(held.text, 0) });
    if (cuts.end) hidden.push({ start: Math.max(held.from, pieces.prefixPieceStart(held.text, held.text.length)), end: held.text.length });
    return redactRange(held.text, matcher, held.from, held.text.length, REDACTED, hidden);
  }

  /**
   * Bytes of context a byte range needs on each side for {@link redactByteRange}: the UTF-8
   * length of the longest form (0 when no value is known).
   */
  get rangeContextBytes(): number {
    return this.matcher ? this.bytes().longest : 0;
  }

  /**
   * The bytes `[from, to)` of a longer content (a file read in pieces), redacted so that no
   * part of a value shows, however the range cuts it: every occurrence of a form is hidden,
   * overlapping ones included, and a run of occurrences becomes one `***` given by the range
   * holding its first byte (see `range-redaction.ts`). Ranges that follow one another
   * therefore concatenate to the whole content redacted, and a range's offsets stay those of
   * the content. Works on bytes, so content that is not UTF-8 text is redacted too.
   * @param window the range with {@link rangeContextBytes} bytes of the content before and
   *   after it (fewer only where the content begins or ends)
   * @param from first byte of the range in `window`
   * @param to end of the range in `window` (exclusive)
   */
  redactByteRange(window: Uint8Array, from: number, to: number): Uint8Array {
    if (!this.matcher) return window.subarray(from, to);
    const text = Buffer.from(window.buffer, window.byteOffset, window.byteLength).toString('latin1');
    return Buffer.from(redactRange(text, this.bytes().matcher, from, to, REDACTED), 'latin1');
  }

  private bytes(): ByteForms {
    if (!this.byteForms) {
      const forms = this.forms.map((form) => Buffer.from(form, 'utf8').toString('latin1'));
      this.byteForms = { matcher: new FormMatcher(forms), longest: forms.reduce((longest, form) => Math.max(longest, form.length), 0) };
    }
    return this.byteForms;
  }

  /**
   * `value` with every string in it (object keys included) redacted; the same object when
   * nothing changed, so a notification shared by many connections is not copied for nothing.
   */
  redact<T>(value: T): T {
    if (!this.matcher) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.redactText(value);
    if (Array.isArray(value)) {
      let changed = false;
      const next = value.map((entry) => {
        const redacted = this.walk(entry);
        if (redacted !== entry) changed = true;
        return redacted;
      });
      return changed ? next : value;
    }
    if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
      return this.walkObject(value as Record<string, unknown>, commandReadCuts(value as Record<string, unknown>));
    }
    if (value instanceof Error) {
      const message = this.redactText(value.message);
      const stack = value.stack !== undefined ? this.redactText(value.stack) : undefined;
      if (message === value.message && stack === value.stack) return value;
      const copy = new Error(message);
      if (stack !== undefined) copy.stack = stack;
      return copy;
    }
    return value;
  }

  /**
   * An object redacted entry by entry. Texts that are parts of longer ones are redacted with
   * their cuts (see `cut-texts.ts`): a conversation's `preview`, and the output of a read of a
   * background command (`output`, whose status lines follow the read text, and `details.output`).
   * @param readCuts the cuts of the command output the object reports, when it is such a `tool_call`
   */
  private walkObject(value: Record<string, unknown>, readCuts: TextCuts | undefined): Record<string, unknown> {
    let changed = false;
    const next: Record<string, unknown> = {};
    const readText = readCuts ? (value.details as { output?: unknown } | undefined)?.output : undefined;
    // The read text is redacted once, for `output` and `details.output` alike.
    const readShown = readCuts && typeof readText === 'string' ? this.redactPiece(readText, readCuts) : undefined;
    for (const [key, entry] of Object.entries(value)) {
      const redactedKey = this.redactText(key);
      let redacted: unknown;
      if (readCuts && key === 'output' && typeof entry === 'string') {
        // The status lines after the read text are the tool's own: only the read text is cut.
        const read = typeof readText === 'string' && entry.startsWith(readText) ? readText : undefined;
        redacted = read !== undefined ? (readShown as string) + this.redactText(entry.slice(read.length)) : this.redactPiece(entry, { start: readCuts.start === true });
      } else if (readShown !== undefined && key === 'details') {
        const { output: _output, ...rest } = entry as Record<string, unknown>;
        const others = this.walkObject(rest, undefined);
        redacted = others === rest && readShown === readText ? entry : { ...others, output: readShown };
      } else if (key === 'preview' && typeof entry === 'string') {
        redacted = this.redactPiece(entry, { end: isCutPreview(entry) });
      } else {
        redacted = this.walk(entry);
      }
      if (redacted !== entry || redactedKey !== key) changed = true;
      next[redactedKey] = redacted;
    }
    return changed ? next : value;
  }
}

/**
 * Redaction of secret values (SPEC §9: "secrets … redacted wherever they would appear"):
 * every string leaving the server (protocol answers and notifications), every entry written
 * to a conversation log and every server log line has each known secret value replaced by
 * `***`. A value is matched literally in each of its forms (itself, its `.env` quoting, its
 * JSON escaping: see `secret-encodings.ts`), longest first, so a value containing another is
 * replaced whole.
 *
 * Streamed text (`item/delta`) is redacted as a stream, not chunk by chunk, so a value split
 * across chunks is caught too: {@link SecretRedactor.redactStreamChunk} holds back a chunk's
 * tail while it could be the beginning of a value (see `stream-redaction.ts`). A piece of a
 * file is redacted within the bytes around it ({@link SecretRedactor.redactByteRange}), so a
 * value its edges cut is caught as well.
 */
import { FormMatcher } from './form-matcher.js';
import { redactRange } from './range-redaction.js';
import { encodedForms } from './secret-encodings.js';

/** What replaces a secret value. */
export const REDACTED = '***';

/** Forms matched on bytes: each form's UTF-8 bytes, one character per byte (`latin1`). */
interface ByteForms {
  matcher: FormMatcher;
  /** Bytes of the longest form. */
  longest: number;
}

/** The set of secret values to hide, and the functions that hide them. */
export class SecretRedactor {
  private matcher: FormMatcher | undefined;
  /** The forms of every value, by their first UTF-16 unit: a stream's tail that begins one may still become it. */
  private formsByFirstUnit = new Map<string, string[]>();
  /** Length of the longest form, characters. */
  private longest = 0;
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
    this.formsByFirstUnit = new Map();
    for (const form of this.forms) {
      const first = form[0] as string;
      const list = this.formsByFirstUnit.get(first);
      if (list) list.push(form);
      else this.formsByFirstUnit.set(first, [form]);
    }
    this.longest = this.forms.reduce((longest, form) => Math.max(longest, form.length), 0);
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

  /** `text` with every secret value, in each of its forms, replaced by `***`. */
  redactText(text: string): string {
    if (!this.matcher) return text;
    const scanner = this.matcher.scanner(text);
    let match = scanner.next(0);
    if (!match) return text;
    const parts: string[] = [];
    let end = 0;
    for (; match; match = scanner.next(end)) {
      parts.push(text.slice(end, match.index), REDACTED);
      end = match.index + match.length;
    }
    parts.push(text.slice(end));
    return parts.join('');
  }

  /**
   * One chunk of a stream of text, redacted so that the concatenation of what every chunk
   * gives, followed by {@link redactText} of what is held at the end, equals `redactText` of
   * the whole stream. A value split across chunks is therefore caught: the end of
   * `held + chunk` that could still be the beginning of a value's form (at most the longest
   * form's length − 1 characters) is not given yet but returned as `held`, for the next chunk.
   * The matching is the one of {@link redactText} (leftmost, longest form first).
   * @param held what the previous chunk of the stream held back (`''` at the start)
   * @param chunk the new text of the stream
   * @returns `text`, the redacted text that may go out now, and `held`, the raw text held back
   */
  redactStreamChunk(held: string, chunk: string): { text: string; held: string } {
    const buffer = held + chunk;
    const matcher = this.matcher;
    if (!matcher) return { text: buffer, held: '' };
    // Undecided positions: where the rest of the buffer is a proper prefix of a form, so what
    // matches there depends on text not seen yet. Only the last `longest - 1` can be.
    const undecided: number[] = [];
    for (let index = Math.max(0, buffer.length - this.longest + 1); index < buffer.length; index++) {
      if (this.beginsForm(buffer, index)) undecided.push(index);
    }
    if (undecided.length === 0) return { text: this.redactText(buffer), held: '' };
    let text = '';
    let end = 0;
    let next = 0;
    const scanner = matcher.scanner(buffer);
    for (let match = scanner.next(0); match !== undefined; match = scanner.next(end)) {
      // An undecided position inside an earlier match is never scanned (as in `redactText`).
      while (next < undecided.length && (undecided[next] as number) < end) next++;
      if (next < undecided.length && (undecided[next] as number) <= match.index) break;
      text += buffer.slice(end, match.index) + REDACTED;
      end = match.index + match.length;
    }
    while (next < undecided.length && (undecided[next] as number) < end) next++;
    const stop = undecided[next] ?? buffer.length;
    return { text: text + buffer.slice(end, stop), held: buffer.slice(stop) };
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

  /** Whether `text` from `index` on could still become a form: it is a proper prefix of one. */
  private beginsForm(text: string, index: number): boolean {
    const candidates = this.formsByFirstUnit.get(text[index] as string);
    if (!candidates) return false;
    const rest = text.slice(index);
    return candidates.some((form) => form.length > rest.length && form.startsWith(rest));
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
      let changed = false;
      const next: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(value)) {
        const redactedKey = this.redactText(key);
        const redacted = this.walk(entry);
        if (redacted !== entry || redactedKey !== key) changed = true;
        next[redactedKey] = redacted;
      }
      return changed ? next : value;
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
}

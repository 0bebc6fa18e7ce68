/**
 * Redaction of secret values (SPEC §9: "secrets … redacted wherever they would appear"):
 * every string leaving the server (protocol answers and notifications), every entry written
 * to a conversation log and every server log line has each known secret value replaced by
 * `***`. Values are matched literally, longest first, so a value containing another is
 * replaced whole.
 *
 * Streamed text (`item/delta`) is redacted as a stream, not chunk by chunk, so a value split
 * across chunks is caught too: {@link SecretRedactor.redactStreamChunk} holds back a chunk's
 * tail while it could be the beginning of a value (see `stream-redaction.ts`).
 */

/** What replaces a secret value. */
export const REDACTED = '***';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The set of secret values to hide, and the functions that hide them. */
export class SecretRedactor {
  private pattern: RegExp | undefined;
  /** Every proper prefix of every value: a stream's tail that is one may still become a value. */
  private prefixes = new Set<string>();
  /** Length of the longest value, characters. */
  private longest = 0;
  /** Redacted copies of shared objects (one notification goes to many connections), until the values change. */
  private shared = new WeakMap<object, unknown>();

  /** Replaces the values to hide (called whenever a secret is set or removed). */
  setValues(values: Iterable<string>): void {
    const distinct = [...new Set(values)].filter((value) => value.length > 0).sort((a, b) => b.length - a.length);
    this.pattern = distinct.length > 0 ? new RegExp(distinct.map(escapeRegExp).join('|'), 'g') : undefined;
    this.prefixes = new Set(distinct.flatMap((value) => Array.from({ length: value.length - 1 }, (_, length) => value.slice(0, length + 1))));
    this.longest = distinct[0]?.length ?? 0;
    this.shared = new WeakMap();
  }

  /**
   * {@link redact} of an object sent to many connections, computed once per object (and per
   * set of values): the object must not change after it is first redacted.
   */
  redactShared<T extends object>(value: T): T {
    if (!this.pattern) return value;
    if (this.shared.has(value)) return this.shared.get(value) as T;
    const redacted = this.redact(value);
    this.shared.set(value, redacted);
    return redacted;
  }

  /** Whether any value is known (when not, every function here returns its input unchanged). */
  get active(): boolean {
    return this.pattern !== undefined;
  }

  /** `text` with every secret value replaced by `***`. */
  redactText(text: string): string {
    if (!this.pattern) return text;
    this.pattern.lastIndex = 0;
    return this.pattern.test(text) ? text.replace(this.pattern, REDACTED) : text;
  }

  /**
   * One chunk of a stream of text, redacted so that the concatenation of what every chunk
   * gives, followed by {@link redactText} of what is held at the end, equals `redactText` of
   * the whole stream. A value split across chunks is therefore caught: the end of
   * `held + chunk` that could still be the beginning of a value (at most the longest value's
   * length − 1 characters) is not given yet but returned as `held`, for the next chunk.
   * The matching is the one of {@link redactText} (leftmost, longest value first).
   * @param held what the previous chunk of the stream held back (`''` at the start)
   * @param chunk the new text of the stream
   * @returns `text`, the redacted text that may go out now, and `held`, the raw text held back
   */
  redactStreamChunk(held: string, chunk: string): { text: string; held: string } {
    const buffer = held + chunk;
    const pattern = this.pattern;
    if (!pattern) return { text: buffer, held: '' };
    // Undecided positions: where the rest of the buffer is a proper prefix of a value, so what
    // matches there depends on text not seen yet. Only the last `longest - 1` can be.
    const undecided: number[] = [];
    for (let index = Math.max(0, buffer.length - this.longest + 1); index < buffer.length; index++) {
      if (this.prefixes.has(buffer.slice(index))) undecided.push(index);
    }
    if (undecided.length === 0) return { text: this.redactText(buffer), held: '' };
    let text = '';
    let end = 0;
    let next = 0;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(buffer); match !== null; match = pattern.exec(buffer)) {
      // An undecided position inside an earlier match is never scanned (as in `redactText`).
      while (next < undecided.length && (undecided[next] as number) < end) next++;
      if (next < undecided.length && (undecided[next] as number) <= match.index) break;
      text += buffer.slice(end, match.index) + REDACTED;
      end = match.index + match[0].length;
    }
    pattern.lastIndex = 0;
    while (next < undecided.length && (undecided[next] as number) < end) next++;
    const stop = undecided[next] ?? buffer.length;
    return { text: text + buffer.slice(end, stop), held: buffer.slice(stop) };
  }

  /**
   * `value` with every string in it (object keys included) redacted; the same object when
   * nothing changed, so a notification shared by many connections is not copied for nothing.
   */
  redact<T>(value: T): T {
    if (!this.pattern) return value;
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

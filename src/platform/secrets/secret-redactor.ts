/**
 * Redaction of secret values (SPEC §9: "secrets … redacted wherever they would appear"):
 * every string leaving the server (protocol answers and notifications), every entry written
 * to a conversation log and every server log line has each known secret value replaced by
 * `***`. Values are matched literally, longest first, so a value containing another is
 * replaced whole.
 *
 * Streamed deltas are redacted chunk by chunk: a value split across two `item/delta` chunks
 * is not caught in them (the completed item, stored and sent as `item/completed`, is).
 */

/** What replaces a secret value. */
export const REDACTED = '***';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The set of secret values to hide, and the functions that hide them. */
export class SecretRedactor {
  private pattern: RegExp | undefined;
  /** Redacted copies of shared objects (one notification goes to many connections), until the values change. */
  private shared = new WeakMap<object, unknown>();

  /** Replaces the values to hide (called whenever a secret is set or removed). */
  setValues(values: Iterable<string>): void {
    const distinct = [...new Set(values)].filter((value) => value.length > 0).sort((a, b) => b.length - a.length);
    this.pattern = distinct.length > 0 ? new RegExp(distinct.map(escapeRegExp).join('|'), 'g') : undefined;
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

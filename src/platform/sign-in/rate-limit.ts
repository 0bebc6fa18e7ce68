/**
 * The sign-in rate limit (SPEC §9): at most `max` attempts (password sign-in, claim,
 * invitation, pairing) per client address in a sliding window. Keyed by the address
 * `clientAddress` gives, so a client cannot reset its budget by sending forged forwarding headers.
 */

/** Answer of {@link SignInRateLimit.attempt}. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Attempts per client address in a sliding window, kept in memory. */
export class SignInRateLimit {
  private readonly attempts = new Map<string, number[]>();

  /**
   * @param max attempts allowed per window
   * @param windowMs the window, ms
   * @param now the clock, ms since the epoch
   */
  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one attempt of `address`; refused (with the seconds until one is allowed) past the limit. */
  attempt(address: string): RateDecision {
    const now = this.now();
    const recent = (this.attempts.get(address) ?? []).filter((time) => time > now - this.windowMs);
    if (recent.length >= this.max) {
      this.attempts.set(address, recent);
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(((recent[0] as number) + this.windowMs - now) / 1000)) };
    }
    recent.push(now);
    this.attempts.set(address, recent);
    // Bounded memory: forget idle addresses once the map grows.
    if (this.attempts.size > 10_000) {
      for (const [key, times] of this.attempts) if ((times.at(-1) ?? 0) <= now - this.windowMs) this.attempts.delete(key);
    }
    return { allowed: true };
  }
}

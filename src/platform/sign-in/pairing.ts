/**
 * Pairing a phone's browser (SPEC §9): a signed-in user asks for a one-time link; opening it
 * on another device starts a web session of the same user there. Codes live in memory only
 * (a restart voids them), as SHA-256 hashes, for {@link PAIRING_TTL_MS}.
 */
import { hashSecret, newSecret } from '../platform-secrets.js';

/** How long a pairing link works, ms (5 minutes). */
export const PAIRING_TTL_MS = 5 * 60 * 1000;
/** Most pairing codes waiting at once (older ones are dropped first). */
const MAX_PENDING = 1000;

/** One-time pairing codes. */
export class PairingCodes {
  private readonly pending = new Map<string, { userId: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new code for `userId` and when it expires (ms since the epoch). */
  create(userId: string): { code: string; expiresAt: number } {
    const code = newSecret();
    const expiresAt = this.now() + PAIRING_TTL_MS;
    if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string);
    this.pending.set(hashSecret(code), { userId, expiresAt });
    return { code, expiresAt };
  }

  /** Uses up a code; the user it pairs, or undefined when unknown, used or expired. */
  take(code: string): string | undefined {
    const key = hashSecret(code);
    const entry = this.pending.get(key);
    this.pending.delete(key);
    return entry && entry.expiresAt > this.now() ? entry.userId : undefined;
  }
}

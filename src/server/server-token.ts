/**
 * The server token (SPEC §5: the secret a local client presents, found in `runtime-server.yaml`)
 * and the constant-time comparison of secrets. A module of its own so that `node:crypto` is
 * loaded after the server listens, not before (docs/performance.md, "Start-up").
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A new server token: 32 random bytes (`crypto.randomBytes`), base64url, 43 characters. */
export function createServerToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether a secret given by a client is the expected one, compared in constant time (the
 * time taken does not depend on where the two differ; `crypto.timingSafeEqual`).
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

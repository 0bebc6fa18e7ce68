/**
 * Password hashing of local accounts with argon2id (RFC 9106) through `@node-rs/argon2`, with
 * the parameters of OWASP's Password Storage Cheat Sheet (19 MiB, 2 passes, 1 lane). The
 * encoded hash carries its own parameters, so raising them later keeps old hashes verifiable.
 * The native module is loaded on the first hash or verification: a server nobody signs in to
 * never holds it.
 */
import { PlatformInputError } from '../platform-errors.js';

/** Shortest password accepted, in characters (NIST SP 800-63B §5.1.1.2 asks for at least 8). */
export const MIN_PASSWORD_LENGTH = 8;
/** Longest password accepted, in characters (bounds the hashing work one request can cause). */
export const MAX_PASSWORD_LENGTH = 1024;

/** argon2id (algorithm 2 of `@node-rs/argon2`), memory in KiB. */
const ARGON2_OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Checks a new password's length.
 * @throws PlatformInputError naming `field` when it is too short or too long
 */
export function checkNewPassword(password: unknown, field = 'password'): string {
  if (typeof password !== 'string') throw new PlatformInputError(field, 'missing or not a string');
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) throw new PlatformInputError(field, `too short: at least ${MIN_PASSWORD_LENGTH} characters`);
  if (length > MAX_PASSWORD_LENGTH) throw new PlatformInputError(field, `too long: at most ${MAX_PASSWORD_LENGTH} characters`);
  return password;
}

/** The argon2id hash (PHC string format) of a password. */
export async function hashPassword(password: string): Promise<string> {
  const { hash } = await import('@node-rs/argon2');
  return hash(password, ARGON2_OPTIONS);
}

/** Whether `password` matches `encoded` (a PHC string made by {@link hashPassword}); false for a malformed hash. */
export async function verifyPassword(encoded: string, password: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const { verify } = await import('@node-rs/argon2');
  try {
    return await verify(encoded, password);
  } catch {
    return false;
  }
}

/** A hash of a random password, verified against when the account does not exist (same time taken either way). */
let decoy: Promise<string> | undefined;
/** Spends the time of one verification without an account (hides which email addresses exist). */
export async function verifyNothing(password: string): Promise<false> {
  decoy ??= hashPassword('decoy password that matches nothing');
  await verifyPassword(await decoy, password);
  return false;
}

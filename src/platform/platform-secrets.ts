/**
 * Random secrets of the platform (session ids, API tokens, invitation and pairing codes) and
 * how they are kept: the server stores only the SHA-256 hash of each one, so a copy of the
 * platform database gives no usable secret. 256-bit secrets do not need a slow hash: guessing
 * one is hopeless either way.
 */
import { createHash, randomBytes } from 'node:crypto';

/** A new random secret: 32 bytes as base64url (43 characters), after `prefix`. */
export function newSecret(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** A short random public id (`<prefix>_` and 16 base32-ish characters), for listing things without their secret. */
export function newPublicId(prefix: string): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`;
}

/** The hex SHA-256 of a secret: what is stored and looked up. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

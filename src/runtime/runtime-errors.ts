/**
 * Errors the runtime throws for requests naming what does not exist or cannot be used; the
 * server maps them to protocol errors (`notFound`, `invalidParams`).
 */

/** A named thing that does not exist (maps to the protocol's `notFound` error). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/**
 * A work location that cannot be used: a relative or repeated entry, or a working directory
 * that does not exist or is not a directory on its executor. The message names both.
 */
export class InvalidWorkLocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidWorkLocationError';
  }
}

/**
 * Errors of the platform layer (SPEC §9). Each names what was wrong so the protocol handler or
 * HTTP route can pass the message on unchanged.
 */

/** A request's input is wrong; `field` names the key (e.g. `email`, `params.role`). */
export class PlatformInputError extends Error {
  /**
   * @param field the key that was wrong, as the client wrote it
   * @param message what is wrong with it
   */
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'PlatformInputError';
  }
}

/** The request is understood but the platform's state forbids it (e.g. removing the last administrator). */
export class PlatformConflictError extends Error {
  /**
   * @param reason a stable machine-readable reason (`last_administrator`, `already_claimed`, ...)
   * @param message what happened and what to do instead
   */
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'PlatformConflictError';
  }
}

/** A named user, session, token or invitation does not exist. */
export class PlatformNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlatformNotFoundError';
  }
}

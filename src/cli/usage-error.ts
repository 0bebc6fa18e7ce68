/** A mistake in how a command was called: exit code 64 (EX_USAGE, sysexits.h). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A request that is valid but cannot be done in the current state of what it names (input to
 * a closed session, for example). Clients get its message with the JSON-RPC code `-32009`
 * (`ErrorCodes.conflict`, docs/protocol.md).
 */
export class StateConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateConflictError';
  }
}

/**
 * A request that is valid but cannot be done in the current state of what it names (input to
 * a closed session, for example). Clients get its message with the JSON-RPC code `-32009`
 * (`ErrorCodes.conflict`, docs/protocol.md) and, when `reason` is set, `data.reason`.
 */
export class StateConflictError extends Error {
  /**
   * @param message human-readable, in protocol terms
   * @param reason machine-readable reason sent as `data.reason` (e.g. `turn_running`)
   */
  constructor(
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'StateConflictError';
  }
}

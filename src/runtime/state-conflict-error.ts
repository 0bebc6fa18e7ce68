/**
 * A request that is valid but cannot be done in the current state of what it names (input to
 * a closed session, for example). Clients get its message with the JSON-RPC code `-32009`
 * (`ErrorCodes.conflict`, docs/protocol.md) and, when given, `data.reason`.
 */
export class StateConflictError extends Error {
  /**
   * @param message what conflicts, in protocol terms
   * @param reason machine-readable cause sent as `data.reason` (`no_running_turn`, `turn_mismatch`, `input_started`, …)
   */
  constructor(
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'StateConflictError';
  }
}

import type { StateConflictReason } from '../protocol/json-rpc.js';

/**
 * A request that is valid but cannot be done in the current state of what it names (input to
 * a closed session, for example). Clients get its message with the JSON-RPC code `-32009`
 * (`ErrorCodes.conflict`, docs/protocol.md) and `data: {reason}`, so they can tell the cases
 * apart without reading the message.
 */
export class StateConflictError extends Error {
  /**
   * @param message human-readable, in protocol terms
   * @param reason the machine-readable reason sent as `error.data.reason`
   */
  constructor(
    message: string,
    readonly reason: StateConflictReason,
  ) {
    super(message);
    this.name = 'StateConflictError';
  }
}

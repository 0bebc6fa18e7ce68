/**
 * Catching the protocol error of a request that must fail, for tests that then check its code,
 * message or data.
 */
import { RuntimeClientError } from '../../src/client/runtime-client.js';

/**
 * The JSON-RPC error a protocol request was refused with.
 * @param promise a request through `RuntimeClient` (or anything resolving to its answer)
 * @returns the `RuntimeClientError` it rejected with (its `code`, `message` and `data`)
 * @throws Error when the request succeeded or failed with anything but a protocol error
 */
export async function protocolFailure(promise: Promise<unknown>): Promise<RuntimeClientError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof RuntimeClientError)) throw new Error(`expected a protocol error, got ${String(error)}`);
  return error;
}

/**
 * How failures reach the editor as ACP errors: the runtime's errors keep their meaning
 * (not found, invalid params), content ACP allows but the runtime cannot take is invalid
 * params, anything else an internal error.
 */
import * as acp from '@agentclientprotocol/sdk';
import { RuntimeClientError } from '../../client/runtime-client.js';
import { ErrorCodes } from '../../protocol/index.js';
import { UnsupportedContentError } from './content.js';

/** ACP's "resource not found" error code. */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * The ACP error an editor gets for `error`, thrown by a handler of the bridge.
 * @param error anything thrown: an `acp.RequestError` is returned as it is
 * @returns the error to throw back to the editor
 */
export function toAcpError(error: unknown): acp.RequestError {
  if (error instanceof acp.RequestError) return error;
  if (error instanceof UnsupportedContentError) return acp.RequestError.invalidParams(undefined, error.message);
  if (error instanceof RuntimeClientError) {
    if (error.code === ErrorCodes.notFound) return new acp.RequestError(RESOURCE_NOT_FOUND, error.message);
    if (error.code === ErrorCodes.invalidParams) return acp.RequestError.invalidParams(undefined, error.message);
    return new acp.RequestError(error.code, error.message);
  }
  return acp.RequestError.internalError(undefined, error instanceof Error ? error.message : String(error));
}

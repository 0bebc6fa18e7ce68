/**
 * What a client is told when a request fails (docs/protocol.md, "Errors"). Errors of the
 * runtime's and the platform's own kinds carry messages in protocol terms and keep them, with
 * the method name in front; anything else is an internal error, logged in full by the caller
 * while the client gets only a reference to the log line (no paths or storage details).
 */
import { randomBytes } from 'node:crypto';
import { MissingSecretError } from '../config/providers.js';
import { DamagedConversationError } from '../dao/log-damage.js';
import { UnknownModelError } from '../models/model-registry.js';
import { PlatformConflictError, PlatformInputError, PlatformNotFoundError } from '../platform/platform-errors.js';
import { DATA_DIRECTORY_MARK, ErrorCodes, RpcError, type StateConflictReason } from '../protocol/index.js';
import { NotFoundError } from '../runtime/runtime.js';
import { StateConflictError } from '../runtime/state-conflict-error.js';
import { UnreadableStreamError } from '../storage/log-storage.js';

/** An absolute path up to the data directory's `conversations/` folder (SPEC §4 layout). */
const DATA_DIRECTORY_PREFIX = /(?:\/[^\s/:'"()]+)+?\/(?=conversations\/)/g;

/**
 * `text` with the data directory's absolute path written `<data dir>/`: what clients are told
 * of a damaged log names the file by the storage layout, not by where the data directory is on
 * the server's machine (user names, mount points).
 */
export function hideDataDirectory(text: string): string {
  return text.replace(DATA_DIRECTORY_PREFIX, DATA_DIRECTORY_MARK);
}

/**
 * The protocol error for `error`, thrown while handling `method`.
 * @param logInternal called with a fresh reference (8 hex digits) when `error` is of no known
 *   kind, so the caller logs it under the reference the client is given
 */
export function requestError(method: string, error: unknown, logInternal: (reference: string) => void): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof NotFoundError) return new RpcError(ErrorCodes.notFound, `${method}: ${error.message}`);
  if (error instanceof UnknownModelError) return new RpcError(ErrorCodes.invalidParams, `${method}: ${error.message}`);
  if (error instanceof StateConflictError) return RpcError.conflict(`${method}: ${error.message}`, error.reason as StateConflictReason);
  // Named, file and all, since the user has to repair or restore that file (docs/storage.md,
  // "Damaged logs"); the file relative to the data directory, whose place on the machine is not a client's business.
  if (error instanceof DamagedConversationError || error instanceof UnreadableStreamError) return RpcError.conflict(`${method}: ${hideDataDirectory(error.message)}`, 'log_damaged');
  if (error instanceof PlatformInputError) return new RpcError(ErrorCodes.invalidParams, `${method}: params.${error.message}`);
  if (error instanceof PlatformNotFoundError) return new RpcError(ErrorCodes.notFound, `${method}: params.${error.message}`);
  if (error instanceof PlatformConflictError) return RpcError.conflict(`${method}: ${error.message}`, error.reason as StateConflictReason);
  // The server's configuration lacks a key: the request is fine, the server cannot do it now.
  if (error instanceof MissingSecretError) return RpcError.conflict(`${method}: ${error.message}`, 'provider_key_missing');
  const reference = randomBytes(4).toString('hex');
  logInternal(reference);
  return new RpcError(ErrorCodes.internalError, `${method}: internal error (reference ${reference} in the server log)`);
}

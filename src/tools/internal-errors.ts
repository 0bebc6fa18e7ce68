/**
 * Telling a tool's own failures (a missing file, a rejected patch: messages written for the
 * model) from internal ones (a JavaScript `RangeError` such as "Maximum call stack size
 * exceeded", a `TypeError` from a bug, a thrown non-error). Internal details go to the server
 * log under a short reference; the model only learns what the tool could not do.
 */
import { randomBytes } from 'node:crypto';
import { createLogger, type Logger } from '../logger.js';

/** The built-in error classes JavaScript itself throws; their messages describe code, not the task. */
const LANGUAGE_ERRORS: readonly (new (...args: never[]) => Error)[] = [EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError];

/**
 * Whether a thrown value is an internal failure rather than a message meant for the model:
 * anything that is not an `Error`, and the language's own error classes (`RangeError`,
 * `TypeError`…, including Node's argument-check errors, which are `TypeError`s).
 * @param error the thrown value
 */
export function isInternalError(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  return LANGUAGE_ERRORS.some((errorClass) => error instanceof errorClass);
}

let logger: Logger | undefined;

/**
 * Sets where internal tool failures are logged (the server passes its own logger); by
 * default a logger on stderr is created on first use.
 * @param target the logger, or undefined to go back to the default
 */
export function setToolFailureLogger(target: Logger | undefined): void {
  logger = target;
}

/**
 * Logs an internal failure of a tool with its stack and returns the reference logged with it
 * (8 hexadecimal digits), for the message shown to the model.
 * @param toolName the tool that failed
 * @param error the thrown value
 */
export function reportInternalError(toolName: string, error: unknown): string {
  const reference = randomBytes(4).toString('hex');
  logger ??= createLogger();
  const details = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { thrown: String(error) };
  logger.error({ tool: toolName, reference, error: details }, `internal failure in tool ${toolName}`);
  return reference;
}

/**
 * The sentence that replaces an internal failure's message for the model.
 * @param reference the reference returned by `reportInternalError`
 */
export function internalFailureNote(reference: string): string {
  return `an internal error occurred in the tool (logged on the server as ${reference})`;
}

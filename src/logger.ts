import { pino, type LogFn } from 'pino';
import { logsAreReadable, readableLogDestination } from './log-lines.js';

/**
 * What the server logs through: pino's level methods and `flush`. A pino logger is one; so is
 * the deferred logger of `openvaala serve` (`deferred-logger.ts`), which hands its lines to pino
 * once pino has loaded.
 */
export interface Logger {
  fatal: LogFn;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
  /** Writes what the destination still buffers, then calls `callback`. */
  flush(callback?: (error?: Error) => void): void;
}

/**
 * Creates the server logger: JSON lines on stderr (pino), level from `OPENVAALA_LOG_LEVEL`
 * (default `info`). Stdout stays free for commands that print results. On a terminal (or with
 * `OPENVAALA_LOG_FORMAT=text`) the lines are written readable instead (`log-lines.ts`).
 * @param level a pino level name (`fatal` … `trace`, or `silent`)
 * @param clock the time stamped on each line, ms since the epoch (default `Date.now`); the
 *   deferred logger passes the time a line was logged when it hands over lines logged before
 *   pino loaded
 */
export function createLogger(level = process.env.OPENVAALA_LOG_LEVEL ?? 'info', clock: () => number = Date.now): pino.Logger {
  // The same `"time"` field as pino's default (`pino.stdTimeFunctions.epochTime`), from `clock`.
  const destination = logsAreReadable() ? readableLogDestination(2) : pino.destination(2);
  return pino({ level, base: { pid: process.pid }, timestamp: () => `,"time":${clock()}` }, destination);
}

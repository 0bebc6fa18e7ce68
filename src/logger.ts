import { pino, type Logger } from 'pino';

/** The logger type used across the server. */
export type { Logger };

/**
 * Creates the server logger: JSON lines on stderr (pino), level from `OPENVAALA_LOG_LEVEL`
 * (default `info`). Stdout stays free for commands that print results.
 */
export function createLogger(level = process.env.OPENVAALA_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination(2));
}

/**
 * The logger of `openvaala serve` while pino has not loaded. Loading pino (with sonic-boom and
 * the helpers it requires: about 125 KB of code and Node.js's `worker_threads` and `assert`) is
 * not needed to answer `/healthz`, so the server listens first: this logger keeps the lines
 * logged meanwhile, imports the logger module and makes the pino logger at the first of them,
 * and hands them to pino in order, each stamped with the time it was logged; from then on every
 * call goes straight to pino. pino stays the only thing that formats and writes lines
 * (docs/performance.md, "Fourth round").
 */
import type { LogFn } from 'pino';
import type { Logger } from './logger.js';

/** The level methods of a {@link Logger}. */
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** One call made before pino loaded: its level, its arguments and when it was made (ms since the epoch). */
interface PendingLine {
  level: Level;
  args: unknown[];
  time: number;
}

/** A {@link Logger} that loads pino on its first line (see the module comment). */
export interface DeferredLogger extends Logger {
  /**
   * Resolves once every line logged so far has been handed to pino and flushed (at once when
   * nothing was logged, without loading pino). A process about to exit awaits it so that lines
   * logged just before are not lost. Never rejects.
   */
  written(): Promise<void>;
}

/**
 * Creates the deferred logger.
 * @param load makes the pino logger, given the clock it must stamp lines with (ms since the
 *   epoch); called once, at the first line. Default: `createLogger` of `logger.ts` (imported then)
 *   at `level`.
 * @param level the pino level name (default `OPENVAALA_LOG_LEVEL`, else `info`); used by the
 *   default `load` only
 * @returns the logger; when `load` fails, the lines kept are dropped after one line on stderr
 *   naming the failure, and later lines are dropped silently
 */
export function createDeferredLogger(load?: (clock: () => number) => Promise<Logger>, level = process.env.OPENVAALA_LOG_LEVEL ?? 'info'): DeferredLogger {
  const loadLogger = load ?? (async (clock: () => number) => (await import('./logger.js')).createLogger(level, clock));
  let target: Logger | undefined;
  let failed = false;
  let loading: Promise<void> | undefined;
  const pending: PendingLine[] = [];
  // The time of the line being handed over, while it is; otherwise lines are stamped now.
  let replayedTime: number | undefined;
  const clock = () => replayedTime ?? Date.now();

  // Settles, never rejects: a failed load is reported and its lines dropped.
  const startLoading = (): Promise<void> =>
    (loading ??= loadLogger(clock).then(
      (logger) => {
        for (const line of pending.splice(0)) {
          replayedTime = line.time;
          try {
            Reflect.apply(logger[line.level], logger, line.args);
          } catch {
            // A line pino cannot write would have thrown to its caller; that caller is gone.
          } finally {
            replayedTime = undefined;
          }
        }
        target = logger;
      },
      (error: unknown) => {
        failed = true;
        process.stderr.write(`openvaala: cannot load the logger (pino): ${(error as Error).message}; ${pending.length} log line(s) dropped\n`);
        pending.length = 0;
      },
    ));

  const method = (level: Level): LogFn =>
    ((...args: unknown[]) => {
      if (target) return Reflect.apply(target[level], target, args);
      if (failed) return;
      pending.push({ level, args, time: Date.now() });
      startLoading().catch(() => undefined);
    }) as LogFn;

  const logger: DeferredLogger = {
    fatal: method('fatal'),
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
    trace: method('trace'),
    flush(callback) {
      if (target) return target.flush(callback);
      if (!loading) return callback?.();
      loading.then(
        () => (target ? target.flush(callback) : callback?.()),
        () => undefined,
      );
    },
    async written() {
      if (!loading) return;
      await loading;
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    },
  };
  return logger;
}

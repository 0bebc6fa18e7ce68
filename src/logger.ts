/**
 * The server log: one JSON object per line on stderr, in the line format of pino (the logger
 * used before, and still accepted wherever a {@link Logger} is): `level` as a number (10 trace,
 * 20 debug, 30 info, 40 warn, 50 error, 60 fatal), `time` in ms since the epoch, `pid`, the
 * logger's bindings, the details given, then `msg`.
 *
 * Written here rather than loaded from pino because `serve` creates its logger before it
 * listens: pino with its stream and worker-thread modules was the largest piece of code loaded
 * before `/healthz` could answer, for the handful of features the server uses (levels, details,
 * children, synchronous writes).
 */
import { writeSync } from 'node:fs';

/**
 * One logging method: `(details, message)` or `(message)`. An `Error` given as the details is
 * logged under `err` with its type, message and stack, its message becoming the line's `msg`
 * when none is given.
 */
export interface LogFunction {
  (details: object, message?: string): void;
  (message: string): void;
}

/**
 * What the server's modules log through. {@link createLogger} makes one; a pino logger is one
 * too (tests and embedders may pass their own).
 */
export interface Logger {
  /** The lowest level written: `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`. */
  level: string;
  fatal: LogFunction;
  error: LogFunction;
  warn: LogFunction;
  info: LogFunction;
  debug: LogFunction;
  trace: LogFunction;
  /** A logger writing to the same place at the same level whose lines also carry `bindings`. */
  child(bindings: Record<string, unknown>): Logger;
  /** Writes out what is buffered (nothing is: every line is written when logged). */
  flush(): void;
}

/** Level names and the numbers written in the `level` field (pino's). */
const LEVEL_VALUES: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
type LevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Where lines go: a file descriptor written synchronously, or a function (tests). */
export type LogDestination = number | ((line: string) => void);

/** The fields an `Error` is logged with (pino's standard `err` serializer keeps the same ones). */
function serializeError(error: Error): Record<string, unknown> {
  const serialized: Record<string, unknown> = { type: error.constructor?.name ?? 'Error', message: error.message, stack: error.stack };
  for (const [key, value] of Object.entries(error)) if (!(key in serialized)) serialized[key] = value;
  if (error.cause !== undefined) serialized.cause = error.cause instanceof Error ? serializeError(error.cause) : error.cause;
  return serialized;
}

/** JSON of one line's fields: errors keep their message and stack, bigints become strings; with `cutCycles`, repeated objects become `[Circular]`. */
function lineJson(fields: Record<string, unknown>, cutCycles: boolean): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(fields, (_key, value: unknown) => {
    if (typeof value === 'bigint') return value.toString();
    if (value !== null && typeof value === 'object') {
      if (cutCycles) {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      if (value instanceof Error) return serializeError(value);
    }
    return value;
  });
}

/** Writes a whole line to a file descriptor, retrying when a non-blocking pipe is full. */
function writeLine(fd: number, line: string): void {
  let buffer = Buffer.from(line);
  while (buffer.length > 0) {
    try {
      buffer = buffer.subarray(writeSync(fd, buffer));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    }
  }
}

class JsonLinesLogger implements Logger {
  #threshold: number;
  #level: string;
  readonly fatal: LogFunction;
  readonly error: LogFunction;
  readonly warn: LogFunction;
  readonly info: LogFunction;
  readonly debug: LogFunction;
  readonly trace: LogFunction;

  constructor(
    level: string,
    private readonly bindings: Record<string, unknown>,
    private readonly destination: LogDestination,
  ) {
    this.#level = level;
    this.#threshold = levelValue(level);
    const method = (name: LevelName): LogFunction => {
      const value = LEVEL_VALUES[name] as number;
      return (details: object | string, message?: string) => {
        if (value >= this.#threshold) this.write(value, details, message);
      };
    };
    this.fatal = method('fatal');
    this.error = method('error');
    this.warn = method('warn');
    this.info = method('info');
    this.debug = method('debug');
    this.trace = method('trace');
  }

  get level(): string {
    return this.#level;
  }

  set level(level: string) {
    this.#threshold = levelValue(level);
    this.#level = level;
  }

  child(bindings: Record<string, unknown>): Logger {
    return new JsonLinesLogger(this.#level, { ...this.bindings, ...bindings }, this.destination);
  }

  flush(): void {}

  private write(level: number, details: object | string, message: string | undefined): void {
    let fields: Record<string, unknown>;
    if (typeof details === 'string') {
      fields = { level, time: Date.now(), ...this.bindings, msg: details };
    } else if (details instanceof Error) {
      fields = { level, time: Date.now(), ...this.bindings, err: details, msg: message ?? details.message };
    } else {
      fields = { level, time: Date.now(), ...this.bindings, ...details };
      if (message !== undefined) fields.msg = message;
    }
    let line: string;
    try {
      line = lineJson(fields, false);
    } catch {
      line = this.fallbackLine(fields, details, message);
    }
    if (typeof this.destination === 'number') writeLine(this.destination, `${line}\n`);
    else this.destination(line);
  }

  /** The line of details plain JSON refused: cycles cut, or the message alone when that fails too. */
  private fallbackLine(fields: Record<string, unknown>, details: object | string, message: string | undefined): string {
    try {
      return lineJson(fields, true);
    } catch (error) {
      // A getter that throws must not make logging throw: the message alone is kept.
      return JSON.stringify({ level: fields.level, time: fields.time, ...this.bindings, msg: typeof details === 'string' ? details : message, logError: `details not serializable: ${(error as Error).message}` });
    }
  }
}

/**
 * The numeric threshold of a level name.
 * @throws Error naming the value and the accepted ones when `level` is not a level
 */
function levelValue(level: string): number {
  const value = LEVEL_VALUES[level];
  if (value === undefined) throw new Error(`unknown log level ${JSON.stringify(level)} (OPENVAALA_LOG_LEVEL or the level given): use one of ${Object.keys(LEVEL_VALUES).join(', ')}`);
  return value;
}

/**
 * Creates the server logger: JSON lines (pino's format, see the module comment) written
 * synchronously to stderr, so stdout stays free for commands that print results and nothing
 * logged is lost when the process exits.
 * @param level lowest level written; default `OPENVAALA_LOG_LEVEL`, else `info`
 * @param destination a file descriptor (default 2, stderr) or a function receiving each line without its newline
 * @throws Error when `level` is not a level name (the message lists them)
 */
export function createLogger(level = process.env.OPENVAALA_LOG_LEVEL ?? 'info', destination: LogDestination = 2): Logger {
  return new JsonLinesLogger(level, { pid: process.pid }, destination);
}

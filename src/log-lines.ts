/**
 * The server's log lines as a person reads them on a terminal. pino writes one JSON object per
 * line (`level` as a number, `time` in ms since the epoch, `msg`, `pid` and the fields logged);
 * a `serve` in the foreground of a terminal shows them as
 * `12:04:31.207 WARN  MCP server stopped mcpServer=files problem="the server stopped"` instead.
 * A file, a pipe or `OPENVAALA_LOG_FORMAT=json` keeps JSON, for tools that read logs.
 */
import { writeSync } from 'node:fs';

/** pino's level numbers and the names shown for them. */
const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** Fields every line has, shown in their own places rather than as `key=value`. */
const PLACED_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

/** A field's value: a string as is when it has no space, quote or `=`; anything else as JSON. */
function fieldValue(value: unknown): string {
  if (typeof value === 'string' && value !== '' && !/[\s"=]/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

/** `hh:mm:ss.mmm` of a time, in the local time zone. */
function clockTime(ms: number): string {
  const date = new Date(ms);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/**
 * One pino JSON line as a readable line (with its newline): time, level, message, then the
 * other fields as `key=value`. A line that is not a JSON object is returned as it is.
 * @param line one line as pino writes it
 */
export function readableLogLine(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return line.endsWith('\n') ? line : `${line}\n`;
  const record = entry as Record<string, unknown>;
  const level = typeof record.level === 'number' ? (LEVEL_NAMES[record.level] ?? String(record.level)) : 'INFO';
  const time = typeof record.time === 'number' ? clockTime(record.time) : '';
  const fields = Object.entries(record)
    .filter(([key]) => !PLACED_FIELDS.has(key))
    .map(([key, value]) => `${key}=${fieldValue(value)}`);
  return `${[time, level.padEnd(5), typeof record.msg === 'string' ? record.msg : '', ...fields].filter((part) => part !== '').join(' ')}\n`;
}

/**
 * Whether the server log is written readable ({@link readableLogLine}) rather than as JSON:
 * `OPENVAALA_LOG_FORMAT` when it is `text` or `json`, else readable only when stderr is a terminal.
 */
export function logsAreReadable(environment: NodeJS.ProcessEnv = process.env, stderrIsTerminal = process.stderr.isTTY === true): boolean {
  const format = environment.OPENVAALA_LOG_FORMAT;
  if (format === 'text') return true;
  if (format === 'json') return false;
  return stderrIsTerminal;
}

/**
 * A pino destination writing readable lines to a file descriptor, synchronously (as
 * `pino.destination(fd)` does), so nothing logged just before an exit is lost.
 * @param fd the file descriptor (2 for stderr)
 */
export function readableLogDestination(fd: number): { write(line: string): void } {
  return { write: (line: string) => void writeSync(fd, readableLogLine(line)) };
}

/**
 * Output streams whose text passes through `terminalText` before it is written: what a human
 * reads from `exec`, `conversations` and the command line's errors holds answers, command output,
 * titles and messages written elsewhere, whose escape sequences must not reach the terminal
 * (or a file it is redirected to). JSON output and archives are written as they are.
 */
import { terminalText } from '../tools/terminal-text.js';
import type { OutputStreams } from './exec-output.js';

/**
 * A stream like `stream` (every property read from it) whose `write` removes escape sequences
 * and control characters from text (see `terminalText`); bytes are written as they are.
 */
export function terminalStream(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  const safe = Object.create(stream) as NodeJS.WritableStream;
  originals.set(safe, stream);
  safe.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => (stream.write as (...args: unknown[]) => boolean)(typeof chunk === 'string' ? terminalText(chunk) : chunk, ...rest)) as NodeJS.WritableStream['write'];
  return safe;
}

/** The stream each {@link terminalStream} wraps. */
const originals = new WeakMap<NodeJS.WritableStream, NodeJS.WritableStream>();

/**
 * The stream under a {@link terminalStream} (or `stream` itself): for a line editor
 * (`node:readline`), which moves the cursor with escape sequences of its own; what it is given
 * to show must then be made safe by its caller (`terminalText`).
 */
export function originalStream(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  return originals.get(stream) ?? stream;
}

/** Both streams made safe for a terminal (see {@link terminalStream}). */
export function terminalStreams(streams: OutputStreams): OutputStreams {
  return { stdout: terminalStream(streams.stdout), stderr: terminalStream(streams.stderr) };
}

/**
 * The streams a command's human output goes to: both made safe for a terminal, or with `json`
 * only stderr (JSON text carries no control character, and must reach its reader byte for byte).
 */
export function humanStreams(streams: OutputStreams, options: { json: boolean }): OutputStreams {
  return options.json ? { stdout: streams.stdout, stderr: terminalStream(streams.stderr) } : terminalStreams(streams);
}

/**
 * Texts that are parts of longer ones, known by where they stand rather than by a marker in
 * them (see `cut-pieces.ts` for why their cut ends matter to the redaction):
 *
 * - the output of a background command is read in parts (`exec_command` with `yield_after_ms`
 *   or `tty` reads the first, `write_stdin` and `kill_command` the next ones): a read after the
 *   first begins where the previous one stopped, and a read of a command still running stops
 *   where its output goes on. A value the command wrote across two reads is in neither whole.
 * - a conversation's `preview` is the start of a message, cut at `PREVIEW_LENGTH` characters.
 */
import { PREVIEW_LENGTH } from '../../dao/conversation-listing.js';
import type { TextCuts } from './secret-redactor.js';

/** The tools whose result reports a read of a background command's output, and whether that read continues an earlier one. */
const COMMAND_READS: ReadonlyMap<string, boolean> = new Map([
  ['exec_command', false],
  ['write_stdin', true],
  ['kill_command', true],
]);

/**
 * The cuts of the output in a `tool_call` item (or its `item/started` partial) that reports a
 * read of a background command: its start is a cut when the read continues an earlier one, its
 * end while the command still runs (`structured.running`). Undefined for any other object.
 * @param value an object found in something being redacted
 */
export function commandReadCuts(value: Record<string, unknown>): TextCuts | undefined {
  if (value.kind !== 'tool_call' || typeof value.toolName !== 'string') return undefined;
  const continues = COMMAND_READS.get(value.toolName);
  const structured = value.structured as { commandId?: unknown; running?: unknown } | undefined;
  if (continues === undefined || typeof structured?.commandId !== 'string') return undefined;
  return { start: continues, end: structured.running === true };
}

/**
 * Whether a tool's streamed output continues text given out before (the output of a
 * background command read again by `write_stdin` or `kill_command`), known from its
 * `item/started`.
 * @param partial the `partial` of the item's `item/started`
 */
export function streamContinuesEarlierOutput(kind: string, partial: Record<string, unknown>): boolean {
  return kind === 'tool_call' && typeof partial.toolName === 'string' && COMMAND_READS.get(partial.toolName) === true;
}

/**
 * Whether a `preview` is the cut start of a longer message: it has the most characters a
 * preview keeps (`PREVIEW_LENGTH`, counted in code points as `previewText` counts them).
 */
export function isCutPreview(preview: string): boolean {
  if (preview.length < PREVIEW_LENGTH) return false;
  let count = 0;
  for (const _character of preview) if (++count >= PREVIEW_LENGTH) return true;
  return false;
}

/**
 * The prompt `openvaala exec` sends, from its argument and stdin, as `codex exec` and
 * `claude -p` read them: the argument alone from a terminal; the argument with piped stdin
 * appended (`git diff | openvaala exec "review this"`); stdin alone with no argument or with `-`.
 */
import type { Readable } from 'node:stream';

/**
 * How long exec waits for the first bytes of a piped stdin when a prompt argument was given, in
 * milliseconds: a process started with a stdin pipe nobody writes to or closes (a CI runner, a
 * tool's subprocess) would otherwise wait forever. Claude Code's `-p` waits as long.
 */
export const STDIN_FIRST_DATA_WAIT_MS = 3_000;

/** The argument that reads the whole prompt from stdin, as in `codex exec -`. */
export const PROMPT_FROM_STDIN = '-';

/** stdin as exec reads it: a stream, a terminal when `isTTY`. */
export type PromptInput = Readable & { isTTY?: boolean };

/**
 * The prompt of one exec run.
 * - no argument: all of stdin when it is not a terminal (read to its end), else `''`;
 * - `-`: all of stdin, read to its end, even from a terminal (ended with Ctrl-D);
 * - any other argument: the argument alone when stdin is a terminal, empty or blank; with the
 *   piped text appended by {@link promptWithStdin} when stdin has some. Once bytes came, stdin
 *   is read to its end; when none come within `firstDataWaitMs`, stdin is left unread, `warn`
 *   is called, and the argument goes alone.
 * @param argument the prompt argument as given, undefined when none was
 * @param input stdin
 * @param warn told, with the message to print, when stdin was given up on
 * @param firstDataWaitMs how long to wait for the first bytes of a piped stdin, ms
 * @returns the prompt; `''` (or blank) when there is none, which the caller refuses
 * @throws Error when stdin cannot be read (e.g. it is a directory)
 */
export async function readExecPrompt(argument: string | undefined, input: PromptInput, warn: (message: string) => void, firstDataWaitMs = STDIN_FIRST_DATA_WAIT_MS): Promise<string> {
  if (argument === PROMPT_FROM_STDIN) return readToEnd(input, undefined);
  if (argument === undefined) return input.isTTY ? '' : readToEnd(input, undefined);
  if (input.isTTY) return argument;
  const piped = await readToEnd(input, firstDataWaitMs);
  if (piped === undefined) {
    warn(`nothing came on stdin within ${firstDataWaitMs / 1000} s; going on with the prompt alone (redirect stdin from /dev/null to skip the wait)`);
    return argument;
  }
  return piped.trim() === '' ? argument : promptWithStdin(argument, piped);
}

/**
 * The prompt argument followed by piped text, in the shape `codex exec` gives it: the argument, a
 * blank line, then the text between `<stdin>` and `</stdin>` lines, so the model can tell the
 * request from the material it is about.
 */
export function promptWithStdin(prompt: string, stdinText: string): string {
  return `${prompt}\n\n<stdin>\n${stdinText}${stdinText.endsWith('\n') ? '' : '\n'}</stdin>`;
}

/**
 * All of `input` as UTF-8 text. With `firstDataWaitMs`, gives up (undefined) when neither a byte
 * nor the end came within that time, and stops reading, so the open pipe keeps nothing waiting.
 */
function readToEnd(input: PromptInput, firstDataWaitMs: number): Promise<string | undefined>;
function readToEnd(input: PromptInput, firstDataWaitMs: undefined): Promise<string>;
function readToEnd(input: PromptInput, firstDataWaitMs: number | undefined): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      clearTimeout(timer);
      input.off('data', onData).off('end', onEnd).off('error', onError);
    };
    const onData = (chunk: Buffer | string) => {
      clearTimeout(timer);
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    };
    const onEnd = () => {
      settle();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (error: Error) => {
      settle();
      reject(error);
    };
    if (firstDataWaitMs !== undefined) {
      timer = setTimeout(() => {
        settle();
        // Nothing reads it any more: without this the open pipe would keep the process alive.
        input.destroy();
        resolve(undefined);
      }, firstDataWaitMs);
    }
    input.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

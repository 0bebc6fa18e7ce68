/**
 * A yes-or-no question asked on the terminal before a command does something that cannot be
 * undone (`openvaala conversations delete`). Only `y` or `yes` confirms: an empty line, any
 * other answer, Ctrl-C or the end of input keep things as they are, as `[y/N]` prompts of
 * other command-line tools do.
 */
import { createInterface } from 'node:readline/promises';
import { terminalText } from '../tools/terminal-text.js';
import { originalStream } from './terminal-streams.js';

/**
 * Asks `question` on `output` and reads one line of `input` (a terminal).
 * @param question the whole prompt, ending where the answer is typed (made safe for the terminal here)
 * @param input the terminal the answer is read from
 * @param output where the question is written (stderr, so stdout keeps only the command's result)
 * @returns true for `y` or `yes` (any case, surrounding spaces ignored); false for anything else, Ctrl-C or end of input
 */
export async function confirmOnTerminal(question: string, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<boolean> {
  const controller = new AbortController();
  // The line editor moves the cursor with escape sequences of its own, so it gets the stream as it is.
  const prompt = createInterface({ input, output: originalStream(output) });
  prompt.on('SIGINT', () => controller.abort());
  // Ctrl-D (end of input) closes the editor without an answer: that is a no, not a wait forever.
  prompt.once('close', () => controller.abort());
  try {
    const answer = (await prompt.question(terminalText(question), { signal: controller.signal })).trim().toLowerCase();
    return answer === 'y' || answer === 'yes';
  } catch {
    output.write('\n');
    return false;
  } finally {
    prompt.close();
  }
}

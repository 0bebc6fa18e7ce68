/**
 * Entry point of the `openvaala` command line (SPEC §2), loaded by `bin/openvaala`. A plain
 * `openvaala serve …` is read without the command tree (commander and the declarations of
 * every command: most of what the command line loads before the server can listen); every
 * other command line, and any `serve` line the quick reading does not take, goes through the
 * command tree of `program.ts`.
 */
import { readServeArgumentsQuickly } from './serve-options.js';

/**
 * Runs the command line; `argv` is `process.argv` (node, script, then the arguments).
 * Resolves when the command's work is done (most commands set `process.exitCode` or exit).
 */
export async function main(argv: string[]): Promise<void> {
  const first = argv[2];
  handleClosedOutput(first === 'serve' ? 'keep running' : 'leave');
  if (first === 'serve') {
    const options = readServeArgumentsQuickly(argv.slice(3));
    if (options !== undefined) return (await import('./serve.js')).runServe(options);
  }
  const { buildProgram, TOP_LEVEL_COMMANDS } = await import('./program.js');
  const only = TOP_LEVEL_COMMANDS.find((name) => name === first);
  await buildProgram(only).parseAsync(argv);
}

/** Exit status of a process ended by SIGPIPE in a shell (128 + 13), as `cat` or `git log` piped into `head` end. */
const BROKEN_PIPE_EXIT_CODE = 141;

/**
 * When the reader of the output goes away (`openvaala conversations show last | head`), a client
 * command ends quietly with {@link BROKEN_PIPE_EXIT_CODE} instead of a stack trace for the
 * `EPIPE` error of its next write (the server's work goes on: a client may leave at any time);
 * the server itself keeps running, its conversations do not depend on who reads its banner.
 */
function handleClosedOutput(onClose: 'leave' | 'keep running'): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      if (onClose === 'leave') process.exit(BROKEN_PIPE_EXIT_CODE);
    });
  }
}

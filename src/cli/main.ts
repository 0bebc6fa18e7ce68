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
  if (first === 'serve') {
    const options = readServeArgumentsQuickly(argv.slice(3));
    if (options !== undefined) return (await import('./serve.js')).runServe(options);
  }
  const { buildProgram, TOP_LEVEL_COMMANDS } = await import('./program.js');
  const only = TOP_LEVEL_COMMANDS.find((name) => name === first);
  await buildProgram(only).parseAsync(argv);
}

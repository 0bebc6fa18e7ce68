/**
 * Options naming a directory that must exist. `--data-dir` of the commands that only use
 * conversations already stored (export, conversations, resuming one): such a command starts a
 * server on the data directory when none runs, and a server creates a missing one, so a
 * mistyped path used to leave a new empty store with a server running on it, and the command
 * said there was no conversation. Likewise an explicit `--config-dir` of the commands that
 * write keys or plugins, and `--project`.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from './usage-error.js';

/**
 * Refuses a `--data-dir` that does not name an existing directory; nothing is created.
 * @param given the option's value as typed, undefined when the option was not given (the default data directory is then used as it is)
 * @param use what the command does with it, for the message, e.g. `exports a stored conversation`
 * @throws UsageError naming the option and the path when it does not exist, is not a directory or cannot be looked at
 */
export function requireExistingDataDir(given: string | undefined, use: string): void {
  requireExistingDirectory('--data-dir', given, `this command ${use} and creates no data directory`);
}

/**
 * Refuses an option naming a directory that does not exist, so a mistyped path is named
 * rather than created and used (a key stored, or a plugin installed, where nothing reads it).
 * @param option the option as typed on the command line, e.g. `--config-dir`
 * @param given the option's value, undefined when the option was not given (then nothing is checked)
 * @param consequence what the message adds after "no such directory", e.g. `give an existing configuration directory`
 * @throws UsageError naming the option and the path when it does not exist, is not a directory or cannot be looked at
 */
export function requireExistingDirectory(option: string, given: string | undefined, consequence: string): void {
  if (given === undefined) return;
  const resolved = path.resolve(given);
  const shown = resolved === given ? given : `${given} (${resolved})`;
  let isDirectory: boolean | undefined;
  try {
    isDirectory = statSync(resolved, { throwIfNoEntry: false })?.isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTDIR') throw new UsageError(`${option} ${shown}: cannot be looked at (${(error as Error).message})`);
  }
  if (isDirectory === undefined) throw new UsageError(`${option} ${shown}: no such directory; ${consequence}`);
  if (!isDirectory) throw new UsageError(`${option} ${shown}: not a directory`);
}

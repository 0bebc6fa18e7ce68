/**
 * What `openvaala serve` says when the server does not start: the option to change, and its
 * value, when one is to blame (the data directory, the address, the port).
 */
import { DataDirLockedError, DataDirUnusableError } from '../server/data-dir-lock.js';
import { ListenError } from '../server/listen-error.js';
import { DATA_DIR_LOCKED_EXIT_CODE } from './exit-codes.js';

/** The options of `serve` that a failure to start can name, as the command was given them. */
export interface ServeOptionValues {
  /** `--data-dir` as typed; undefined when the default data directory was used. */
  dataDir?: string;
  host: string;
  port: number;
}

/**
 * The message and exit code for an error of `startRuntimeServer`: 3 when another server
 * holds the data directory (as before), else 1.
 * @param error what `startRuntimeServer` threw
 * @param given the options the command was given, to name the one to change
 */
export function describeServeFailure(error: unknown, given: ServeOptionValues): { message: string; exitCode: number } {
  if (error instanceof DataDirLockedError) return { message: error.message, exitCode: DATA_DIR_LOCKED_EXIT_CODE };
  if (error instanceof DataDirUnusableError) {
    const message = given.dataDir === undefined ? `${error.message} (the default one, under $XDG_DATA_HOME or ~/.local/share; give another with --data-dir)` : `--data-dir ${given.dataDir}: ${error.problem}`;
    return { message, exitCode: 1 };
  }
  if (error instanceof ListenError && error.option !== undefined) {
    return { message: `--${error.option} ${error.option === 'host' ? given.host : given.port}: ${error.message}`, exitCode: 1 };
  }
  return { message: (error as Error).message, exitCode: 1 };
}

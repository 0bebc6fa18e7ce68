/**
 * Checks of command-line option values, free of the command-line library: the parsers commander
 * calls (`option-values.ts`) and the quick reading of `serve`'s arguments (`serve-options.ts`,
 * which must not load commander) share them, so a value means the same on both paths.
 */
import { statSync } from 'node:fs';

/** An option value no command could use; the message names the option and the value. */
export class OptionValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionValueError';
  }
}

/**
 * An integer option within `[minimum, maximum]`, written in decimal digits with an optional
 * sign: `Number()` alone would also take `0x10`, `1e3`, `" 12 "` and `""` (as 0), none of which
 * a user means as a count or a port.
 * @param name the option as typed (`--port`), for the message
 * @returns a parser of the option's text to the integer
 * @throws OptionValueError (from the parser) naming the option, the range and the value given
 */
export function checkInteger(name: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string): number => {
    const parsed = /^[+-]?\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(parsed) || parsed < minimum || parsed > maximum) {
      throw new OptionValueError(`${name} must be an integer from ${minimum} to ${maximum}, got "${value}"`);
    }
    return parsed;
  };
}

/**
 * A value that must not be empty or blank: `--model ""` or `--resume "$ID"` with `ID` unset
 * would otherwise fall back to the default, or start something new, without a word. Every
 * option and positional argument of the command line has it (`blank-values.ts`).
 * @param name the option as typed (`--model`) or the argument (`<file>`), for the message
 * @throws OptionValueError (from the parser) naming the option or argument
 */
export function checkNonEmpty(name: string): (value: string) => string {
  return (value: string): string => {
    if (value.trim() === '') throw new OptionValueError(`${name} must not be empty`);
    return value;
  };
}

/**
 * A directory option that must name an existing directory (one the command reads, never creates).
 * @param name the option as typed (`--web-root`), for the message
 * @param advice what the message adds after "no such directory", if anything
 * @throws OptionValueError (from the parser) naming the option and the path when it is missing or not a directory
 */
export function checkExistingDirectory(name: string, advice?: string): (value: string) => string {
  return (value: string): string => {
    const stats = statSync(value, { throwIfNoEntry: false });
    if (stats === undefined) throw new OptionValueError(`${name} ${value}: no such directory${advice === undefined ? '' : `; ${advice}`}`);
    if (!stats.isDirectory()) throw new OptionValueError(`${name} ${value}: not a directory`);
    return value;
  };
}

/**
 * An explicit `--config-dir`: it must name an existing directory. Only the default
 * configuration directory is created when missing; a mistyped path would otherwise start a
 * server on the defaults (or store keys and plugins where nothing reads them) without a word.
 * @throws OptionValueError naming the option and the path when it is missing or not a directory
 */
export const checkExistingConfigDirectory: (value: string) => string = checkExistingDirectory('--config-dir', 'give an existing configuration directory (only the default one is created when missing)');

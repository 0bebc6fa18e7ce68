/**
 * Parsers of command-line option values for commander: each refuses a value no command could
 * use, naming the option, through commander's usage error (exit code 64). The checks themselves
 * are in `option-checks.ts`; an empty value is refused for every option by `blank-values.ts`.
 */
import { InvalidArgumentError } from 'commander';
import { checkExistingConfigDirectory, checkExistingDirectory, checkInteger, OptionValueError } from './option-checks.js';

/**
 * Wraps a check of `option-checks.ts` for commander: its {@link OptionValueError} becomes
 * commander's usage error, which commander reports with the option's name (exit 64).
 */
export function forCommander<T>(check: (value: string) => T): (value: string) => T {
  return (value: string): T => {
    try {
      return check(value);
    } catch (error) {
      if (error instanceof OptionValueError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

/**
 * An integer option within `[minimum, maximum]` (see {@link checkInteger}).
 * @throws InvalidArgumentError naming the option, the range and the value given
 */
export function integer(name: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return forCommander(checkInteger(name, minimum, maximum));
}

/**
 * A directory option that must name an existing directory (see {@link checkExistingDirectory}).
 * @throws InvalidArgumentError naming the option and the path when it is missing or not a directory
 */
export function existingDirectory(name: string): (value: string) => string {
  return forCommander(checkExistingDirectory(name));
}

/**
 * An explicit `--config-dir` that must name an existing directory (see {@link checkExistingConfigDirectory}).
 * @throws InvalidArgumentError naming the option and the path when it is missing or not a directory
 */
export const existingConfigDirectory: (value: string) => string = forCommander(checkExistingConfigDirectory);

/**
 * Parsers of command-line option values: each refuses a value no command could use, naming the
 * option, through commander's usage error (exit code 64).
 */
import { statSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';

/**
 * An integer option within `[minimum, maximum]`.
 * @param name the option as typed (`--port`), for the message
 * @throws InvalidArgumentError naming the option, the range and the value given
 */
export function integer(name: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < minimum || parsed > maximum) {
      throw new InvalidArgumentError(`${name} must be an integer from ${minimum} to ${maximum}, got "${value}"`);
    }
    return parsed;
  };
}

/**
 * A text option that must not be empty: `--model ""` (an unset shell variable) would otherwise
 * fall back to the default without a word.
 * @param name the option as typed (`--model`), for the message
 * @throws InvalidArgumentError naming the option
 */
export function nonEmpty(name: string): (value: string) => string {
  return (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`${name} must not be empty`);
    return value;
  };
}

/**
 * A directory option that must name an existing directory (one the command reads, never creates).
 * @param name the option as typed (`--web-root`), for the message
 * @throws InvalidArgumentError naming the option and the path when it is missing or not a directory
 */
export function existingDirectory(name: string): (value: string) => string {
  return (value: string): string => {
    const stats = statSync(value, { throwIfNoEntry: false });
    if (stats === undefined) throw new InvalidArgumentError(`${name} ${value}: no such directory`);
    if (!stats.isDirectory()) throw new InvalidArgumentError(`${name} ${value}: not a directory`);
    return value;
  };
}

/**
 * An explicit `--config-dir`: it must name an existing directory. Only the default
 * configuration directory is created when missing; a mistyped path would otherwise start a
 * server on the defaults (or store keys and plugins where nothing reads them) without a word.
 * @throws InvalidArgumentError naming the option and the path when it is missing or not a directory
 */
export function existingConfigDirectory(value: string): string {
  const stats = statSync(value, { throwIfNoEntry: false });
  if (stats === undefined) throw new InvalidArgumentError(`--config-dir ${value}: no such directory; give an existing configuration directory (only the default one is created when missing)`);
  if (!stats.isDirectory()) throw new InvalidArgumentError(`--config-dir ${value}: not a directory`);
  return value;
}

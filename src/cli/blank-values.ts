/**
 * No option value and no positional argument of the command line may be empty or blank:
 * `--resume "$ID"` with `ID` unset would otherwise start a new conversation, `--data-dir=` use
 * the default directory, `--host ""` listen on every address, `export ""` look a conversation up
 * by nothing. The check is put on every option and argument of the built tree at once, so a
 * command declared later cannot lack it.
 */
import type { Argument, Command, Option } from 'commander';
import { checkNonEmpty } from './option-checks.js';
import { forCommander } from './option-values.js';

/**
 * Puts the blank-value check in front of the parser of every value-taking option and every
 * positional argument of `command` and its subcommands, recursively. The option's own parser
 * (a range, an existing directory) runs after it; a list option without one keeps collecting
 * its values as commander does.
 * @param command the root of the tree, once every command is declared
 * @throws nothing itself; the parsers it installs throw commander's `InvalidArgumentError`
 *   (`--resume must not be empty`, `<file> must not be empty`), which commander reports naming
 *   the option or argument, a usage error (exit 64 through the program's exit override)
 */
export function refuseBlankValues(command: Command): void {
  for (const option of command.options) {
    if (option.required || option.optional) guard(option, option.long ?? option.flags);
  }
  for (const argument of command.registeredArguments) guard(argument, `<${argument.name()}>`);
  for (const child of command.commands) refuseBlankValues(child);
}

/** Installs the check on one option or argument; `shown` is how its message names it. */
function guard(target: Option | Argument, shown: string): void {
  const refuseBlank = forCommander(checkNonEmpty(shown));
  const own = target.parseArg;
  const defaultValue: unknown = target.defaultValue;
  target.argParser((value: string, previous: unknown): unknown => {
    refuseBlank(value);
    if (own) return own(value, previous);
    // What commander does for a list without a parser: the default is replaced, later values added.
    if (target.variadic) return Array.isArray(previous) && previous !== defaultValue ? [...(previous as unknown[]), value] : [value];
    return value;
  });
}

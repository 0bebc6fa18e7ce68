/**
 * What `openvaala <word>` says when `<word>` is no command. The root command opens the terminal
 * UI and takes no operands, so without this a mistyped command (`openvaala expor last`) would
 * be reported by the argument parser as "too many arguments", which names neither the word nor
 * the command that was meant.
 */
import type { Command } from 'commander';
import { similarNames } from '../similar-names.js';

/** `openvaala conversations` for the `conversations` command: the words that run `command`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current !== null; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

/**
 * Reports `word` as an unknown command of `program` (the root or a command with subcommands) through commander's error path (so the
 * program's exit code for usage mistakes applies), with the nearest commands as a suggestion.
 * `help` (optionally followed by a command's name, in `rest`) prints that help instead and exits 0.
 * @throws whatever the program's exit override throws; otherwise the process exits
 */
export function reportUnknownCommand(program: Command, word: string, rest: readonly string[] = []): never {
  // `openvaala help [command]`, as git and npm take it.
  if (word === 'help') {
    const named = rest[0] === undefined ? program : program.commands.find((command) => command.name() === rest[0] || command.aliases().includes(rest[0] as string));
    if (named) named.help();
  }
  // An empty word (an unset shell variable) is near every short name: suggesting them all says nothing.
  if (word.trim() === '') {
    program.showHelpAfterError(false);
    program.error(`error: an empty word is no command; \`${commandPath(program)} --help\` lists the commands`, { code: 'commander.unknownCommand' });
  }
  const names = program
    .createHelp()
    .visibleCommands(program)
    .flatMap((command) => [command.name(), ...command.aliases()]);
  const similar = similarNames(word, names);
  const suggestion = similar.length > 0 ? ` (did you mean ${similar.map((name) => `'${name}'`).join(' or ')}?)` : '';
  // The message already says where the commands are listed.
  program.showHelpAfterError(false);
  program.error(`error: unknown command '${word}'${suggestion}; \`${commandPath(program)} --help\` lists the commands`, { code: 'commander.unknownCommand' });
}

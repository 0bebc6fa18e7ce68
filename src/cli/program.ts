/**
 * The command tree of `openvaala` (SPEC §2), built with commander. This file builds the root
 * command; the commands are declared in the `commands-*.ts` modules, grouped by what they work
 * on. A command's module is imported when that command runs, so `--help` or a client command
 * never loads the server, the AI SDK or SQLite.
 */
import { Command } from 'commander';
import { VERSION } from '../package-info.js';
import { refuseBlankValues } from './blank-values.js';
import { CLIENT_COMMANDS, declareTerminalUiRoot } from './commands-clients.js';
import { CONVERSATION_COMMANDS } from './commands-conversations.js';
import { SERVER_COMMANDS } from './commands-server.js';
import { SETUP_COMMANDS } from './commands-setup.js';
import { ExecExitCode } from './exit-codes.js';

/** The top-level command names, in the order `--help` lists them. */
export const TOP_LEVEL_COMMANDS = [
  'serve', 'tui', 'exec', 'app-server', 'open', 'acp', 'reindex', 'users', 'server',
  'conversations', 'export', 'import', 'auth', 'plugin', 'config', 'dev',
] as const;

/** One of {@link TOP_LEVEL_COMMANDS}. */
export type TopLevelCommand = (typeof TOP_LEVEL_COMMANDS)[number];

const DECLARERS: Record<TopLevelCommand, (program: Command) => void> = { ...SERVER_COMMANDS, ...CLIENT_COMMANDS, ...CONVERSATION_COMMANDS, ...SETUP_COMMANDS };

/**
 * Builds the command tree. With `only`, declares just that top-level command (and the root's own
 * options), so one command's start-up does not pay for building the other fifteen; without it,
 * builds the whole tree that `--help`, `help` and unknown-command suggestions need.
 */
export function buildProgram(only?: TopLevelCommand): Command {
  const program = new Command('openvaala').description('Self-hosted runtime for AI coding agents').version(VERSION);
  // A usage mistake gets one line on where the usage is, not the whole help (as git and cargo do).
  program.showHelpAfterError('(add --help for the usage)');
  // `openvaala --model x` is the terminal UI's option; `openvaala exec --model x` stays exec's.
  program.enablePositionalOptions();
  // Usage mistakes (unknown option, missing value, unknown command) exit 64, as in sysexits.h.
  program.exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : ExecExitCode.usage);
  });
  declareTerminalUiRoot(program);
  for (const name of only === undefined ? TOP_LEVEL_COMMANDS : [only]) DECLARERS[name](program);
  // An empty value (an unset shell variable) is refused for every option and argument, never taken as absent.
  refuseBlankValues(program);
  // Set last: subcommands copy the settings their parent has when they are made.
  program.allowExcessArguments(true);
  return program;
}

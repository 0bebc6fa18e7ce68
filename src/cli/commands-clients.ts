/**
 * The commands that attach a client to the runtime server: `tui` (and the root command), `exec`,
 * `app-server`, `open`, `acp`.
 * Each command's module is imported when that command runs.
 */
import { Option, type Command } from 'commander';
import type { ApprovalMode } from './approval-prompt.js';
import type { TopLevelCommand } from './program.js';
import { resolvePaths } from '../config/paths.js';
import { fail, run, streams } from './command-runner.js';
import { requireExistingDataDir } from './data-dir-option.js';
import { readExecPrompt } from './exec-prompt.js';
import { ExecExitCode } from './exit-codes.js';
import { existingConfigDirectory } from './option-values.js';
import { importInteractiveTui } from './tui-import.js';
import { reportUnknownCommand } from './unknown-command.js';
import { UsageError } from './usage-error.js';

type TuiCommandOptions = { resume?: string; model?: string; agent?: string; executor?: string; cwd: string; dataDir?: string; configDir?: string };
const tuiOptions = (command: Command) =>
  command
    .option('--resume <id|last>', 'open a conversation (its id, or last: the most recently updated one) instead of a new one')
    .option('--model <provider/model>', 'model for a new conversation (default: defaultModel of providers.yaml)')
    .option('--agent <name>', 'agent for a new conversation')
    .option('--executor <name>', 'executor for a new conversation', 'local')
    .option('--cwd <dir>', 'working directory of a new conversation', process.cwd())
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory);
// The terminal UI (Ink and React) is imported only when it runs.
const runTuiCommand = async (options: TuiCommandOptions) => {
  await run('tui', async () => {
    if (options.resume !== undefined) requireExistingDataDir(options.dataDir, 'opens a stored conversation');
    return (await importInteractiveTui()).runTui(options);
  });
  // Ink may leave stdin referenced; the UI is gone and the server keeps the work.
  process.exit();
};

/** The root command, `openvaala` alone: the terminal UI, and a clear error for a word that is no command. */
export function declareTerminalUiRoot(program: Command): void {
  tuiOptions(program).action(async (options: TuiCommandOptions, command: Command) => {
    // `openvaala <word>` with no such command: say so, rather than "too many arguments".
    if (command.args.length > 0) reportUnknownCommand(program, command.args[0] as string, command.args.slice(1));
    await runTuiCommand(options);
  });
}

/** Declares `openvaala tui`: the terminal UI (the root command opens it too). */
function declareTui(program: Command): void {
  tuiOptions(program.command('tui').description('the terminal UI (also what `openvaala` alone opens)')).action(runTuiCommand);
}

/** Declares `openvaala exec`: one prompt run to the end of its turn, its events printed. */
function declareExec(program: Command): void {
  program
    .command('exec')
    .description('run one prompt to the end of its turn and print what the agent does')
    .argument('[prompt]', 'the prompt; read from stdin when omitted or -; piped stdin is appended to it in a <stdin> block')
    .option('--model <provider/model>', 'model to use (default: defaultModel of providers.yaml)')
    .option('--agent <name>', 'agent definition to use')
    .option('--executor <name>', 'executor to run tools on (a new conversation)', 'local')
    .option('--cwd <dir>', 'working directory (a new conversation)', process.cwd())
    .option('--json', 'print one JSON event per line', false)
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory)
    .option('--resume <id|prefix|last>', 'continue a conversation (its id, a unique prefix of it, or last: the most recently updated one) instead of starting one')
    .addOption(new Option('--approvals <decision>', 'how tool calls that need approval are decided: ask on the terminal (denied without one), or allow or deny them all without asking; calls the approval policy allows or denies by itself are not affected').choices(['ask', 'allow', 'deny'] satisfies ApprovalMode[]).default('ask'))
    .addHelpText(
      'after',
      '\nStdin that is not a terminal is read: as the prompt when none is given (or it is -), else appended to it.\nWith a prompt, a stdin pipe that stays silent for 3 s is left unread (redirect it from /dev/null to skip the wait).\n\nExamples:\n  openvaala exec "Why does the build fail? Fix it."\n  git diff | openvaala exec "Review this change"\n  openvaala exec - < prompt.md',
    )
    .action(async (prompt: string | undefined, options: { model?: string; agent?: string; executor: string; cwd: string; json: boolean; dataDir?: string; configDir?: string; resume?: string; approvals: ApprovalMode }, command: Command) => {
      // A resumed conversation keeps its work location: said, rather than ignored in silence.
      const placement = (['cwd', 'executor'] as const).find((option) => options.resume !== undefined && command.getOptionValueSource(option) === 'cli');
      if (placement) fail(`exec: --${placement} applies to a new conversation; a resumed one keeps its work location (--resume ${options.resume})`, ExecExitCode.usage);
      try {
        // Checked before stdin is waited for: a usage mistake is said at once.
        if (options.resume !== undefined) requireExistingDataDir(options.dataDir, 'continues a stored conversation');
      } catch (error) {
        fail(`exec: ${(error as Error).message}`, ExecExitCode.usage);
      }
      let text: string;
      try {
        text = await readExecPrompt(prompt, process.stdin, (message) => process.stderr.write(`openvaala: exec: ${message}\n`));
      } catch (error) {
        fail(`exec: cannot read stdin: ${(error as Error).message}`, ExecExitCode.usage);
      }
      if (!text.trim()) fail('exec: give a prompt as an argument or on stdin', ExecExitCode.usage);
      try {
        const { runExec } = await import('./exec.js');
        process.exitCode = await runExec({ ...options, prompt: text }, { stdout: process.stdout, stderr: process.stderr });
      } catch (error) {
        fail(`exec: ${(error as Error).message}`, error instanceof UsageError ? ExecExitCode.usage : 1);
      }
    });
}

/** Declares `openvaala app-server`: the Codex app-server protocol over stdio or WebSocket. */
function declareAppServer(program: Command): void {
  program
    .command('app-server')
    .description('serve the Codex app-server protocol (stdio, or WebSocket with --listen) in front of the local runtime server')
    .option('--listen <url>', 'serve WebSocket clients on ws://HOST:PORT (what codex --remote connects to) instead of stdio')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory)
    .action(async (options: { listen?: string; dataDir?: string; configDir?: string }) => {
      await run('app-server', async () => (await import('./app-server.js')).runAppServer(options));
      // Stdin ended or a signal came: the runtime connections are closed; nothing else should keep the process.
      process.exit();
    });
}

/** Declares `openvaala open`: the web UI in a browser, with a one-time sign-in link. */
function declareOpen(program: Command): void {
  program
    .command('open')
    .description('open the web UI in the default browser with a new one-time sign-in link (starting a server when none runs)')
    .option('--print', 'only print the link, do not start a browser', false)
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory)
    .action(async (options: { print: boolean; dataDir?: string; configDir?: string }) => {
      await run('open', async () => (await import('./open.js')).runOpen(resolvePaths(options), { print: options.print, requireConfigDir: options.configDir !== undefined }, streams));
    });
}

/** Declares `openvaala acp`: the Agent Client Protocol on stdin and stdout. */
function declareAcp(program: Command): void {
  program
    .command('acp')
    .description('serve the Agent Client Protocol on stdin/stdout, for editors such as Zed (see docs/editors.md)')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use', existingConfigDirectory)
    .action(async (options: { dataDir?: string; configDir?: string }) => {
      await run('acp', async () => (await import('./acp.js')).runAcp(options, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }));
    });
}

/** Declarers of these top-level commands, by name. */
export const CLIENT_COMMANDS = {
  tui: declareTui,
  exec: declareExec,
  'app-server': declareAppServer,
  open: declareOpen,
  acp: declareAcp,
} satisfies Partial<Record<TopLevelCommand, (program: Command) => void>>;

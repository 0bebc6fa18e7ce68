/**
 * The commands that run or operate the runtime server and its data directory: `serve`, `reindex`,
 * `users`, `server`.
 * Each command's module is imported when that command runs.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { TopLevelCommand } from './program.js';
import { resolvePaths } from '../config/paths.js';
import { shellQuote } from '../shell-quote.js';
import { fail, run, streams } from './command-runner.js';
import { requireExistingDataDir } from './data-dir-option.js';
import { ExecExitCode } from './exit-codes.js';
import { existingConfigDirectory, forCommander } from './option-values.js';
import { describeFlags, SERVE_OPTIONS, type ServeOptions } from './serve-options.js';
/** Declares `openvaala serve`: the runtime server, in the foreground until SIGTERM or SIGINT (its options: `serve-options.ts`). */
function declareServe(program: Command): void {
  const serve = program.command('serve').description('run the runtime server');
  for (const declaration of SERVE_OPTIONS) {
    const { list } = describeFlags(declaration.flags);
    const check = declaration.check && forCommander(declaration.check);
    // commander gathers a list option's values itself only when the option has no parser.
    const parse = check === undefined ? undefined : list ? (value: string, previous: unknown[] = []) => [...previous, check(value)] : check;
    if (parse === undefined) serve.option(declaration.flags, declaration.description, declaration.defaultValue as string | undefined);
    else serve.option(declaration.flags, declaration.description, parse as (value: string, previous: unknown) => unknown, declaration.defaultValue);
  }
  serve.action(async (options: ServeOptions) => (await import('./serve.js')).runServe(options));
}

/** Declares `openvaala reindex`: metadata.db rebuilt from the logs. */
function declareReindex(program: Command): void {
  program
    .command('reindex')
    .description('rebuild metadata.db from the conversation logs (the server must not be running)')
    .option('--data-dir <dir>', 'data directory')
    // Taken as every other command takes it, so a command line copied from them works; the index and its logs are all in the data directory.
    .option('--config-dir <dir>', 'configuration directory (not needed: the logs and the index are in the data directory)')
    .action(async (options: { dataDir?: string }) => {
      const { dataDir } = resolvePaths(options);
      try {
        requireExistingDataDir(options.dataDir, 'rebuilds the index of stored conversations');
      } catch (error) {
        fail(`reindex: ${(error as Error).message}`, ExecExitCode.usage);
      }
      if (!existsSync(dataDir)) fail(`reindex: the data directory ${dataDir} does not exist`);
      const [{ DataDirLockedError }, { formatReindexOutcome, runReindex }] = await Promise.all([import('../server/data-dir-lock.js'), import('./reindex.js')]);
      try {
        process.stdout.write(formatReindexOutcome(await runReindex(dataDir)));
      } catch (error) {
        // A client command (conversations, exec) may have started that server in the background, where it waits 10 minutes for work.
        const message = error instanceof DataDirLockedError ? `${error.message}; stop it first (openvaala server stop${options.dataDir !== undefined ? ` --data-dir ${shellQuote(options.dataDir)}` : ''}), then run reindex again` : (error as Error).message;
        fail(`reindex: ${message}`, error instanceof DataDirLockedError ? 3 : 1);
      }
    });
}

/** Declares `openvaala users`: users of a platform-mode server. */
function declareUsers(program: Command): void {
  const users = program.command('users').description('users of a platform-mode server (docs/platform.md)');
  users
    .command('claim')
    .description('create the first administrator of the running platform-mode server; reads the password from stdin')
    .requiredOption('--email <address>', 'email address of the administrator')
    .option('--display-name <name>', 'name shown to other users')
    .option('--data-dir <dir>', 'data directory of the server')
    .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
    .action(async (options: { email: string; displayName?: string; dataDir?: string; configDir?: string }) => {
      await run('users claim', async () => (await import('./users.js')).runUsersClaim(resolvePaths(options), options, process.stdin, streams));
    });
}

/** Declares `openvaala server status|stop|restart`. */
function declareServer(program: Command): void {
  const serverCommand = program.command('server').description('the local runtime server: status, stop, restart');
  const serverPaths = (command: Command) => command.option('--data-dir <dir>', 'data directory of the server').option('--config-dir <dir>', 'configuration directory', existingConfigDirectory);
  serverPaths(serverCommand.command('status').description('say whether a server runs, where, and with which configuration (exit 3 when none runs)')).action(async (options: { dataDir?: string; configDir?: string }) => {
    await run('server status', async () => (await import('./server-command.js')).runServerStatus(resolvePaths(options), streams));
  });
  serverPaths(serverCommand.command('stop').description('stop the server (running turns are recorded as interrupted)')).action(async (options: { dataDir?: string; configDir?: string }) => {
    await run('server stop', async () => (await import('./server-command.js')).runServerStop(resolvePaths(options), streams));
  });
  serverPaths(serverCommand.command('restart').description('stop the server and start it again in the background with this shell\'s environment')).action(async (options: { dataDir?: string; configDir?: string }) => {
    await run('server restart', async () => {
      // A mistyped --data-dir would otherwise get a new empty store with a server started on it.
      requireExistingDataDir(options.dataDir, 'restarts the server of a data directory');
      return (await import('./server-command.js')).runServerRestart(resolvePaths(options), options.configDir !== undefined, streams);
    });
  });
}

/** Declarers of these top-level commands, by name. */
export const SERVER_COMMANDS = {
  serve: declareServe,
  reindex: declareReindex,
  users: declareUsers,
  server: declareServer,
} satisfies Partial<Record<TopLevelCommand, (program: Command) => void>>;

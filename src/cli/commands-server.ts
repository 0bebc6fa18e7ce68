/**
 * The commands that run or operate the runtime server and its data directory: `serve`, `reindex`,
 * `users`, `server`.
 * Each command's module is imported when that command runs.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { TopLevelCommand } from './main.js';
import { resolvePaths } from '../config/paths.js';
import { fail, run, streams } from './command-runner.js';
import { requireExistingDataDir } from './data-dir-option.js';
import { ExecExitCode } from './exit-codes.js';
import { existingConfigDirectory, existingDirectory, integer } from './option-values.js';
/** Declares `openvaala serve`: the runtime server, in the foreground until SIGTERM or SIGINT. */
function declareServe(program: Command): void {
  program
    .command('serve')
    .description('run the runtime server')
    .option('--data-dir <dir>', 'data directory (default $XDG_DATA_HOME/openvaala)')
    .option('--config-dir <dir>', 'configuration directory (default $XDG_CONFIG_HOME/openvaala)', existingConfigDirectory)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', integer('--port', 0, 65535), 8790)
    .option('--exit-when-idle <ms>', 'exit after this many ms without clients or running work', integer('--exit-when-idle', 1))
    .option('--allow-origin <origin...>', 'extra browser origins allowed to use the API')
    .option('--allow-host <name...>', 'host names clients may use to reach the server besides loopback ones and --host')
    .option('--web-root <dir>', 'folder of the built web UI to serve at /web/v1/ (default: dist/www of the package)', existingDirectory('--web-root'))
    .option('--platform', 'platform mode: users, sign-in and roles (docs/platform.md); default platform.enabled of server.yaml')
    .action(async (options: { dataDir?: string; configDir?: string; host: string; port: number; exitWhenIdle?: number; allowOrigin?: string[]; allowHost?: string[]; webRoot?: string; platform?: boolean }) => {
      const [{ createDeferredLogger }, { startRuntimeServer }] = await Promise.all([import('../deferred-logger.js'), import('../server/runtime-server.js')]);
      // pino loads at the first line, not before listening: /healthz answers without it.
      const logger = createDeferredLogger();
      // Last resort only: every turn records its own failures, so a rejection nobody handled is
      // a bug to log, not a reason to drop every conversation this server runs.
      process.on('unhandledRejection', (reason) => logger.error({ error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) }, 'unhandled promise rejection'));
      const paths = resolvePaths(options);
      let server;
      try {
        server = await startRuntimeServer({
          paths,
          host: options.host,
          port: options.port,
          logger,
          ...(options.exitWhenIdle !== undefined ? { exitWhenIdleMs: options.exitWhenIdle } : {}),
          ...(options.allowOrigin ? { allowedOrigins: options.allowOrigin } : {}),
          ...(options.allowHost ? { allowedHosts: options.allowHost } : {}),
          ...(options.webRoot !== undefined ? { webRoot: path.resolve(options.webRoot) } : {}),
          ...(options.platform ? { platform: true } : {}),
        });
      } catch (error) {
        await logger.written();
        const { describeServeFailure } = await import('./serve-failure.js');
        const failure = describeServeFailure(error, options);
        fail(failure.message, failure.exitCode);
      }
      process.stdout.write(`openvaala runtime server listening on ${server.url} (data dir ${paths.dataDir})\n`);
      // A fresh one-time code, not the server token: the link may end up in a browser's history.
      process.stdout.write(`web UI: ${server.webUrl}\nsign in (link works once, for 5 min; \`openvaala open\` makes a new one): ${server.signInLink().url}\n`);
      if (server.platform.signInEnabled && !(await server.platform.users.hasUsers())) {
        process.stdout.write(`platform mode: no administrator yet; claim it at ${server.webUrl}sign-in or with \`openvaala users claim --email <address>\`\n`);
      }
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          server.stop(`received ${signal}`).catch((error: unknown) => logger.error({ error: (error as Error).message }, 'stopping the server failed'));
        });
      }
      await server.stopped;
      await logger.written();
      process.exit(0);
    });
}

/** Declares `openvaala reindex`: metadata.db rebuilt from the logs. */
function declareReindex(program: Command): void {
  program
    .command('reindex')
    .description('rebuild metadata.db from the conversation logs (the server must not be running)')
    .option('--data-dir <dir>', 'data directory')
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
        const message = error instanceof DataDirLockedError ? `${error.message}; stop that server before reindexing` : (error as Error).message;
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

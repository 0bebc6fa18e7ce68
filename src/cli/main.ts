/**
 * The `openvaala` command line (SPEC §2). Each command lives in its own module; this file
 * only declares the commands and their flags. A command's module is imported when that command
 * runs, so `--help` or a client command never loads the server, the AI SDK or SQLite.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { resolvePaths } from '../config/paths.js';
import { VERSION } from '../package-info.js';
import { requireExistingDataDir } from './data-dir-option.js';
import { ExecExitCode } from './exit-codes.js';
import { existingDirectory, integer, nonEmpty } from './option-values.js';
import { reportUnknownCommand } from './unknown-command.js';
import { UsageError } from './usage-error.js';
import { importInteractiveTui } from './tui-import.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function fail(message: string, code = 1): never {
  process.stderr.write(`openvaala: ${message}\n`);
  process.exit(code);
}

const streams = { stdout: process.stdout, stderr: process.stderr };

/** Runs a command's work, turning its errors into `openvaala: <command>: <message>` and an exit code (64 for usage mistakes). */
async function run(command: string, work: () => Promise<number> | number): Promise<void> {
  try {
    process.exitCode = await work();
  } catch (error) {
    fail(`${command}: ${(error as Error).message}`, error instanceof UsageError ? ExecExitCode.usage : 1);
  }
}

/** Builds the command tree. */
export function buildProgram(): Command {
  const program = new Command('openvaala').description('Self-hosted runtime for AI coding agents').version(VERSION);
  program.showHelpAfterError();
  // `openvaala --model x` is the terminal UI's option; `openvaala exec --model x` stays exec's.
  program.enablePositionalOptions();
  // Usage mistakes (unknown option, missing value, unknown command) exit 64, as in sysexits.h.
  program.exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : ExecExitCode.usage);
  });

  program
    .command('serve')
    .description('run the runtime server')
    .option('--data-dir <dir>', 'data directory (default $XDG_DATA_HOME/openvaala)')
    .option('--config-dir <dir>', 'configuration directory (default $XDG_CONFIG_HOME/openvaala)')
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

  type TuiCommandOptions = { resume?: string; model?: string; agent?: string; executor?: string; cwd: string; dataDir?: string; configDir?: string };
  const tuiOptions = (command: Command) =>
    command
      .option('--resume <id|last>', 'open a conversation (its id, or last: the most recently updated one) instead of a new one')
      .option('--model <provider/model>', 'model for a new conversation (default: defaultModel of providers.yaml)', nonEmpty('--model'))
      .option('--agent <name>', 'agent for a new conversation', nonEmpty('--agent'))
      .option('--executor <name>', 'executor for a new conversation', nonEmpty('--executor'), 'local')
      .option('--cwd <dir>', 'working directory of a new conversation', nonEmpty('--cwd'), process.cwd())
      .option('--data-dir <dir>', 'data directory of the server to use')
      .option('--config-dir <dir>', 'configuration directory of the server to use');
  // The terminal UI (Ink and React) is imported only when it runs.
  const runTuiCommand = async (options: TuiCommandOptions) => {
    await run('tui', async () => {
      if (options.resume !== undefined) requireExistingDataDir(options.dataDir, 'opens a stored conversation');
      return (await importInteractiveTui()).runTui(options);
    });
    // Ink may leave stdin referenced; the UI is gone and the server keeps the work.
    process.exit();
  };
  tuiOptions(program).action(async (options: TuiCommandOptions, command: Command) => {
    // `openvaala <word>` with no such command: say so, rather than "too many arguments".
    if (command.args.length > 0) reportUnknownCommand(program, command.args[0] as string, command.args.slice(1));
    await runTuiCommand(options);
  });
  tuiOptions(program.command('tui').description('the terminal UI (also what `openvaala` alone opens)')).action(runTuiCommand);

  program
    .command('exec')
    .description('run one prompt to the end of its turn and print what the agent does')
    .argument('[prompt]', 'the prompt; read from stdin when omitted')
    .option('--model <provider/model>', 'model to use (default: defaultModel of providers.yaml)', nonEmpty('--model'))
    .option('--agent <name>', 'agent definition to use', nonEmpty('--agent'))
    .option('--executor <name>', 'executor to run tools on (a new conversation)', nonEmpty('--executor'), 'local')
    .option('--cwd <dir>', 'working directory (a new conversation)', nonEmpty('--cwd'), process.cwd())
    .option('--json', 'print one JSON event per line', false)
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use')
    .option('--resume <id|prefix|last>', 'continue a conversation (its id, a unique prefix of it, or last: the most recently updated one) instead of starting one')
    .action(async (prompt: string | undefined, options: { model?: string; agent?: string; executor: string; cwd: string; json: boolean; dataDir?: string; configDir?: string; resume?: string }, command: Command) => {
      // A resumed conversation keeps its work location: said, rather than ignored in silence.
      const placement = (['cwd', 'executor'] as const).find((option) => options.resume !== undefined && command.getOptionValueSource(option) === 'cli');
      if (placement) fail(`exec: --${placement} applies to a new conversation; a resumed one keeps its work location (--resume ${options.resume})`, ExecExitCode.usage);
      const text = prompt ?? (process.stdin.isTTY ? '' : await readStdin());
      if (!text.trim()) fail('exec: give a prompt as an argument or on stdin', ExecExitCode.usage);
      try {
        if (options.resume !== undefined) requireExistingDataDir(options.dataDir, 'continues a stored conversation');
        const { runExec } = await import('./exec.js');
        process.exitCode = await runExec({ ...options, prompt: text }, { stdout: process.stdout, stderr: process.stderr });
      } catch (error) {
        fail(`exec: ${(error as Error).message}`, error instanceof UsageError ? ExecExitCode.usage : 1);
      }
    });

  program
    .command('app-server')
    .description('serve the Codex app-server protocol (stdio, or WebSocket with --listen) in front of the local runtime server')
    .option('--listen <url>', 'serve WebSocket clients on ws://HOST:PORT (what codex --remote connects to) instead of stdio')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use')
    .action(async (options: { listen?: string; dataDir?: string; configDir?: string }) => {
      await run('app-server', async () => (await import('./app-server.js')).runAppServer(options));
      // Stdin ended or a signal came: the runtime connections are closed; nothing else should keep the process.
      process.exit();
    });

  program
    .command('open')
    .description('open the web UI in the default browser with a new one-time sign-in link (starting a server when none runs)')
    .option('--print', 'only print the link, do not start a browser', false)
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use')
    .action(async (options: { print: boolean; dataDir?: string; configDir?: string }) => {
      await run('open', async () => (await import('./open.js')).runOpen(resolvePaths(options), { print: options.print, requireConfigDir: options.configDir !== undefined }, streams));
    });

  program
    .command('acp')
    .description('serve the Agent Client Protocol on stdin/stdout, for editors such as Zed (see docs/editors.md)')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use')
    .action(async (options: { dataDir?: string; configDir?: string }) => {
      await run('acp', async () => (await import('./acp.js')).runAcp(options, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }));
    });

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

  const users = program.command('users').description('users of a platform-mode server (docs/platform.md)');
  users
    .command('claim')
    .description('create the first administrator of the running platform-mode server; reads the password from stdin')
    .requiredOption('--email <address>', 'email address of the administrator')
    .option('--display-name <name>', 'name shown to other users')
    .option('--data-dir <dir>', 'data directory of the server')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (options: { email: string; displayName?: string; dataDir?: string; configDir?: string }) => {
      await run('users claim', async () => (await import('./users.js')).runUsersClaim(resolvePaths(options), options, process.stdin, streams));
    });

  const serverCommand = program.command('server').description('the local runtime server: status, stop, restart');
  const serverPaths = (command: Command) => command.option('--data-dir <dir>', 'data directory of the server').option('--config-dir <dir>', 'configuration directory');
  serverPaths(serverCommand.command('status').description('say whether a server runs, where, and with which configuration (exit 3 when none runs)')).action(async (options: { dataDir?: string; configDir?: string }) => {
    await run('server status', async () => (await import('./server-command.js')).runServerStatus(resolvePaths(options), streams));
  });
  serverPaths(serverCommand.command('stop').description('stop the server (running turns are recorded as interrupted)')).action(async (options: { dataDir?: string; configDir?: string }) => {
    await run('server stop', async () => (await import('./server-command.js')).runServerStop(resolvePaths(options), streams));
  });
  serverPaths(serverCommand.command('restart').description('stop the server and start it again in the background with this shell\'s environment')).action(async (options: { dataDir?: string; configDir?: string }) => {
    await run('server restart', async () => (await import('./server-command.js')).runServerRestart(resolvePaths(options), options.configDir !== undefined, streams));
  });

  const conversations = program.command('conversations').description('list, search and show stored conversations');
  const conversationOptions = (command: Command) =>
    command.option('--json', 'print JSON', false).option('--data-dir <dir>', 'data directory of the server to use').option('--config-dir <dir>', 'configuration directory of the server to use');
  type ListOptions = { limit: number; json: boolean; dataDir?: string; configDir?: string; query?: string };
  conversationOptions(
    conversations
      .command('list', { isDefault: true })
      .description('list conversations, most recently updated first')
      .option('--query <text>', 'only conversations whose title or messages match (words, "phrases", prefix*, AND, OR, NOT)')
      .option('--limit <n>', 'how many to list', integer('--limit', 1, 500), 20),
  ).action(async (options: ListOptions) => {
    await run('conversations', async () => {
      requireExistingDataDir(options.dataDir, 'lists stored conversations');
      return (await import('./conversations.js')).runConversationList(resolvePaths(options), { ...options, requireConfigDir: options.configDir !== undefined }, streams);
    });
  });
  conversationOptions(
    conversations
      .command('search')
      .description('list the conversations whose title or messages match a full-text query')
      .argument('<query>', 'words, "phrases", prefix*, AND, OR, NOT')
      .option('--limit <n>', 'how many to list', integer('--limit', 1, 500), 20),
  ).action(async (query: string, options: ListOptions) => {
    await run('conversations search', async () => {
      requireExistingDataDir(options.dataDir, 'searches stored conversations');
      return (await import('./conversations.js')).runConversationList(resolvePaths(options), { ...options, query, requireConfigDir: options.configDir !== undefined }, streams);
    });
  });
  conversationOptions(conversations.command('show').description('print a conversation: its turns and transcript').argument('<id|last>', 'a conversation id, or last')).action(
    async (reference: string, options: { json: boolean; dataDir?: string; configDir?: string }) => {
      await run('conversations show', async () => {
        requireExistingDataDir(options.dataDir, 'shows a stored conversation');
        return (await import('./conversations.js')).runConversationShow(resolvePaths(options), reference, { json: options.json, requireConfigDir: options.configDir !== undefined }, streams);
      });
    },
  );

  program
    .command('export')
    .description('write a conversation as a self-contained archive (JSON Lines: its logs and attachments) to stdout; see docs/storage.md')
    .argument('<conversation>', 'a conversation id, a unique prefix of one, or last (the most recently updated)')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use')
    .addHelpText('after', '\nExample: openvaala export last > conversation.jsonl')
    .action(async (reference: string, options: { dataDir?: string; configDir?: string }) => {
      await run('export', async () => {
        requireExistingDataDir(options.dataDir, 'exports a stored conversation');
        return (await import('./transfer.js')).runExport(resolvePaths(options), reference, { requireConfigDir: options.configDir !== undefined }, streams);
      });
    });

  program
    .command('import')
    .description('store a conversation from an archive made by openvaala export (or, with --from codex, from a Codex session rollout) and print its id')
    .argument('<file>', 'the archive or rollout file; - reads stdin')
    .option('--from <source>', 'the file is a session of another tool: codex (a rollout-*.jsonl of ~/.codex/sessions)')
    .option('--model <provider/model>', 'with --from: model to continue with (default: the agent\'s model, else defaultModel)')
    .option('--agent <name>', 'with --from: agent to continue with (default: the default agent)')
    .option('--cwd <dir>', 'with --from: working directory of the conversation (default: the one the rollout recorded)')
    .option('--data-dir <dir>', 'data directory of the server to use')
    .option('--config-dir <dir>', 'configuration directory of the server to use')
    .addHelpText(
      'after',
      '\nThe conversation keeps its ids unless its id exists on this server already; then it gets new ones.\nA damaged or truncated archive is refused naming the line, and nothing is stored.\n\nExamples:\n  openvaala import conversation.jsonl\n  openvaala import --from codex ~/.codex/sessions/2026/11/30/rollout-….jsonl --cwd "$PWD"',
    )
    .action(async (file: string, options: { from?: string; model?: string; agent?: string; cwd?: string; dataDir?: string; configDir?: string }) => {
      await run('import', async () =>
        (await import('./transfer.js')).runImport(
          resolvePaths(options),
          file,
          {
            requireConfigDir: options.configDir !== undefined,
            ...(options.from !== undefined ? { from: options.from } : {}),
            ...(options.model !== undefined ? { model: options.model } : {}),
            ...(options.agent !== undefined ? { agent: options.agent } : {}),
            ...(options.cwd !== undefined ? { cwd: path.resolve(options.cwd) } : {}),
          },
          streams,
        ),
      );
    });

  const auth = program.command('auth').description('API keys stored in the configuration directory (credentials.json, mode 0600)');
  auth
    .command('set')
    .description('store the API key of a provider, typed at a prompt that does not echo it, or read from stdin')
    .argument('<provider>', 'provider name as in providers.yaml (openai, anthropic and google are added there when missing)')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (provider: string, options: { configDir?: string }) => {
      await run('auth set', async () => (await import('./auth.js')).runAuthSet(resolvePaths(options).configDir, provider, streams));
    });
  auth
    .command('remove')
    .description('remove the stored API key of a provider')
    .argument('<provider>', 'provider name')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (provider: string, options: { configDir?: string }) => {
      await run('auth remove', async () => (await import('./auth.js')).runAuthRemove(resolvePaths(options).configDir, provider, streams));
    });
  auth
    .command('list')
    .description('list the providers that have a stored key (never the keys)')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (options: { configDir?: string }) => {
      await run('auth list', async () => (await import('./auth.js')).runAuthList(resolvePaths(options).configDir, streams));
    });

  const plugin = program.command('plugin').description('plugins: skills, agents, prompt commands, hooks and MCP servers in one folder or package');
  plugin
    .command('add')
    .description('install a plugin from a folder, a tarball (.tgz) or an npm package, and enable it')
    .argument('<source>', 'a folder, a tarball, or an npm package name')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (source: string, options: { configDir?: string }) => {
      await run('plugin add', async () => (await import('./plugin.js')).runPluginAdd(resolvePaths(options).configDir, source, streams));
    });
  plugin
    .command('remove')
    .description('remove an installed plugin and its folder')
    .argument('<name>', 'plugin name')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (name: string, options: { configDir?: string }) => {
      await run('plugin remove', async () => (await import('./plugin.js')).runPluginRemove(resolvePaths(options).configDir, name, streams));
    });
  plugin
    .command('list')
    .description('list the installed plugins, their parts and their problems (exit 1 when one does not load)')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (options: { configDir?: string }) => {
      await run('plugin list', async () => (await import('./plugin.js')).runPluginList(resolvePaths(options).configDir, streams));
    });
  for (const [verb, enabled] of [['enable', true], ['disable', false]] as const) {
    plugin
      .command(verb)
      .description(`${verb} an installed plugin for the user, or with --project for one project directory`)
      .argument('<name>', 'plugin name')
      .option('--project <dir>', 'apply to conversations working in this directory only (<dir>/.openvaala/plugins.yaml)')
      .option('--config-dir <dir>', 'configuration directory')
      .action(async (name: string, options: { configDir?: string; project?: string }) => {
        await run(`plugin ${verb}`, async () => (await import('./plugin.js')).runPluginSetEnabled(resolvePaths(options).configDir, name, enabled, options.project, streams));
      });
  }

  const config = program.command('config').description('configuration tools');
  config
    .command('check')
    .description('validate the configuration directory (every problem of every file), or one file of it with its references')
    .argument('[path]', 'the configuration directory, or one of its files (default: --config-dir)')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (given: string | undefined, options: { configDir?: string }) => {
      process.exitCode = await (await import('./config-check.js')).runConfigCheck({ configDir: resolvePaths(options).configDir, ...(given !== undefined ? { path: given } : {}) }, { stdout: process.stdout, stderr: process.stderr });
    });

  const dev = program.command('dev').description('developer tools');
  dev
    .command('apply-patch')
    .description('apply a patch in the Codex apply_patch format read from stdin')
    .option('--cwd <dir>', 'directory the patch paths are relative to', process.cwd())
    .action(async (options: { cwd: string }) => {
      process.exitCode = await (await import('./dev-apply-patch.js')).runApplyPatchCommand({ cwd: options.cwd, patchText: await readStdin(), stdout: process.stdout, stderr: process.stderr });
    });
  dev
    .command('mock-provider')
    .description('serve scripted model responses over the OpenAI Responses, Chat Completions, Anthropic Messages and Gemini wire formats')
    .requiredOption('--script <file>', 'script file (YAML or JSON)')
    .option('--port <port>', 'port; 0 picks a free one', integer('--port', 0, 65535), 18181)
    .option('--host <host>', 'loopback address', '127.0.0.1')
    .action(async (options: { script: string; port: number; host: string }) => {
      try {
        const { runMockProviderCommand } = await import('./dev-mock-provider.js');
        const server = await runMockProviderCommand({ scriptFile: options.script, port: options.port, host: options.host, stdout: process.stdout });
        for (const signal of ['SIGTERM', 'SIGINT'] as const) {
          process.once(signal, () => {
            server.stop().then(
              () => process.exit(0),
              (error: unknown) => fail(`dev mock-provider: ${(error as Error).message}`),
            );
          });
        }
      } catch (error) {
        fail(`dev mock-provider: ${(error as Error).message}`);
      }
    });
  // Set last: subcommands copy the settings their parent has when they are made.
  program.allowExcessArguments(true);
  return program;
}

/** Entry point of `bin/openvaala`. */
export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}

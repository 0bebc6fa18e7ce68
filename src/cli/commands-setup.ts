/**
 * The commands that set up and check the configuration, and developer tools: `auth`, `plugin`,
 * `config`, `dev`.
 * Each command's module is imported when that command runs.
 */
import type { Command } from 'commander';
import type { TopLevelCommand } from './program.js';
import { resolvePaths } from '../config/paths.js';
import { fail, readStdin, run, streams } from './command-runner.js';
import { requireExistingDirectory } from './data-dir-option.js';
import { existingConfigDirectory, integer } from './option-values.js';

/**
 * The configuration directory a command that writes keys or plugins uses. An explicit
 * `--config-dir` was checked to exist by its option parser (`existingConfigDirectory`): a
 * mistyped one would get a key or a plugin no server reads.
 */
function configDirOf(options: { configDir?: string }): string {
  return resolvePaths(options).configDir;
}

/** `--project` of plugin enable and disable: an existing project directory, or undefined. @throws UsageError naming the path */
function projectOf(options: { project?: string }): string | undefined {
  requireExistingDirectory('--project', options.project, 'give the directory of an existing project');
  return options.project;
}

/** Declares `openvaala auth set|remove|list`: stored API keys. */
function declareAuth(program: Command): void {
  const auth = program.command('auth').description('API keys stored in the configuration directory (credentials.json, mode 0600)');
  auth
    .command('set')
    .description('store the API key of a provider, typed at a prompt that does not echo it, or read from stdin')
    .argument('<provider>', 'provider name as in providers.yaml (openai, anthropic and google are added there when missing)')
    .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
    .action(async (provider: string, options: { configDir?: string }) => {
      await run('auth set', async () => (await import('./auth.js')).runAuthSet(configDirOf(options), provider, streams));
    });
  auth
    .command('remove')
    .description('remove the stored API key of a provider')
    .argument('<provider>', 'provider name')
    .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
    .action(async (provider: string, options: { configDir?: string }) => {
      await run('auth remove', async () => (await import('./auth.js')).runAuthRemove(configDirOf(options), provider, streams));
    });
  auth
    .command('list')
    .description('list the providers that have a stored key (never the keys)')
    .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
    .action(async (options: { configDir?: string }) => {
      await run('auth list', async () => (await import('./auth.js')).runAuthList(configDirOf(options), streams));
    });
}

/** Declares `openvaala plugin add|remove|list|enable|disable`. */
function declarePlugin(program: Command): void {
  const plugin = program.command('plugin').description('plugins: skills, agents, prompt commands, hooks and MCP servers in one folder or package');
  plugin
    .command('add')
    .description('install a plugin from a folder, a tarball (.tgz) or an npm package, and enable it')
    .argument('<source>', 'a folder, a tarball, or an npm package name')
    .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
    .action(async (source: string, options: { configDir?: string }) => {
      await run('plugin add', async () => (await import('./plugin.js')).runPluginAdd(configDirOf(options), source, streams));
    });
  plugin
    .command('remove')
    .description('remove an installed plugin and its folder')
    .argument('<name>', 'plugin name')
    .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
    .action(async (name: string, options: { configDir?: string }) => {
      await run('plugin remove', async () => (await import('./plugin.js')).runPluginRemove(configDirOf(options), name, streams));
    });
  plugin
    .command('list')
    .description('list the installed plugins, their parts and their problems (exit 1 when one does not load)')
    .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
    .action(async (options: { configDir?: string }) => {
      await run('plugin list', async () => (await import('./plugin.js')).runPluginList(configDirOf(options), streams));
    });
  for (const [verb, enabled] of [['enable', true], ['disable', false]] as const) {
    plugin
      .command(verb)
      .description(`${verb} an installed plugin for the user, or with --project for one project directory`)
      .argument('<name>', 'plugin name')
      .option('--project <dir>', 'apply to conversations working in this directory only (<dir>/.openvaala/plugins.yaml)')
      .option('--config-dir <dir>', 'configuration directory', existingConfigDirectory)
      .action(async (name: string, options: { configDir?: string; project?: string }) => {
        await run(`plugin ${verb}`, async () => (await import('./plugin.js')).runPluginSetEnabled(configDirOf(options), name, enabled, projectOf(options), streams));
      });
  }
}

/** Declares `openvaala config check`. */
function declareConfig(program: Command): void {
  const config = program.command('config').description('configuration tools');
  config
    .command('check')
    .description('validate the configuration directory (every problem of every file), or one file of it with its references')
    .argument('[path]', 'the configuration directory, or one of its files (default: --config-dir)')
    .option('--config-dir <dir>', 'configuration directory')
    .action(async (given: string | undefined, options: { configDir?: string }) => {
      process.exitCode = await (await import('./config-check.js')).runConfigCheck({ configDir: resolvePaths(options).configDir, configDirGiven: options.configDir !== undefined, ...(given !== undefined ? { path: given } : {}) }, { stdout: process.stdout, stderr: process.stderr });
    });
}

/** Declares `openvaala dev apply-patch|mock-provider`: developer tools. */
function declareDev(program: Command): void {
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
}

/** Declarers of these top-level commands, by name. */
export const SETUP_COMMANDS = {
  auth: declareAuth,
  plugin: declarePlugin,
  config: declareConfig,
  dev: declareDev,
} satisfies Partial<Record<TopLevelCommand, (program: Command) => void>>;

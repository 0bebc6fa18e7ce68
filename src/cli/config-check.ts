/**
 * `openvaala config check [PATH]` (SPEC §2): loads and validates the whole configuration
 * directory and prints every problem of every file, with its file, line and key path, in one
 * run. PATH is the configuration directory, or one of its files: then that file is checked,
 * with its references to the other files of its directory, and only its problems are listed.
 * Warnings (what a server started from this shell would lack although the configuration is
 * valid: provider keys, configured paths, plugins) are printed before the problems, or the
 * verdict, whether or not there are problems.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { CONFIGURATION_FILES, ConfigurationError, loadConfiguration, type Configuration, type ConfigurationFileKey } from '../config/configuration.js';
import { configuredPathWarnings } from '../config/configured-paths.js';
import { PluginsFileSchema, type PluginsFile } from '../config/plugins.js';
import { isRecord } from '../config/yaml-file.js';
import type { OutputStreams } from './exec-output.js';
import { loadPluginSet } from '../plugins/plugin-set.js';
import { formatKeyPath } from '../key-path.js';
import { commandLine } from '../client/resume-command.js';

/** What to check: a directory (from --config-dir or the default), or a path given by the user. */
export interface ConfigCheckTarget {
  /** The configuration directory (default or `--config-dir`). */
  configDir: string;
  /** A directory or file named on the command line; wins over `configDir`. */
  path?: string;
  /** True when `configDir` was given with `--config-dir`: then it must exist (a mistyped path is not "no configuration"). */
  configDirGiven?: boolean;
}

const KNOWN_FILES = Object.values(CONFIGURATION_FILES).map((file) => file.fileName);

function countProblems(error: ConfigurationError, onlyFile?: string): number {
  return error.errors.filter((fileError) => onlyFile === undefined || fileError.file === onlyFile).reduce((count, fileError) => count + fileError.problems.length, 0);
}

/**
 * Validates a configuration directory, or one file of it, and warns about what the machine
 * lacks (see {@link configurationWarnings}); a check of one file warns only about that file.
 * @returns exit code: 0 valid, 1 invalid (or a path that is neither a directory nor a configuration file)
 */
export async function runConfigCheck(target: ConfigCheckTarget | string, streams: OutputStreams): Promise<number> {
  const { configDir: defaultDir, path: given, configDirGiven } = typeof target === 'string' ? { configDir: target, path: undefined, configDirGiven: false } : target;
  let configDir = defaultDir;
  let onlyFile: string | undefined;
  if (given !== undefined) {
    const resolved = path.resolve(given);
    if (!existsSync(resolved)) {
      streams.stderr.write(`${resolved}: does not exist; config check wants the configuration directory (or one of its files: ${KNOWN_FILES.join(', ')})\n`);
      return 1;
    }
    if (statSync(resolved).isDirectory()) {
      configDir = resolved;
    } else if (KNOWN_FILES.includes(path.basename(resolved))) {
      configDir = path.dirname(resolved);
      onlyFile = resolved;
    } else {
      streams.stderr.write(`${resolved}: not a configuration file; config check wants the configuration directory, or one of its files (${KNOWN_FILES.join(', ')})\n`);
      return 1;
    }
  } else if (!existsSync(configDir) && configDirGiven) {
    streams.stderr.write(`--config-dir ${configDir}: does not exist; give the configuration directory to check (without --config-dir, the default one is checked)\n`);
    return 1;
  } else if (!existsSync(configDir)) {
    streams.stdout.write(`${configDir}: no configuration directory; the built-in defaults apply (no providers configured)\n`);
    return 0;
  }
  let failure: ConfigurationError | undefined;
  let values: Partial<Record<ConfigurationFileKey, unknown>>;
  try {
    values = await loadConfiguration(configDir);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    failure = error;
    values = error.values;
  }
  // Warnings are told with the problems too: fixing the problems must not reveal more to fix.
  const warnings = (await configurationWarnings(configDir, values))
    .filter((warning) => onlyFile === undefined || warning.file === path.basename(onlyFile))
    .map((warning) => warning.line)
    .join('');
  streams.stderr.write(warnings);
  if (failure === undefined) {
    if (onlyFile !== undefined) {
      streams.stdout.write(`${onlyFile}: valid (its references checked against ${configDir})\n`);
      return 0;
    }
    const configuration = values as Configuration;
    const providers = Object.keys(configuration.providers.providers);
    const agents = Object.keys(configuration.agents.agents);
    streams.stdout.write(
      `${configDir}: valid (${KNOWN_FILES.filter((name) => existsSync(path.join(configDir, name))).join(', ') || 'no files: built-in defaults'})\n` +
        `  providers: ${providers.join(', ') || 'none'}; default model: ${configuration.providers.defaultModel ?? 'not set'}\n` +
        `  agents: ${agents.join(', ')}\n`,
    );
    return 0;
  }
  if (onlyFile === undefined) {
    streams.stderr.write(`${failure.message}\n${problems(countProblems(failure))} in ${configDir}\n`);
    return 1;
  }
  const own = failure.errors.find((fileError) => fileError.file === onlyFile);
  const others = countProblems(failure) - countProblems(failure, onlyFile);
  const elsewhere = others > 0 ? `${problems(others)} in other files of ${configDir} (run ${commandLine(['config', 'check'], { configDir })} to see them)\n` : '';
  if (own === undefined) {
    streams.stdout.write(`${onlyFile}: valid (its references checked against ${configDir})\n`);
    streams.stderr.write(elsewhere);
    return 0;
  }
  streams.stderr.write(`${own.message}\n${problems(own.problems.length)} in ${onlyFile}\n${elsewhere}`);
  return 1;
}

/** One warning line of `config check`, with the configuration file it is about. */
interface Warning {
  /** File name (`providers.yaml`): a check of one file shows only its own. */
  file: string;
  /** `warning: …\n`. */
  line: string;
}

/**
 * Everything a server started from this shell would lack although the configuration is
 * valid: provider keys, configured paths, plugins, personal skills. Runs on what the files hold whether or not
 * they passed validation (entries that are not mappings are left to the problems).
 */
async function configurationWarnings(configDir: string, values: Partial<Record<ConfigurationFileKey, unknown>>): Promise<Warning[]> {
  const providersFile = CONFIGURATION_FILES.providers.fileName;
  const providerEntries = isRecord(values.providers) && isRecord(values.providers.providers) ? Object.entries(values.providers.providers) : [];
  const providers = Object.fromEntries(providerEntries.filter((entry): entry is [string, { apiKey?: string }] => isRecord(entry[1]) && (entry[1].apiKey === undefined || typeof entry[1].apiKey === 'string')));
  const keys = (await keyWarnings(providers, configDir)).map((line) => ({ file: providersFile, line }));
  const paths = configuredPathWarnings(values, { configDir }).map(({ file, keyPath, message }) => ({ file, line: `warning: ${file}: ${formatKeyPath(keyPath)}: ${message}\n` }));
  const plugins = PluginsFileSchema.safeParse(values.plugins ?? {});
  const pluginLines = plugins.success ? (await pluginWarnings(configDir, plugins.data)).map((line) => ({ file: CONFIGURATION_FILES.plugins.fileName, line })) : [];
  const skills = (await skillWarnings(configDir)).map((line) => ({ file: 'skills', line }));
  return [...keys, ...paths, ...pluginLines, ...skills];
}

/**
 * Warnings for the personal skills (`<configDir>/skills/`) a turn would skip, each naming the
 * `SKILL.md`, its line and front matter field, as the conversation is told of them.
 * @returns one `warning: …` line per problem
 */
async function skillWarnings(configDir: string): Promise<string[]> {
  const directory = path.join(configDir, 'skills');
  if (!existsSync(directory)) return [];
  const [{ LocalFileSystem }, { discoverSkills }, { describeSkillProblem }] = await Promise.all([
    import('../executors/local/local-file-system.js'),
    import('../runtime/skills/skill-discovery.js'),
    import('../runtime/skills/skill-file.js'),
  ]);
  const { problems } = await discoverSkills([{ fileSystem: new LocalFileSystem(), directory, location: 'server' }]);
  return problems.map((problem) => `warning: skill skipped by every turn: ${describeSkillProblem(problem)}\n`);
}

/**
 * Warnings (the check still passes: the server starts without them) for enabled plugins that
 * cannot be loaded, naming the file, the key path and the problem, as `plugin list` shows them.
 * @returns one `warning: …` line per broken plugin
 */
async function pluginWarnings(configDir: string, file: PluginsFile): Promise<string[]> {
  if (Object.keys(file.plugins).length === 0) return [];
  const { statuses } = await loadPluginSet(configDir, file);
  return statuses
    .filter((status) => status.enabled && status.problem !== undefined)
    .map(({ name, problem }) => `warning: plugin "${name}" is not loaded (the server runs without it): ${problem!.file}${problem!.keyPath ? `: ${problem!.keyPath}` : ''}: ${problem!.message}\n`);
}

/** `1 problem`, `2 problems`. */
function problems(count: number): string {
  return `${count} problem${count === 1 ? '' : 's'}`;
}

/**
 * Warnings (not problems: the check still passes) for provider keys a server started from this
 * shell could not find, looked up as a turn looks them up (`resolveProviderApiKey`): `apiKey:
 * env:NAME` with NAME unset or empty here and no key stored with `openvaala auth set`, or stored
 * keys that cannot be read. A server reads the variable from its own environment at each turn,
 * so the configuration is valid; the first turn would fail.
 * @returns one `warning: …` line per provider
 */
async function keyWarnings(providers: Record<string, { apiKey?: string }>, configDir: string): Promise<string[]> {
  const [{ resolveProviderApiKey }, { CredentialsFileError }, { MissingSecretError }] = await Promise.all([import('../config/provider-keys.js'), import('../config/credentials.js'), import('../config/providers.js')]);
  const lines: string[] = [];
  for (const [name, provider] of Object.entries(providers)) {
    try {
      resolveProviderApiKey(name, provider, configDir);
    } catch (error) {
      if (!(error instanceof MissingSecretError)) throw error;
      if (error.cause instanceof CredentialsFileError) {
        lines.push(`warning: the stored keys cannot be read (${error.cause.message}); repair the file or store the key again with: ${commandLine(['auth', 'set', name], { configDir })}\n`);
      } else {
        const variable = provider.apiKey?.slice('env:'.length);
        lines.push(`warning: ${CONFIGURATION_FILES.providers.fileName}: providers.${name}.apiKey: the environment variable ${variable} is not set in this shell and no key is stored for "${name}"; a server started from here cannot use the provider until ${variable} is set or a key is stored (${commandLine(['auth', 'set', name], { configDir })})\n`);
      }
    }
  }
  return lines;
}

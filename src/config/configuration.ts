/**
 * The configuration directory (SPEC §8): every `*.yaml` file in it is loaded and validated as
 * a whole, including the references from one file to another (see `references.ts`). One
 * broken file fails the whole load, with every problem of every file named by file, line and
 * key path, so a reload that fails can keep the previous configuration in force.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { AgentsFileSchema, type AgentsFile } from './agents.js';
import { ExecutorsFileSchema, type ExecutorsFile } from './executors.js';
import { HooksFileSchema, NO_HOOKS, type HooksFile } from './hooks.js';
import { McpFileSchema, type McpFile } from './mcp.js';
import { PluginsFileSchema, type PluginsFile } from './plugins.js';
import { ProvidersFileSchema, type ProvidersFile } from './providers.js';
import { ServerSettingsSchema, type ServerSettings } from './server-settings.js';
import { StorageSettingsSchema, storageEnvironmentProblems, type StorageSettings } from './storage-settings.js';
import { similarNames } from '../similar-names.js';
import { executorEnvironmentProblems } from './executor-environment.js';
import { referenceProblems, type LoadedFile, type LoadedFiles } from './references.js';
import { ConfigError, parseYamlDocument, readConfigurationBytes } from './yaml-file.js';
import { formatKeyPath } from '../key-path.js';

/** One file of the configuration directory. */
export interface ConfigurationFileSpec<T> {
  /** File name inside the directory (`providers.yaml`). */
  fileName: string;
  schema: z.ZodType<T>;
  /** Value when the file does not exist. */
  whenMissing: () => T;
  /** One line on what the file holds (for `config check` and the docs). */
  summary: string;
}

function spec<T>(fileName: string, schema: z.ZodType<T>, whenMissing: () => T, summary: string): ConfigurationFileSpec<T> {
  return { fileName, schema, whenMissing, summary };
}

/** The files of the configuration directory this build understands. */
export const CONFIGURATION_FILES = {
  providers: spec<ProvidersFile>('providers.yaml', ProvidersFileSchema, () => ({ providers: {} }), 'model providers and the default model'),
  agents: spec<AgentsFile>('agents.yaml', AgentsFileSchema, () => ({ agents: { default: { default: true } } }), 'agent definitions: model, instructions, limits, approval policy'),
  mcp: spec<McpFile>('mcp.yaml', McpFileSchema, () => ({ servers: {} }), 'MCP servers whose tools agents may use'),
  hooks: spec<HooksFile>('hooks.yaml', HooksFileSchema, () => NO_HOOKS, 'commands run at session start, on prompts, around tool calls, at the end of a turn and before compaction'),
  executors: spec<ExecutorsFile>('executors.yaml', ExecutorsFileSchema, () => ({ executors: {} }), 'where tools run: local (optionally sandboxed), ssh, virtual'),
  plugins: spec<PluginsFile>('plugins.yaml', PluginsFileSchema, () => ({ plugins: {} }), 'installed plugins (skills, hooks, agents, MCP servers, prompt commands) and whether each is enabled'),
  server: spec<ServerSettings>('server.yaml', ServerSettingsSchema, () => ServerSettingsSchema.parse({}), 'allowed browser origins and the limits of every turn'),
  storage: spec<StorageSettings>('storage.yaml', StorageSettingsSchema, () => StorageSettingsSchema.parse({}), 'where conversations are stored: the data directory (default) or PostgreSQL (read at start)'),
};

/** Key of a configuration file. */
export type ConfigurationFileKey = keyof typeof CONFIGURATION_FILES;

/** The loaded configuration directory. */
export type Configuration = { [K in ConfigurationFileKey]: (typeof CONFIGURATION_FILES)[K] extends ConfigurationFileSpec<infer T> ? T : never };

/** Every problem of a failed load, across files (one `ConfigError` per file with problems). */
export class ConfigurationError extends Error {
  /**
   * @param errors one per file with problems
   * @param values what each file that could be read held (validated, or as written when it
   *   failed validation), so checks that only warn still run on them
   */
  constructor(
    readonly errors: ConfigError[],
    readonly values: Partial<Record<ConfigurationFileKey, unknown>> = {},
  ) {
    super(errors.map((error) => error.message).join('\n'));
    this.name = 'ConfigurationError';
  }
}

async function loadOne<T>(configDir: string, fileSpec: ConfigurationFileSpec<T>): Promise<LoadedFile<T>> {
  const file = path.join(configDir, fileSpec.fileName);
  const bytes = await readConfigurationBytes(file);
  if (bytes === undefined) return { file, value: fileSpec.whenMissing() };
  const parsed = parseYamlDocument(file, bytes, fileSpec.schema);
  return { file, value: parsed.value, lineOf: parsed.lineOf };
}

/** What `storage.yaml` (its values unchecked) lacks in the environment, naming the lines. */
function storageEnvironmentError(storage: LoadedFile<unknown>, environment: NodeJS.ProcessEnv | undefined): ConfigError | undefined {
  const problems = storageEnvironmentProblems(storage.value, environment);
  if (problems.length === 0) return undefined;
  return new ConfigError(
    storage.file,
    problems.map(({ keyPath, message }) => {
      const line = storage.lineOf?.(keyPath);
      return { ...(line !== undefined ? { line } : {}), keyPath: formatKeyPath(keyPath), message };
    }),
  );
}

/** Where the machine-dependent checks of a load look (see `executor-environment.ts` and {@link storageEnvironmentProblems}). */
export interface LoadEnvironment {
  /** Environment the server runs with (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /** Home directory for `~/…` paths (default `os.homedir()`). */
  homeDirectory?: string;
}

/**
 * Loads and validates the whole configuration directory. A missing directory means the
 * defaults. A `*.yaml` file this build does not know is an error (a typo in a file name must
 * not silently drop configuration), with the known name it most likely meant.
 * @param environment where the entries that need the machine (a seed directory, the ssh-agent,
 *   the variables `storage.yaml` names) are checked
 * @throws ConfigurationError listing every problem of every file, or naming the directory when it
 *   is not one or cannot be read
 */
export async function loadConfiguration(configDir: string, environment: LoadEnvironment = {}): Promise<Configuration> {
  const errors: ConfigError[] = [];
  const known = new Set(Object.values(CONFIGURATION_FILES).map((fileSpec) => fileSpec.fileName));
  let names: string[] = [];
  try {
    names = await readdir(configDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new ConfigurationError([new ConfigError(configDir, [{ keyPath: '', message: 'the configuration directory is not a directory' }])]);
    if (code !== 'ENOENT') throw new ConfigurationError([new ConfigError(configDir, [{ keyPath: '', message: `cannot read the configuration directory: ${(error as Error).message}` }])]);
  }
  for (const name of names.filter((entry) => entry.endsWith('.yaml') || entry.endsWith('.yml')).sort()) {
    if (!known.has(name)) {
      const meant = similarNames(name.replace(/\.yml$/, '.yaml'), [...known])[0];
      const hint = meant !== undefined ? `did you mean ${meant}? ` : '';
      errors.push(new ConfigError(path.join(configDir, name), [{ keyPath: '', message: `unknown configuration file (${hint}known: ${[...known].join(', ')})` }]));
    }
  }
  const loaded: Partial<Record<ConfigurationFileKey, LoadedFile<unknown>>> = {};
  // Files that parsed but failed validation, with what they hold, for the reference checks.
  const read: Partial<LoadedFiles> = {};
  for (const [key, fileSpec] of Object.entries(CONFIGURATION_FILES) as [ConfigurationFileKey, ConfigurationFileSpec<unknown>][]) {
    try {
      loaded[key] = await loadOne(configDir, fileSpec);
      read[key] = loaded[key];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      errors.push(error);
      if (error.parsed) read[key] = { file: error.file, ...error.parsed };
    }
  }
  // References between files, and what entries need from the machine, are checked in the same
  // run, also from and to files with problems.
  const environmentProblem = read.executors ? executorEnvironmentProblems(read.executors, { baseDirectory: configDir, ...environment }) : undefined;
  // The start reads storage.yaml's variables only once the configuration loaded: checked here
  // too, so `config check` refuses what the start would.
  const storageProblem = read.storage ? storageEnvironmentError(read.storage, environment.environment) : undefined;
  const references = [...referenceProblems(read), ...(environmentProblem ? [environmentProblem] : []), ...(storageProblem ? [storageProblem] : [])];
  for (const problem of references) {
    const index = errors.findIndex((error) => error.file === problem.file);
    const existing = errors[index];
    if (existing) errors[index] = new ConfigError(existing.file, [...existing.problems, ...problem.problems].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
    else errors.push(problem);
  }
  if (errors.length > 0) throw new ConfigurationError(errors, Object.fromEntries(Object.entries(read).map(([key, file]) => [key, file.value])));
  return Object.fromEntries(Object.entries(loaded).map(([key, file]) => [key, file.value])) as Configuration;
}

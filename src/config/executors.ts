/**
 * `executors.yaml` (SPEC §7, §8): the named places where tools run.
 *
 * ```yaml
 * executors:
 *   sandboxed: { kind: local, sandbox: bwrap, network: false, writablePaths: [~/.cache], environment: { include: [GITHUB_TOKEN] } }
 *   build-box: { kind: ssh, host: build.example.org, user: dev, identityFile: ~/.ssh/id_ed25519 }
 *   scratch:   { kind: virtual, seedDirectory: ./templates/python, files: { README.md: "hi\n" } }
 * ```
 *
 * An executor named `local` (kind local, no sandbox) exists even when the file does not
 * mention it; an entry named `local` replaces it and must be of kind local.
 */
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { Executor } from '../executors/executor.js';
import { LocalExecutor } from '../executors/local/local-executor.js';
import { SshExecutor } from '../executors/ssh/ssh-executor.js';
import { VirtualExecutor } from '../executors/virtual/virtual-executor.js';
import { resolvePaths } from './paths.js';
import { EVEN_WITH_OTHER_PROBLEMS, isRecord, loadYamlFile, parseYamlFile } from './yaml-file.js';

/** File name of the executors configuration inside the config directory. */
export const EXECUTORS_FILE = 'executors.yaml';
/** Name of the executor that always exists. */
export const DEFAULT_EXECUTOR_NAME = 'local';

const pathText = z.string().min(1, 'must not be empty');

/** `{ include?, exclude? }`: which of the server's environment variables commands receive. */
export const CommandEnvironmentConfigSchema = z.strictObject({
  /** Patterns of variables passed even when excluded (by `exclude` or the default credential patterns). */
  include: z.array(z.string().min(1, 'must not be empty')).optional(),
  /** Patterns of variables removed besides the default credential patterns. */
  exclude: z.array(z.string().min(1, 'must not be empty')).optional(),
});

/** `{ kind: local, sandbox?: bwrap, network?, writablePaths?, readablePaths?, environment? }`. */
export const LocalExecutorConfigSchema = z
  .strictObject({
    kind: z.literal('local'),
    /** `bwrap` runs every command in bubblewrap (read-only system, writable workspace). */
    sandbox: z.literal('bwrap').optional(),
    /** With the sandbox: keep network access (default false). */
    network: z.boolean().optional(),
    /** With the sandbox: more writable paths (absolute, `~/…`, or relative to the config directory). */
    writablePaths: z.array(pathText).optional(),
    /** With the sandbox: paths shown read-only although the home (emptied in the sandbox) holds them. */
    readablePaths: z.array(pathText).optional(),
    /** Which of the server's environment variables commands receive (glob patterns, case ignored). */
    environment: CommandEnvironmentConfigSchema.optional(),
  })
  .superRefine((config: unknown, context) => {
    if (!isRecord(config) || config.sandbox !== undefined) return;
    for (const key of ['network', 'writablePaths', 'readablePaths'] as const) {
      if (config[key] !== undefined) context.addIssue({ code: 'custom', path: [key], message: 'only applies with sandbox: bwrap' });
    }
  }, EVEN_WITH_OTHER_PROBLEMS);

/** `{ kind: ssh, host, port?, user, identityFile?, agent?, knownHostsFile?, connectTimeoutMs? }`. */
export const SshExecutorConfigSchema = z
  .strictObject({
    kind: z.literal('ssh'),
    host: z.string().min(1, 'must not be empty'),
    /** TCP port, default 22. */
    port: z.number().int().min(1).max(65535).optional(),
    user: z.string().min(1, 'must not be empty'),
    /** Unencrypted private key file. */
    identityFile: pathText.optional(),
    /** Authenticate with the ssh-agent of the server's environment (`SSH_AUTH_SOCK`). */
    agent: z.boolean().optional(),
    /** known_hosts file the host key must be listed in (default `~/.ssh/known_hosts`). */
    knownHostsFile: pathText.optional(),
    /** Time allowed to connect and authenticate, in ms (default 10000). */
    connectTimeoutMs: z.number().int().min(100).max(600_000).optional(),
  })
  .superRefine((config: unknown, context) => {
    if (isRecord(config) && config.identityFile === undefined && config.agent !== true) {
      context.addIssue({ code: 'custom', path: ['identityFile'], message: 'give identityFile, or agent: true, to authenticate with' });
    }
  }, EVEN_WITH_OTHER_PROBLEMS);

/** True for a path without a `..` segment: relative to the workspace, or absolute in the executor's memory. */
function withoutParentSegments(file: string): boolean {
  return !file.split(/[\\/]/).includes('..');
}

/** `{ kind: virtual, seedDirectory?, files? }`. */
export const VirtualExecutorConfigSchema = z
  .strictObject({
    kind: z.literal('virtual'),
    /** A real directory copied into memory at first use (never written). */
    seedDirectory: pathText.optional(),
    /** Files created in memory: path relative to the workspace (or absolute) → content. */
    files: z.record(pathText, z.string()).optional(),
  })
  .superRefine((config: unknown, context) => {
    // Checked here rather than on the record's key schema, so the problem is reported at the key.
    const files = isRecord(config) && isRecord(config.files) ? Object.keys(config.files) : [];
    for (const file of files) {
      if (!withoutParentSegments(file)) context.addIssue({ code: 'custom', path: ['files', file], message: 'must not hold ".." segments: give a path relative to the workspace (or an absolute one in the executor\'s memory)' });
    }
  }, EVEN_WITH_OTHER_PROBLEMS);

/** One executor entry. */
export const ExecutorConfigSchema = z.discriminatedUnion('kind', [LocalExecutorConfigSchema, SshExecutorConfigSchema, VirtualExecutorConfigSchema]);
/** One executor entry. */
export type ExecutorConfig = z.infer<typeof ExecutorConfigSchema>;

/** The whole `executors.yaml`. */
export const ExecutorsFileSchema = z
  .strictObject({
    executors: z.record(z.string(), ExecutorConfigSchema).default({}),
  })
  .superRefine((file: unknown, context) => {
    if (!isRecord(file) || !isRecord(file.executors)) return;
    // Checked here rather than on the record's keys, whose failures zod reports without our message.
    for (const name of Object.keys(file.executors)) {
      if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
        context.addIssue({ code: 'custom', path: ['executors', name], message: 'executor names use letters, digits, ".", "_" and "-"' });
      }
    }
    const local = file.executors[DEFAULT_EXECUTOR_NAME];
    if (isRecord(local) && local.kind !== 'local') {
      context.addIssue({ code: 'custom', path: ['executors', DEFAULT_EXECUTOR_NAME, 'kind'], message: `the name "${DEFAULT_EXECUTOR_NAME}" is kept for the machine the server runs on; use kind: local or another name` });
    }
  }, EVEN_WITH_OTHER_PROBLEMS);
/** The whole `executors.yaml`. */
export type ExecutorsFile = z.infer<typeof ExecutorsFileSchema>;

/**
 * Parses `executors.yaml` text.
 * @throws ConfigError naming the file, line and key path of every problem
 */
export function parseExecutorsFile(file: string, text: string): ExecutorsFile {
  return parseYamlFile(file, text, ExecutorsFileSchema);
}

/**
 * Loads `executors.yaml` from a config directory; a missing file means only the default
 * `local` executor.
 * @throws ConfigError naming the file, line and key path of every problem
 */
export async function loadExecutorsFile(configDir: string): Promise<ExecutorsFile> {
  return loadYamlFile(path.join(configDir, EXECUTORS_FILE), ExecutorsFileSchema, () => ({ executors: {} }));
}

/** Options of `createExecutors`. */
export interface CreateExecutorsOptions {
  /** Directory relative paths are taken from: the config directory (default: the process's cwd). */
  baseDirectory?: string;
  /** Home directory for `~/…` paths (default `os.homedir()`). */
  homeDirectory?: string;
  /** Environment for `agent: true` (`SSH_AUTH_SOCK`; default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /**
   * Directories no sandboxed command or file operation may see: the server's configuration,
   * data and state directories (default: `baseDirectory` when given, and the XDG defaults
   * of `resolvePaths`). The home directory is emptied in the sandbox as well.
   */
  protectedDirectories?: string[];
  /**
   * Names of environment variables holding secrets (see `environmentReferences`): local
   * executors never pass them to commands, whatever their names look like.
   */
  secretVariables?: string[];
}

/**
 * Every variable name a loaded configuration reads with `env:NAME` (provider keys, MCP
 * servers' env and headers…), found by walking all its string values.
 * @param configuration any parsed configuration value
 * @returns the names, each once, in order of discovery
 */
export function environmentReferences(configuration: unknown): string[] {
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      const match = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(value);
      if (match?.[1] !== undefined) names.add(match[1]);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) visit(item);
    }
  };
  visit(configuration);
  return [...names];
}

/** `~` and `~/x` → home; relative → under the base directory; absolute stays. */
export function resolveConfigPath(value: string, options: Required<Pick<CreateExecutorsOptions, 'baseDirectory' | 'homeDirectory'>>): string {
  if (value === '~') return options.homeDirectory;
  if (value.startsWith('~/')) return path.join(options.homeDirectory, value.slice(2));
  return path.resolve(options.baseDirectory, value);
}

function createExecutor(name: string, config: ExecutorConfig, options: Required<CreateExecutorsOptions>): Executor {
  const resolve = (value: string): string => resolveConfigPath(value, options);
  switch (config.kind) {
    case 'local':
      return new LocalExecutor({
        name,
        environment: { ...config.environment, secretNames: options.secretVariables },
        ...(config.sandbox !== undefined
          ? {
              sandbox: config.sandbox,
              network: config.network,
              writablePaths: (config.writablePaths ?? []).map(resolve),
              readablePaths: (config.readablePaths ?? []).map(resolve),
              hiddenPaths: options.protectedDirectories,
              homeDirectory: options.homeDirectory,
            }
          : {}),
      });
    case 'ssh': {
      const agentSocket = config.agent === true ? options.environment.SSH_AUTH_SOCK : undefined;
      if (config.agent === true && (agentSocket === undefined || agentSocket === '') && config.identityFile === undefined) {
        throw new Error(`executor "${name}": agent: true, but SSH_AUTH_SOCK is not set in the server's environment (and no identityFile is given)`);
      }
      return new SshExecutor({
        name,
        host: config.host,
        port: config.port,
        user: config.user,
        identityFile: config.identityFile !== undefined ? resolve(config.identityFile) : undefined,
        agentSocket: agentSocket === '' ? undefined : agentSocket,
        knownHostsFile: resolve(config.knownHostsFile ?? '~/.ssh/known_hosts'),
        connectTimeoutMs: config.connectTimeoutMs,
      });
    }
    case 'virtual':
      return new VirtualExecutor({
        name,
        seedDirectory: config.seedDirectory !== undefined ? resolve(config.seedDirectory) : undefined,
        files: config.files,
      });
  }
}

/**
 * Creates the executors of a parsed `executors.yaml`, plus the default `local` one when the
 * file does not define it. Nothing connects yet: SSH executors connect on first use, virtual
 * ones seed on first use, and a missing `bwrap` is reported when a command runs.
 * @returns executors by name, `local` first
 * @throws Error naming the executor when an entry cannot be built (a seed directory that does
 *   not exist, `agent: true` without `SSH_AUTH_SOCK` and without identityFile…)
 */
export function createExecutors(config: ExecutorsFile, options: CreateExecutorsOptions = {}): Map<string, Executor> {
  const baseDirectory = options.baseDirectory ?? process.cwd();
  const environment = options.environment ?? process.env;
  const defaults = resolvePaths({}, environment);
  const resolved: Required<CreateExecutorsOptions> = {
    baseDirectory,
    homeDirectory: options.homeDirectory ?? os.homedir(),
    environment,
    secretVariables: options.secretVariables ?? [],
    protectedDirectories: options.protectedDirectories ?? [...(options.baseDirectory !== undefined ? [baseDirectory] : []), defaults.configDir, defaults.dataDir, defaults.stateDir],
  };
  const executors = new Map<string, Executor>();
  const entries: [string, ExecutorConfig][] = [[DEFAULT_EXECUTOR_NAME, config.executors[DEFAULT_EXECUTOR_NAME] ?? { kind: 'local' }]];
  for (const [name, entry] of Object.entries(config.executors)) if (name !== DEFAULT_EXECUTOR_NAME) entries.push([name, entry]);
  for (const [name, entry] of entries) executors.set(name, createExecutor(name, entry, resolved));
  return executors;
}

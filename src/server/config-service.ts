/**
 * The configuration in force in a running server: reloads on `config/reload` and when files
 * change (debounced), writes on `config/update`, applies the result to the runtime (models,
 * agents, limits, hooks, MCP servers, executors) and the HTTP server (allowed origins), and
 * tells clients (`config/updated`). A load that fails keeps the previous configuration, and
 * the server goes on working (SPEC §8).
 */
import { watch, type FSWatcher } from 'node:fs';
import { updateConfigurationFiles, type ConfigurationChange } from '../config/config-writer.js';
import { loadConfiguration, type Configuration } from '../config/configuration.js';
import { createExecutors, DEFAULT_EXECUTOR_NAME, environmentReferences, type ExecutorConfig, type ExecutorsFile } from '../config/executors.js';
import type { Executor } from '../executors/executor.js';
import { LocalExecutor } from '../executors/local/local-executor.js';
import type { ProcessTracker } from '../executors/process-tracker.js';
import type { Logger } from '../logger.js';
import { makeDirectorySync } from '../make-directory.js';
import { ModelRegistry } from '../models/model-registry.js';
import { DEFAULT_LIMITS, type Runtime, type RuntimeLimits } from '../runtime/runtime.js';
import { SerialQueue } from '../runtime/serial-queue.js';
import { loadPluginSet, NO_PLUGINS, withPluginAgents, withPluginMcpServers, type PluginSet } from '../plugins/plugin-set.js';

/** What `config/updated` says. */
export interface ConfigurationStatus {
  ok: boolean;
  /** Every problem, one per line, naming file, line and key path (when `ok` is false). */
  error?: string;
  /** What the new configuration does not change yet, and when it will (see `applyConfiguration`). */
  notes?: string[];
}

/** Where a configuration is applied besides the runtime. */
export interface ConfigurationTargets {
  /** The configuration directory (relative paths in `executors.yaml` are taken from it). */
  configDir: string;
  /** Limits given by whoever started the server (tests, embedding); they win over `server.yaml` on every reload. */
  limits?: Partial<RuntimeLimits>;
  /** The array the HTTP server reads allowed origins from on every upgrade; refilled in place. */
  allowedOrigins?: string[];
  /** Origins given on the command line, allowed whatever `server.yaml` says. */
  extraOrigins?: readonly string[];
  /**
   * Directories sandboxed executors must never show (the server's config, data and state
   * directories: its token is there); every executor built on a reload gets them too.
   */
  protectedDirectories?: readonly string[];
  /** Told of every process group a local executor starts, so a later server can stop what a dead one left running. */
  processTracker?: ProcessTracker;
}

/**
 * Builds the executors of a configuration as the server runs them: sandboxes hide the
 * server's directories, no command gets a variable the configuration reads a secret from
 * (`env:NAME`), and local executors report the processes they start to the tracker.
 * @throws Error naming the executor when an entry cannot be built
 */
export function buildServerExecutors(configuration: Configuration, targets: ConfigurationTargets): Map<string, Executor> {
  const executors = createExecutors(configuration.executors, {
    baseDirectory: targets.configDir,
    ...(targets.protectedDirectories ? { protectedDirectories: [...targets.protectedDirectories] } : {}),
    secretVariables: environmentReferences(configuration),
  });
  if (targets.processTracker) for (const executor of executors.values()) if (executor instanceof LocalExecutor) executor.trackProcesses(targets.processTracker);
  return executors;
}

/** The implicit `local` entry when `executors.yaml` does not define it. */
const IMPLICIT_LOCAL: ExecutorConfig = { kind: 'local' };

function executorEntry(file: ExecutorsFile | undefined, name: string): string | undefined {
  const entry = file?.executors[name] ?? (name === DEFAULT_EXECUTOR_NAME && file !== undefined ? IMPLICIT_LOCAL : undefined);
  return entry === undefined ? undefined : JSON.stringify(entry);
}

/** True when both configurations read secrets from the same environment variables. */
function sameSecrets(previous: Configuration | undefined, next: Configuration): boolean {
  return previous !== undefined && environmentReferences(previous).join('\n') === environmentReferences(next).join('\n');
}

/**
 * Builds the executors of `next`, reusing the runtime's instance of every executor whose entry
 * did not change (so its SSH connection or in-memory files survive the reload).
 * @throws Error naming the executor when an entry cannot be built
 */
function buildExecutors(runtime: Runtime, previous: Configuration | undefined, next: Configuration, targets: ConfigurationTargets): Map<string, Executor> {
  const fresh = buildServerExecutors(next, targets);
  const result = new Map<string, Executor>();
  for (const [name, executor] of fresh) {
    const current = runtime.findExecutor(name);
    const unchanged = current !== undefined && executorEntry(previous?.executors, name) === executorEntry(next.executors, name) && sameSecrets(previous, next);
    result.set(name, unchanged ? current : executor);
    // Nothing connects before first use, so the unused fresh instance holds nothing to close.
  }
  return result;
}

/**
 * Checks that a configuration can be put in force and returns the step that does it, so that
 * a configuration whose executors cannot be built changes nothing.
 *
 * What applies when: models (the catalog from `providers.yaml`), agents, limits, hooks,
 * executors and allowed origins apply to everything started after the reload (a running turn
 * finishes with what it started with); MCP servers apply to new conversations at once and to
 * open ones from their next turn; conversations already open keep the executors their work
 * location uses — the returned notes say so when that is the case.
 * @param previous the configuration in force (undefined at start)
 * @throws Error naming the executor when an `executors.yaml` entry cannot be built
 * @returns a function that puts the configuration in force and returns the notes for `config/updated`
 */
export function prepareConfiguration(runtime: Runtime, configuration: Configuration, targets: ConfigurationTargets, previous?: Configuration, plugins: PluginSet = NO_PLUGINS): () => string[] {
  const executors = buildExecutors(runtime, previous, configuration, targets);
  const models = new ModelRegistry(configuration.providers, { configDir: targets.configDir });
  return () => {
    const notes: string[] = [];
    const limits = configuration.server.limits;
    runtime.reconfigure({
      models,
      agents: withPluginAgents(configuration.agents, plugins.active),
      limits: {
        ...(limits.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: limits.maxStepsPerTurn } : {}),
        ...(limits.compactionThreshold !== undefined ? { compactionThreshold: limits.compactionThreshold } : {}),
        ...(limits.toolOutputLimitBytes !== undefined ? { toolOutputLimitBytes: limits.toolOutputLimitBytes } : {}),
        ...(limits.retry ? { retryPolicy: { ...DEFAULT_LIMITS.retryPolicy, ...limits.retry } } : {}),
        ...(limits.subagents ? { subagents: { ...DEFAULT_LIMITS.subagents, ...limits.subagents } } : {}),
        ...targets.limits,
      },
    });
    const openConversations = runtime.openConversationCount;
    const changed = (key: keyof Configuration) => previous !== undefined && JSON.stringify(previous[key]) !== JSON.stringify(configuration[key]);
    if (changed('mcp') && openConversations > 0) {
      notes.push('mcp.yaml: conversations already open switch to the new MCP servers at their next turn (a turn running now finishes with the old ones)');
    }
    if (changed('executors') && openConversations > 0) {
      notes.push('executors.yaml: conversations already open keep the executors they use; new conversations and work-location changes use the new definitions');
    }
    runtime.mcp = { ...runtime.mcp, servers: withPluginMcpServers(configuration.mcp.servers, plugins.active) };
    // Turns that start from now on run the new hooks (the plugins' hooks join them per turn).
    runtime.hooks = configuration.hooks;
    runtime.plugins = plugins;
    for (const status of plugins.statuses) {
      if (status.problem) runtime.logger?.warn({ plugin: status.name, file: status.problem.file, keyPath: status.problem.keyPath, problem: status.problem.message }, 'plugin not loaded; the other plugins are used');
    }
    runtime.replaceExecutors(executors);
    if (targets.allowedOrigins) targets.allowedOrigins.splice(0, targets.allowedOrigins.length, ...configuration.server.allowedOrigins, ...(targets.extraOrigins ?? []));
    return notes;
  };
}

/**
 * Puts a configuration in force at once (see `prepareConfiguration`).
 * @throws Error naming the executor when an `executors.yaml` entry cannot be built; nothing changed then
 * @returns the notes for `config/updated`
 */
export function applyConfiguration(runtime: Runtime, configuration: Configuration, targets: ConfigurationTargets, previous?: Configuration, plugins: PluginSet = NO_PLUGINS): string[] {
  return prepareConfiguration(runtime, configuration, targets, previous, plugins)();
}

/**
 * Secret values as clients see them: an `env:NAME` reference stays visible, a literal value
 * becomes `"***"` (the keys stay).
 * @param values `env` or `headers` values of an MCP server entry
 */
export function hideSecretValues(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value.startsWith('env:') ? value : '***']));
}

/** Replaces secrets with `***` (an `env:NAME` reference is not a secret and is shown). */
export function redactConfiguration(configuration: Configuration): Configuration {
  const hide = (value: string | undefined) => (value === undefined || value.startsWith('env:') ? value : '***');
  const providers = Object.fromEntries(
    Object.entries(configuration.providers.providers).map(([name, provider]) => [
      name,
      {
        ...provider,
        ...(provider.apiKey !== undefined ? { apiKey: hide(provider.apiKey) } : {}),
        ...(provider.headers ? { headers: Object.fromEntries(Object.keys(provider.headers).map((header) => [header, '***'])) } : {}),
      },
    ]),
  );
  const servers = Object.fromEntries(
    Object.entries(configuration.mcp.servers).map(([name, server]) => [
      name,
      server.transport === 'stdio' ? { ...server, ...(server.env ? { env: hideSecretValues(server.env) } : {}) } : { ...server, ...(server.headers ? { headers: hideSecretValues(server.headers) } : {}) },
    ]),
  );
  return { ...configuration, providers: { ...configuration.providers, providers }, mcp: { servers } };
}

/** Owns the configuration of one server. */
export class ConfigService {
  private readonly writes = new SerialQueue();
  private watcher: FSWatcher | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private lastError: string | undefined;

  /**
   * @param targets the configuration directory and what besides the runtime a configuration applies to
   * @param current the configuration loaded and applied at start
   * @param onStatus told after every reload or update (to send `config/updated`)
   */
  constructor(
    private readonly targets: ConfigurationTargets,
    public current: Configuration,
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly onStatus: (status: ConfigurationStatus) => void,
  ) {}

  /** The last reload's error, if the last reload failed. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** The configuration directory this service loads and watches. */
  get configDir(): string {
    return this.targets.configDir;
  }

  /**
   * The server's own directories (configuration, data, state), which hold its token and keys:
   * sandboxes hide them, and members may not place projects or conversations over them.
   */
  get protectedDirectories(): readonly string[] {
    return this.targets.protectedDirectories ?? [this.targets.configDir];
  }

  /** Reloads from disk and applies the result; on failure the previous configuration stays in force. */
  reload(): Promise<ConfigurationStatus> {
    return this.writes.run(async () => {
      let notes: string[] = [];
      try {
        const loaded = await loadConfiguration(this.targets.configDir);
        notes = applyConfiguration(this.runtime, loaded, this.targets, this.current, await loadPluginSet(this.targets.configDir, loaded.plugins));
        this.current = loaded;
        this.lastError = undefined;
        this.logger.info({ configDir: this.targets.configDir, notes }, 'configuration reloaded and applied');
      } catch (error) {
        // Clients see files by their name in the configuration directory, not by their place on this machine.
        this.lastError = (error as Error).message.replaceAll(`${this.configDir}/`, '');
        this.logger.warn({ configDir: this.configDir, error: this.lastError }, 'configuration reload failed; the previous configuration stays in force');
      }
      const status: ConfigurationStatus = this.lastError ? { ok: false, error: this.lastError } : { ok: true, ...(notes.length > 0 ? { notes } : {}) };
      this.onStatus(status);
      return status;
    });
  }

  /**
   * Edits the files, loads and applies the result, and restores the files if the load fails
   * or the result cannot be put in force.
   * @throws ConfigurationUpdateError naming what was wrong; the configuration in force is unchanged
   */
  update(changes: ConfigurationChange[]): Promise<Configuration> {
    return this.writes.run(async () => {
      let commit: (() => string[]) | undefined;
      const loaded = await updateConfigurationFiles(this.targets.configDir, changes, async (configuration) => {
        commit = prepareConfiguration(this.runtime, configuration, this.targets, this.current, await loadPluginSet(this.targets.configDir, configuration.plugins));
      });
      const notes = commit?.() ?? [];
      this.current = loaded;
      this.lastError = undefined;
      this.onStatus({ ok: true, ...(notes.length > 0 ? { notes } : {}) });
      return this.current;
    });
  }

  /**
   * Reloads (debounced by `debounceMs`) whenever a file in the directory changes. A missing
   * directory (only the default one may be: `serve` refuses a given one that does not exist) is
   * made first, so that files written after the start, as on a first run, are read.
   */
  watch(debounceMs = 300): void {
    const onChange = (): void => {
      clearTimeout(this.debounce);
      this.debounce = setTimeout(() => {
        this.reload().catch((error: unknown) => this.logger.warn({ error: (error as Error).message }, 'configuration reload failed'));
      }, debounceMs);
    };
    try {
      try {
        this.watcher = watch(this.targets.configDir, onChange);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        makeDirectorySync(this.targets.configDir, 0o700);
        this.watcher = watch(this.targets.configDir, onChange);
      }
      this.watcher.on('error', (error) => this.logger.warn({ error: error.message }, 'configuration watch failed'));
    } catch (error) {
      // A directory that cannot be made or watched leaves config/reload, which still works once it exists.
      this.logger.warn({ configDir: this.targets.configDir, error: (error as Error).message }, 'not watching the configuration directory');
    }
  }

  /** Stops watching. */
  close(): void {
    clearTimeout(this.debounce);
    this.watcher?.close();
  }
}

/**
 * The configuration in force in a running server: reloads on `config/reload` and when files
 * change (debounced), writes on `config/update`, and tells clients (`config/updated`). A load
 * that fails keeps the previous configuration, and the server goes on working (SPEC §8).
 */
import { watch, type FSWatcher } from 'node:fs';
import { updateConfigurationFiles, type ConfigurationChange } from '../config/config-writer.js';
import { loadConfiguration, type Configuration } from '../config/configuration.js';
import type { Logger } from '../logger.js';
import { ModelRegistry } from '../models/model-registry.js';
import type { Runtime } from '../runtime/runtime.js';
import { SerialQueue } from '../runtime/serial-queue.js';

/** What `config/updated` says. */
export interface ConfigurationStatus {
  ok: boolean;
  /** Every problem, one per line, naming file, line and key path (when `ok` is false). */
  error?: string;
}

/** Turns a configuration into the runtime's definitions. */
export function applyConfiguration(runtime: Runtime, configuration: Configuration): void {
  const limits = configuration.server.limits;
  runtime.reconfigure({
    models: new ModelRegistry(configuration.providers),
    agents: configuration.agents,
    limits: {
      ...(limits.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: limits.maxStepsPerTurn } : {}),
      ...(limits.compactionThreshold !== undefined ? { compactionThreshold: limits.compactionThreshold } : {}),
      ...(limits.toolOutputLimitBytes !== undefined ? { toolOutputLimitBytes: limits.toolOutputLimitBytes } : {}),
      ...(limits.retry ? { retryPolicy: { ...runtime.limits.retryPolicy, ...limits.retry } } : {}),
      ...(limits.subagents ? { subagents: { ...runtime.limits.subagents, ...limits.subagents } } : {}),
    },
  });
  // Conversations opened from now on use the new servers; open ones keep their MCP clients.
  runtime.mcp = { ...runtime.mcp, servers: configuration.mcp.servers };
  // Turns that start from now on run the new hooks.
  runtime.hooks = configuration.hooks;
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
  const hideAll = (values: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value.startsWith('env:') ? value : '***']));
  const servers = Object.fromEntries(
    Object.entries(configuration.mcp.servers).map(([name, server]) => [
      name,
      server.transport === 'stdio' ? { ...server, ...(server.env ? { env: hideAll(server.env) } : {}) } : { ...server, ...(server.headers ? { headers: hideAll(server.headers) } : {}) },
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
   * @param configDir the configuration directory
   * @param current the configuration loaded at start
   * @param onStatus told after every reload or update (to send `config/updated`)
   */
  constructor(
    readonly configDir: string,
    public current: Configuration,
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly onStatus: (status: ConfigurationStatus) => void,
  ) {}

  /** The last reload's error, if the last reload failed. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** Reloads from disk; on failure the previous configuration stays in force. */
  reload(): Promise<ConfigurationStatus> {
    return this.writes.run(async () => {
      try {
        this.current = await loadConfiguration(this.configDir);
        applyConfiguration(this.runtime, this.current);
        this.lastError = undefined;
        this.logger.info({ configDir: this.configDir }, 'configuration reloaded');
      } catch (error) {
        // Clients see files by their name in the configuration directory, not by their place on this machine.
        this.lastError = (error as Error).message.replaceAll(`${this.configDir}/`, '');
        this.logger.warn({ configDir: this.configDir, error: this.lastError }, 'configuration reload failed; the previous configuration stays in force');
      }
      const status = this.lastError ? { ok: false, error: this.lastError } : { ok: true };
      this.onStatus(status);
      return status;
    });
  }

  /**
   * Edits the files, loads the result, and restores the files if the load fails.
   * @throws ConfigurationUpdateError naming what was wrong; the configuration in force is unchanged
   */
  update(changes: ConfigurationChange[]): Promise<Configuration> {
    return this.writes.run(async () => {
      this.current = await updateConfigurationFiles(this.configDir, changes);
      applyConfiguration(this.runtime, this.current);
      this.lastError = undefined;
      this.onStatus({ ok: true });
      return this.current;
    });
  }

  /** Reloads (debounced by `debounceMs`) whenever a file in the directory changes. */
  watch(debounceMs = 300): void {
    try {
      this.watcher = watch(this.configDir, () => {
        clearTimeout(this.debounce);
        this.debounce = setTimeout(() => void this.reload(), debounceMs);
      });
      this.watcher.on('error', (error) => this.logger.warn({ error: error.message }, 'configuration watch failed'));
    } catch (error) {
      // A missing directory cannot be watched; config/reload still works once it exists.
      this.logger.warn({ configDir: this.configDir, error: (error as Error).message }, 'not watching the configuration directory');
    }
  }

  /** Stops watching. */
  close(): void {
    clearTimeout(this.debounce);
    this.watcher?.close();
  }
}

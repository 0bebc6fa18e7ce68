/**
 * The plugins in force: every plugin of `plugins.yaml`, loaded from the configuration
 * directory's `plugins/` folder, and how their parts join the configuration (hooks after the
 * hooks of `hooks.yaml`, agents and MCP servers next to those of `agents.yaml` and
 * `mcp.yaml`). A plugin that fails to load is reported and left out; the others are used.
 */
import path from 'node:path';
import type { AgentsFile } from '../config/agents.js';
import { HOOK_EVENTS, type HooksFile } from '../config/hooks.js';
import type { McpFile } from '../config/mcp.js';
import { PLUGINS_FOLDER, type PluginsFile } from '../config/plugins.js';
import { loadPlugin, type LoadedPlugin, type PluginProblem } from './plugin-loader.js';

/** What is known of one installed plugin (for `plugins/list`). */
export interface PluginStatus {
  name: string;
  /** Enabled in `plugins.yaml` (the user scope). */
  enabled: boolean;
  /** Where it was installed from. */
  source?: string;
  /** Absolute path of its folder. */
  directory: string;
  /** The loaded plugin; absent when it failed to load (see `problem`). */
  plugin?: LoadedPlugin;
  problem?: PluginProblem;
}

/** Every installed plugin, and those in force (enabled and loaded). */
export interface PluginSet {
  statuses: PluginStatus[];
  /** Enabled plugins that loaded, in `plugins.yaml` order. */
  active: LoadedPlugin[];
}

/** No plugins. */
export const NO_PLUGINS: PluginSet = { statuses: [], active: [] };

/** The folder a plugin is installed in. */
export function pluginDirectory(configDir: string, name: string): string {
  return path.join(configDir, PLUGINS_FOLDER, name);
}

/**
 * Loads every plugin listed in `plugins.yaml` (disabled ones too, so that their problems show
 * in the listing). Never rejects.
 */
export async function loadPluginSet(configDir: string, file: PluginsFile): Promise<PluginSet> {
  const statuses = await Promise.all(
    Object.entries(file.plugins).map(async ([name, entry]): Promise<PluginStatus> => {
      const directory = pluginDirectory(configDir, name);
      const loaded = await loadPlugin(directory, name);
      return { name, enabled: entry.enabled !== false, ...(entry.source !== undefined ? { source: entry.source } : {}), directory, ...loaded };
    }),
  );
  return { statuses, active: statuses.flatMap((status) => (status.enabled && status.plugin ? [status.plugin] : [])) };
}

/** `hooks.yaml` followed, per event, by the hooks of each plugin. */
export function withPluginHooks(hooks: HooksFile, plugins: readonly LoadedPlugin[]): HooksFile {
  if (plugins.length === 0) return hooks;
  const merged = Object.fromEntries(HOOK_EVENTS.map((event) => [event, [...hooks.hooks[event], ...plugins.flatMap((plugin) => plugin.hooks[event] ?? [])]]));
  return { ...hooks, hooks: merged as HooksFile['hooks'] };
}

/** The servers of `mcp.yaml` and those of the plugins (`<plugin>_<server>`); `mcp.yaml` wins a clash. */
export function withPluginMcpServers(servers: McpFile['servers'], plugins: readonly LoadedPlugin[]): McpFile['servers'] {
  if (plugins.length === 0) return servers;
  return Object.assign({}, ...plugins.map((plugin) => plugin.mcpServers), servers) as McpFile['servers'];
}

/** The agents of `agents.yaml` and those of the plugins (`<plugin>:<agent>`); the default stays that of `agents.yaml`. */
export function withPluginAgents(agents: AgentsFile, plugins: readonly LoadedPlugin[]): AgentsFile {
  if (plugins.length === 0) return agents;
  return { ...agents, agents: Object.assign({}, ...plugins.map((plugin) => plugin.agents), agents.agents) as AgentsFile['agents'] };
}

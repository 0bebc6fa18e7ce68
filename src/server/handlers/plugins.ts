/**
 * Handlers of the plugin methods (`plugins/list | add | remove | setEnabled`, docs/plugins.md).
 * Changes go through the configuration service: the files are edited, the result is loaded
 * and put in force, and restored when the load fails (SPEC §8).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationUpdateError } from '../../config/config-writer.js';
import { addPlugin, PluginOperationError, removePlugin, setPluginEnabled } from '../../plugins/install.js';
import type { PluginStatus } from '../../plugins/plugin-set.js';
import { ErrorCodes, RpcError, type PluginInfo } from '../../protocol/index.js';
import type { MethodHandlers } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';

/** The skill folders (holding a `SKILL.md`) of the plugin's skills directories, as `<plugin>:<skill>`. */
async function skillNames(status: PluginStatus): Promise<string[]> {
  const names: string[] = [];
  for (const directory of status.plugin?.skillDirectories ?? []) {
    for (const entry of await readdir(directory).catch(() => [] as string[])) {
      if (await stat(path.join(directory, entry, 'SKILL.md')).catch(() => undefined)) names.push(`${status.name}:${entry}`);
    }
  }
  return names.sort();
}

/**
 * How `plugins/list` describes one plugin; files inside the configuration directory are named
 * relative to it, as clients know them.
 */
export async function describePlugin(status: PluginStatus, configDir: string): Promise<PluginInfo> {
  const plugin = status.plugin;
  const relative = (file: string) => (file.startsWith(`${configDir}${path.sep}`) ? path.relative(configDir, file) : file);
  return {
    name: status.name,
    enabled: status.enabled,
    active: status.enabled && plugin !== undefined,
    ...(status.source !== undefined ? { source: status.source } : {}),
    ...(plugin?.version !== undefined ? { version: plugin.version } : {}),
    ...(plugin?.description !== undefined ? { description: plugin.description } : {}),
    skills: await skillNames(status),
    agents: Object.keys(plugin?.agents ?? {}),
    commands: Object.keys(plugin?.commands ?? {}),
    mcpServers: Object.keys(plugin?.mcpServers ?? {}),
    hooks: Object.entries(plugin?.hooks ?? {}).flatMap(([event, hooks]) => (hooks ?? []).map((hook) => `${event}: ${hook.command}`)),
    notes: plugin?.notes ?? [],
    ...(status.problem ? { problem: { file: relative(status.problem.file), keyPath: status.problem.keyPath, message: status.problem.message } } : {}),
  };
}

/**
 * Builds the plugin handlers bound to one connection (spread into `createMethodHandlers`).
 * A refused operation is `invalidParams` naming the method and the reason.
 */
export function createPluginHandlers(connection: RpcConnection): Pick<MethodHandlers, 'plugins/list' | 'plugins/add' | 'plugins/remove' | 'plugins/setEnabled'> {
  const config = connection.config;
  const runtime = connection.runtime;
  const apply = (changes: Parameters<typeof config.update>[0]) => config.update(changes);
  const info = async (method: string, name: string): Promise<PluginInfo> => {
    const status = runtime.plugins.statuses.find((candidate) => candidate.name === name);
    if (!status) throw new RpcError(ErrorCodes.notFound, `${method}: plugin "${name}" is not installed`);
    return describePlugin(status, config.configDir);
  };
  const refuse = (method: string, error: unknown): never => {
    if (error instanceof PluginOperationError || error instanceof ConfigurationUpdateError) {
      throw new RpcError(ErrorCodes.invalidParams, `${method}: ${error.message.replaceAll(`${config.configDir}/`, '')}`);
    }
    throw error;
  };
  return {
    async 'plugins/list'() {
      return { plugins: await Promise.all(runtime.plugins.statuses.map((status) => describePlugin(status, config.configDir))) };
    },

    async 'plugins/add'(params) {
      try {
        const plugin = await addPlugin(config.configDir, params.source, apply);
        return { plugin: await info('plugins/add', plugin.name) };
      } catch (error) {
        return refuse('plugins/add', error);
      }
    },

    async 'plugins/remove'(params) {
      try {
        await removePlugin(config.configDir, params.name, apply);
        return {};
      } catch (error) {
        return refuse('plugins/remove', error);
      }
    },

    async 'plugins/setEnabled'(params) {
      if (params.projectDirectory !== undefined && !path.isAbsolute(params.projectDirectory)) {
        throw new RpcError(ErrorCodes.invalidParams, `plugins/setEnabled: params.projectDirectory: "${params.projectDirectory}" is not an absolute path`);
      }
      try {
        const scope = params.projectDirectory !== undefined ? { kind: 'project' as const, directory: params.projectDirectory } : { kind: 'user' as const };
        await setPluginEnabled(config.configDir, params.name, params.enabled, scope, apply);
        return { plugin: await info('plugins/setEnabled', params.name) };
      } catch (error) {
        return refuse('plugins/setEnabled', error);
      }
    },
  };
}

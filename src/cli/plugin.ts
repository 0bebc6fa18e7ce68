/**
 * `openvaala plugin add | remove | list | enable | disable` (docs/plugins.md): the plugins of
 * the configuration directory. The files are edited the way the server edits them (SPEC §8:
 * edit, load the result, restore the old files if it does not load); a running server notices
 * the change to `plugins.yaml` and reloads. `--project <dir>` makes `enable` and `disable`
 * apply to conversations working in that directory only (`<dir>/.openvaala/plugins.yaml`).
 */
import path from 'node:path';
import { updateConfigurationFiles } from '../config/config-writer.js';
import { addPlugin, readPluginsFile, removePlugin, setPluginEnabled, type ApplyChanges } from '../plugins/install.js';
import { describePluginProblem } from '../plugins/plugin-loader.js';
import { loadPluginSet } from '../plugins/plugin-set.js';
import type { OutputStreams } from './exec-output.js';
import { terminalStreams } from './terminal-streams.js';

const writer = (configDir: string): ApplyChanges => (changes) => updateConfigurationFiles(configDir, changes);

/**
 * Installs a plugin from a folder, a tarball or an npm package name.
 * @returns exit code 0
 * @throws PluginOperationError (or a configuration update error) naming what was wrong
 */
export async function runPluginAdd(configDir: string, source: string, streams: OutputStreams): Promise<number> {
  // Names, versions and notes come from the plugin's own files.
  streams = terminalStreams(streams);
  const plugin = await addPlugin(configDir, source, writer(configDir));
  const parts = [
    ['skills', plugin.skillDirectories.length > 0 ? 'yes' : ''],
    ['agents', Object.keys(plugin.agents).join(', ')],
    ['commands', Object.keys(plugin.commands).join(', ')],
    ['MCP servers', Object.keys(plugin.mcpServers).join(', ')],
    ['hooks', Object.entries(plugin.hooks).map(([event, hooks]) => `${event} (${hooks?.length ?? 0})`).join(', ')],
  ].filter(([, value]) => value !== '');
  streams.stdout.write(`installed ${plugin.name}${plugin.version ? ` ${plugin.version}` : ''} in ${plugin.directory}\n`);
  for (const [what, value] of parts) streams.stdout.write(`  ${what}: ${value}\n`);
  for (const note of plugin.notes) streams.stdout.write(`  not used: ${note}\n`);
  return 0;
}

/** Removes an installed plugin and its folder. @returns exit code 0 */
export async function runPluginRemove(configDir: string, name: string, streams: OutputStreams): Promise<number> {
  // Names, versions and notes come from the plugin's own files.
  streams = terminalStreams(streams);
  await removePlugin(configDir, name, writer(configDir));
  streams.stdout.write(`removed ${name}\n`);
  return 0;
}

/**
 * Enables or disables a plugin for the user, or with `project` for one project directory.
 * @returns exit code 0
 */
export async function runPluginSetEnabled(configDir: string, name: string, enabled: boolean, project: string | undefined, streams: OutputStreams): Promise<number> {
  // Names, versions and notes come from the plugin's own files.
  streams = terminalStreams(streams);
  const scope = project !== undefined ? { kind: 'project' as const, directory: path.resolve(project) } : { kind: 'user' as const };
  await setPluginEnabled(configDir, name, enabled, scope, writer(configDir));
  streams.stdout.write(`${enabled ? 'enabled' : 'disabled'} ${name}${scope.kind === 'project' ? ` for ${scope.directory}` : ''}\n`);
  return 0;
}

/**
 * Lists the installed plugins with their parts; a plugin that does not load is shown with its
 * file, key and problem.
 * @returns exit code: 0, or 1 when a plugin does not load
 */
export async function runPluginList(configDir: string, streams: OutputStreams): Promise<number> {
  // Names, versions and notes come from the plugin's own files.
  streams = terminalStreams(streams);
  const set = await loadPluginSet(configDir, await readPluginsFile(configDir));
  if (set.statuses.length === 0) streams.stdout.write('no plugins installed\n');
  for (const status of set.statuses) {
    const state = status.problem ? 'broken' : status.enabled ? 'enabled' : 'disabled';
    streams.stdout.write(`${status.name}\t${state}\t${status.plugin?.version ?? ''}\t${status.source ?? ''}\n`);
    const plugin = status.plugin;
    if (plugin) {
      const names = [...Object.keys(plugin.agents).map((name) => `agent ${name}`), ...Object.keys(plugin.commands).map((name) => `command /${name}`), ...Object.keys(plugin.mcpServers).map((name) => `MCP server ${name}`)];
      for (const name of names) streams.stdout.write(`  ${name}\n`);
    }
    if (status.problem) streams.stdout.write(`  ${describePluginProblem(status.problem)}\n`);
  }
  return set.statuses.some((status) => status.problem) ? 1 : 0;
}

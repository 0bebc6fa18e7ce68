/**
 * The plugins of one turn (docs/plugins.md): those enabled in the configuration directory's
 * `plugins.yaml`, as changed by the work location's own `.openvaala/plugins.yaml` (the project
 * scope, read on the conversation's executor at the start of every turn), and the prompt
 * commands they bring (`/<plugin>:<command> arguments` at the start of a prompt).
 */
import path from 'node:path';
import { PLUGINS_FILE, PluginsFileSchema } from '../../config/plugins.js';
import { parseYamlFile } from '../../config/yaml-file.js';
import type { ExecutorFileSystem } from '../../executors/executor.js';
import type { LoadedPlugin, PluginCommand } from '../../plugins/plugin-loader.js';
import type { PluginSet } from '../../plugins/plugin-set.js';

/** The plugins in force for a turn, and a problem with the project's file when it could not be used. */
export interface TurnPlugins {
  plugins: LoadedPlugin[];
  /** The project's `.openvaala/plugins.yaml` and why it was ignored (file, line, key path), when it was. */
  problem?: { file: string; message: string };
}

/**
 * Applies the project scope: a plugin the project's file enables is used even when the user
 * disabled it, one it disables is left out. A file that does not validate is ignored and
 * reported. Never rejects.
 */
export async function pluginsForTurn(set: PluginSet, fileSystem: ExecutorFileSystem, workDirectory: string): Promise<TurnPlugins> {
  if (set.statuses.length === 0) return { plugins: [] };
  const file = path.posix.join(workDirectory, '.openvaala', PLUGINS_FILE);
  let overrides: Record<string, boolean> = {};
  let problem: TurnPlugins['problem'];
  try {
    if ((await fileSystem.stat(file))?.kind === 'file') {
      const parsed = parseYamlFile(file, Buffer.from(await fileSystem.readFile(file)), PluginsFileSchema);
      overrides = Object.fromEntries(Object.entries(parsed.plugins).flatMap(([name, entry]) => (entry.enabled !== undefined ? [[name, entry.enabled]] : [])));
    }
  } catch (error) {
    problem = { file, message: `${(error as Error).message} (the project's plugin settings were ignored)` };
  }
  const plugins = set.statuses.flatMap((status) => (status.plugin && (overrides[status.name] ?? status.enabled) ? [status.plugin] : []));
  return { plugins, ...(problem !== undefined ? { problem } : {}) };
}

/** A prompt command invoked by a prompt, and the text after its name. */
export interface CommandInvocation {
  command: PluginCommand;
  arguments: string;
}

/** The prompt command a prompt starts with (`/<plugin>:<command> …`), when it names one of `plugins`. */
export function findPromptCommand(prompt: string, plugins: readonly LoadedPlugin[]): CommandInvocation | undefined {
  const match = /^\s*\/([a-z][a-z0-9-]*:[a-z0-9-]+)(?:\s+([\s\S]*))?$/.exec(prompt);
  if (!match) return undefined;
  const name = match[1] as string;
  for (const plugin of plugins) {
    const command = plugin.commands[name];
    if (command) return { command, arguments: (match[2] ?? '').trim() };
  }
  return undefined;
}

/** The command's prompt with `$ARGUMENTS` replaced (or the arguments appended when it has no such placeholder). */
export function commandPrompt(invocation: CommandInvocation): string {
  const { command, arguments: given } = invocation;
  if (command.body.includes('$ARGUMENTS')) return command.body.replaceAll('$ARGUMENTS', given);
  return given === '' ? command.body : `${command.body}\n\nArguments: ${given}`;
}

/**
 * Plugins in the runtime protocol (docs/plugins.md): listing the installed plugins with
 * their parts and problems, installing one from a folder, tarball or npm package on the
 * server's machine, removing one, and enabling or disabling one for the user or for a project.
 */
import { z } from 'zod';

const pluginName = z.string().regex(/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/, { message: 'not a plugin name (lowercase letters and digits in groups joined by single "-", starting with a letter)' });

/** Why a plugin did not load: the file and the key at fault. */
export const PluginProblemSchema = z.object({
  /** The file at fault, relative to the configuration directory when inside it. */
  file: z.string(),
  /** Key path inside that file (`hooks.PreToolUse[0].hooks[0].type`, see `formatKeyPath`); empty for the whole file. */
  keyPath: z.string(),
  message: z.string(),
});

/** One installed plugin and what it brings, each part under the name it is used by. */
export const PluginInfoSchema = z.object({
  name: z.string(),
  /** Enabled for the user (`plugins.yaml`); a project's own setting may differ. */
  enabled: z.boolean(),
  /** Loaded and in force: enabled, and without a problem. */
  active: z.boolean(),
  /** Where it was installed from (folder, tarball or npm package name). */
  source: z.string().optional(),
  version: z.string().optional(),
  description: z.string().optional(),
  /** Skills, as `<plugin>:<skill>`. */
  skills: z.array(z.string()),
  /** Agents, as `<plugin>:<agent>`. */
  agents: z.array(z.string()),
  /** Prompt commands, as `<plugin>:<command>` (invoked with `/<plugin>:<command>` at the start of a prompt). */
  commands: z.array(z.string()),
  /** MCP servers, as `<plugin>_<server>` (their tools are `mcp__<plugin>_<server>__<tool>`). */
  mcpServers: z.array(z.string()),
  /** Hooks, as `<event>: <command>`. */
  hooks: z.array(z.string()),
  /** Parts of the folder that are not used here (an unknown manifest key, an unsupported hook event). */
  notes: z.array(z.string()),
  /** Why it did not load; its parts are then not used, the other plugins are. */
  problem: PluginProblemSchema.optional(),
});
/** One installed plugin. */
export type PluginInfo = z.infer<typeof PluginInfoSchema>;

/** The plugin methods, spread into `methods`. */
export const pluginMethods = {
  /** Every installed plugin, in `plugins.yaml` order. */
  'plugins/list': {
    params: z.object({}),
    result: z.object({ plugins: z.array(PluginInfoSchema) }),
  },
  /**
   * Installs a plugin on the server's machine from a folder, a tarball (`.tgz`, `.tar.gz`,
   * `.tar`) or an npm package name, and enables it. Refused (`invalidParams`, naming the file
   * and key) when the plugin does not load; nothing is installed then.
   */
  'plugins/add': {
    params: z.object({ source: z.string().min(1) }),
    result: z.object({ plugin: PluginInfoSchema }),
  },
  /** Removes an installed plugin (its entry and its folder). */
  'plugins/remove': {
    params: z.object({ name: pluginName }),
    result: z.object({}),
  },
  /**
   * Enables or disables an installed plugin: for the user (`plugins.yaml`), or, with
   * `projectDirectory`, for conversations working in that directory
   * (`<projectDirectory>/.openvaala/plugins.yaml`, read at the start of each turn).
   */
  'plugins/setEnabled': {
    params: z.object({ name: pluginName, enabled: z.boolean(), projectDirectory: z.string().min(1).optional() }),
    result: z.object({ plugin: PluginInfoSchema }),
  },
} as const;

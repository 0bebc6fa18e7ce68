/**
 * `plugins.yaml`: the plugins installed in the configuration directory's `plugins/` folder,
 * and whether each is enabled (SPEC §8; the plugin format is described in docs/plugins.md).
 * The same file, at `<project>/.openvaala/plugins.yaml`, turns plugins on or off for one
 * project (only `enabled` is read there).
 *
 * ```yaml
 * plugins:
 *   review-kit:
 *     enabled: true
 *     source: /home/me/src/review-kit      # where it was installed from (folder, tarball or npm name)
 * ```
 */
import { z } from 'zod';
import { EVEN_WITH_OTHER_PROBLEMS, isRecord } from './yaml-file.js';

/** File name of the plugin list, in the configuration directory and in a project's `.openvaala/`. */
export const PLUGINS_FILE = 'plugins.yaml';
/** Folder of the configuration directory holding one folder per installed plugin. */
export const PLUGINS_FOLDER = 'plugins';

/**
 * Plugin names, as the Claude Code plugin format has them: lowercase letters and digits in
 * groups joined by single hyphens, starting with a letter. They prefix the names of the
 * plugin's parts (`review-kit:summarize`), so they must stay short and plain.
 */
export const PLUGIN_NAME_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
/** Longest plugin name (MCP server names, `<plugin>_<server>`, are at most 32 characters). */
export const PLUGIN_NAME_MAX_LENGTH = 24;

/** The message for a plugin name that breaks the rule. */
export const PLUGIN_NAME_RULE = `plugin names are 1-${PLUGIN_NAME_MAX_LENGTH} lowercase letters and digits in groups joined by single "-", starting with a letter`;

/** Whether `name` is a valid plugin name. */
export function isPluginName(name: string): boolean {
  return PLUGIN_NAME_PATTERN.test(name) && name.length <= PLUGIN_NAME_MAX_LENGTH;
}

/** One installed plugin: `{ enabled?, source? }`. */
export const PluginEntrySchema = z.strictObject({
  /** `false` keeps the plugin installed without using any of its parts (default true). */
  enabled: z.boolean().optional(),
  /** Where it was installed from: a folder, a tarball or an npm package name (informational). */
  source: z.string().optional(),
});
/** One installed plugin. */
export type PluginEntry = z.infer<typeof PluginEntrySchema>;

/** The whole `plugins.yaml`: `{ plugins: { <name>: <entry> } }`. */
export const PluginsFileSchema = z
  .strictObject({
    plugins: z.record(z.string(), PluginEntrySchema).default({}),
  })
  .superRefine((file: unknown, context) => {
    // Runs also when an entry has problems of its own, so one run names every bad name too.
    const plugins = isRecord(file) && isRecord(file.plugins) ? Object.keys(file.plugins) : [];
    for (const name of plugins) {
      if (!isPluginName(name)) context.addIssue({ code: 'custom', path: ['plugins', name], message: PLUGIN_NAME_RULE });
    }
  }, EVEN_WITH_OTHER_PROBLEMS);
/** The whole `plugins.yaml`. */
export type PluginsFile = z.infer<typeof PluginsFileSchema>;

/**
 * The plugin manifest, `.claude-plugin/plugin.json`: the Claude Code plugin format, read as it
 * is, so folders made for Claude Code load unchanged (docs/plugins.md). Only `name` is
 * required; the component keys add paths to the default folders (`skills/`, `agents/`,
 * `commands/`, `hooks/hooks.json`, `.mcp.json`). Keys this runtime has no use for
 * (`outputStyles`, `lspServers`, …) are kept and named in the plugin's notes.
 */
import { z } from 'zod';
import { isPluginName, PLUGIN_NAME_RULE } from '../config/plugins.js';
import { formatKeyPath } from '../key-path.js';

/** Where the manifest is inside a plugin folder. */
export const MANIFEST_PATH = '.claude-plugin/plugin.json';

/** The placeholder for the plugin's own folder in commands, arguments and paths (Claude Code's name, and ours). */
export const PLUGIN_ROOT_VARIABLES = ['CLAUDE_PLUGIN_ROOT', 'OPENVAALA_PLUGIN_ROOT'] as const;

const relativePath = z.string().min(1, 'must not be empty');
const pathOrPaths = z.union([relativePath, z.array(relativePath)], { error: 'expected a path relative to the plugin folder, or a list of such paths' });

/** Keys of the manifest this runtime reads; any other key is kept and reported as unused. */
export const KNOWN_MANIFEST_KEYS = new Set(['name', 'version', 'description', 'author', 'homepage', 'repository', 'license', 'keywords', 'skills', 'agents', 'commands', 'hooks', 'mcpServers']);

/** The manifest as read (unknown keys pass through). */
export const PluginManifestSchema = z.looseObject({
  name: z.string({ error: (issue) => (issue.input === undefined ? 'required: the plugin\'s name' : 'expected a string') }).refine(isPluginName, { message: PLUGIN_NAME_RULE }),
  version: z.string().optional(),
  description: z.string().optional(),
  author: z.union([z.string(), z.looseObject({ name: z.string().optional() })]).optional(),
  homepage: z.string().optional(),
  repository: z.union([z.string(), z.looseObject({})]).optional(),
  license: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  skills: pathOrPaths.optional(),
  agents: pathOrPaths.optional(),
  commands: pathOrPaths.optional(),
  /** A path to a hooks file, or the hooks configuration itself (`{ hooks: { PreToolUse: [...] } }`). */
  hooks: z.union([relativePath, z.array(relativePath), z.looseObject({})]).optional(),
  /** A path to an `.mcp.json`-style file, or the servers themselves. */
  mcpServers: z.union([relativePath, z.array(relativePath), z.looseObject({})]).optional(),
});
/** The manifest as read. */
export type PluginManifest = z.infer<typeof PluginManifestSchema>;

/** A plugin hooks file (`hooks/hooks.json`): Claude Code's event names, each a list of matcher groups. */
export const PluginHooksFileSchema = z.looseObject({
  description: z.string().optional(),
  hooks: z.record(
    z.string(),
    z.array(
      z.looseObject({
        matcher: z.string().optional(),
        hooks: z.array(
          z.looseObject({
            type: z.string({ error: 'required: "command"' }),
            command: z.string().optional(),
            /** Seconds. */
            timeout: z.number().positive().optional(),
          }),
        ),
      }),
    ),
  ),
});
/** A plugin hooks file. */
export type PluginHooksFile = z.infer<typeof PluginHooksFileSchema>;

/** `.mcp.json`: `{ mcpServers: { <name>: <server> } }` (a bare map of servers is accepted too). */
export const PluginMcpServerSchema = z.looseObject({
  /** `stdio` (default when `command` is given), `http`; `sse` is not supported. */
  type: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  url: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
/** One MCP server of a plugin, in the `.mcp.json` format. */
export type PluginMcpServer = z.infer<typeof PluginMcpServerSchema>;

/** Replaces `${CLAUDE_PLUGIN_ROOT}` and `${OPENVAALA_PLUGIN_ROOT}` with the plugin's folder. */
export function expandPluginRoot(text: string, directory: string): string {
  let expanded = text;
  for (const variable of PLUGIN_ROOT_VARIABLES) expanded = expanded.replaceAll(`\${${variable}}`, directory);
  return expanded;
}

/** A zod issue path as a key path (`hooks.PreToolUse[0].hooks[1].type`; see `formatKeyPath`). */
export function keyPathOf(path: readonly PropertyKey[]): string {
  return formatKeyPath(path);
}

/**
 * Names under which MCP tools are offered to the model: `mcp__<server>__<tool>`.
 *
 * Model providers accept tool names of at most 64 characters from `[A-Za-z0-9_-]` (OpenAI
 * function names; Anthropic and Gemini are as strict or stricter), while MCP tool names may
 * hold other characters (dots, slashes) and be longer (MCP specification 2025-06-18, Tools:
 * `name` is any string).
 *
 * The name is a pure function of the server's name and the tool's own name, never of the
 * order in which a server lists its tools: approval rules, hooks and recorded history name
 * tools, and must keep naming the same tool after a restart or a changed tool list. The rule
 * (documented in docs/tools.md#mcp-tool-names):
 *
 * 1. every character of the tool's name outside `[A-Za-z0-9_-]` becomes `_`;
 * 2. when step 1 changed the name, or `mcp__<server>__<tool>` is longer than 64 characters,
 *    the name is cut to 55 characters and ends with `_` and the first 8 hex digits of the
 *    SHA-256 of the tool's original name (UTF-8);
 * 3. otherwise the name is `mcp__<server>__<tool>` unchanged.
 */
import { createHash } from 'node:crypto';

/** Longest tool name model providers accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

/** Prefix of every MCP tool name. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** Hex digits of the hash that ends a sanitised or shortened name. */
export const TOOL_NAME_HASH_LENGTH = 8;

/** Characters allowed in tool names; everything else becomes `_`. */
const NOT_ALLOWED = /[^A-Za-z0-9_-]/g;

/** The prefix shared by every tool of one server: `mcp__<server>__`. */
export function serverToolPrefix(server: string): string {
  return `${MCP_TOOL_PREFIX}${server.replace(NOT_ALLOWED, '_')}__`;
}

/**
 * First `TOOL_NAME_HASH_LENGTH` hex digits of the SHA-256 of a tool's original name.
 * @param tool the tool's name as the server lists it
 */
export function toolNameHash(tool: string): string {
  return createHash('sha256').update(tool, 'utf8').digest('hex').slice(0, TOOL_NAME_HASH_LENGTH);
}

/**
 * The model-facing name of one MCP tool (rule in the module comment).
 * @param server the server's name from `mcp.yaml`
 * @param tool the tool's name as the server lists it
 * @returns `mcp__<server>__<tool>` when that is allowed as it is; else the sanitised name, cut
 *   so that the whole is at most 64 characters, ending in `_<8 hex digits>`
 */
export function mcpToolName(server: string, tool: string): string {
  const sanitised = tool.replace(NOT_ALLOWED, '_');
  const plain = `${serverToolPrefix(server)}${sanitised}`;
  if (sanitised === tool && plain.length <= MAX_TOOL_NAME_LENGTH) return plain;
  const suffix = `_${toolNameHash(tool)}`;
  return `${plain.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
}

/**
 * Names every tool of one server, leaving out names that two tools would share (possible only
 * when a tool's own name looks like another's hashed form, or through a hash collision): which
 * tool would get the name would then depend on listing order, so neither gets it.
 * @param server the server's name from `mcp.yaml`
 * @param tools the tools' names as the server lists them
 * @returns model-facing name → original name, and the original names left out
 */
export function nameServerTools(server: string, tools: readonly string[]): { names: Map<string, string>; clashing: string[] } {
  const byName = new Map<string, string[]>();
  for (const tool of new Set(tools)) {
    const name = mcpToolName(server, tool);
    byName.set(name, [...(byName.get(name) ?? []), tool]);
  }
  const names = new Map<string, string>();
  const clashing: string[] = [];
  for (const [name, originals] of byName) {
    if (originals.length === 1 && originals[0] !== undefined) names.set(name, originals[0]);
    else clashing.push(...originals);
  }
  return { names, clashing };
}

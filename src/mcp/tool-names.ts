/**
 * Names under which MCP tools are offered to the model: `mcp__<server>__<tool>`.
 *
 * Model providers accept tool names of at most 64 characters from `[A-Za-z0-9_-]` (OpenAI
 * function names; Anthropic and Gemini are as strict or stricter), while MCP tool names may
 * hold other characters (dots, slashes) and be longer (MCP specification 2025-06-18, Tools:
 * `name` is any string). So each character outside that set becomes `_`, and a name that is
 * too long, or that collides with one given out before, is shortened and ends with a hash of
 * the server and the original tool name, which keeps it unique and stable across restarts.
 */
import { createHash } from 'node:crypto';

/** Longest tool name model providers accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

/** Prefix of every MCP tool name. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** Characters allowed in tool names; everything else becomes `_`. */
const NOT_ALLOWED = /[^A-Za-z0-9_-]/g;

/** The prefix shared by every tool of one server: `mcp__<server>__`. */
export function serverToolPrefix(server: string): string {
  return `${MCP_TOOL_PREFIX}${server.replace(NOT_ALLOWED, '_')}__`;
}

function hashSuffix(server: string, tool: string): string {
  return createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
}

/**
 * The model-facing name of one tool, unique among `taken` (which it is added to).
 * @param server the server's name from `mcp.yaml`
 * @param tool the tool's name as the server lists it
 * @param taken names already given out in the same tool list
 * @returns `mcp__<server>__<tool>` with disallowed characters replaced by `_`, or a shortened
 *   form ending in `_<8 hex digits>` when that is longer than 64 characters or already taken
 */
export function assignToolName(server: string, tool: string, taken: Set<string>): string {
  const plain = `${serverToolPrefix(server)}${tool.replace(NOT_ALLOWED, '_')}`;
  let name = plain;
  if (name.length > MAX_TOOL_NAME_LENGTH || taken.has(name)) {
    const suffix = `_${hashSuffix(server, tool)}`;
    name = `${plain.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
  }
  // Only reachable through a hash collision of two names that were also cut alike.
  const base = name;
  for (let counter = 2; taken.has(name); counter++) name = `${base.slice(0, MAX_TOOL_NAME_LENGTH - String(counter).length - 1)}-${counter}`;
  taken.add(name);
  return name;
}

/**
 * `mcp.yaml` (SPEC §6, §8): the Model Context Protocol servers whose tools agents may use.
 *
 * ```yaml
 * servers:
 *   filesystem:
 *     transport: stdio
 *     command: npx
 *     args: [-y, "@modelcontextprotocol/server-filesystem", /home/me/project]
 *     env: { LOG_LEVEL: warn, API_TOKEN: env:FILESYSTEM_TOKEN }
 *     toolTimeoutMs: 30000
 *   tracker:
 *     transport: http
 *     url: https://mcp.example.org/mcp
 *     headers: { Authorization: env:TRACKER_AUTHORIZATION }
 * ```
 *
 * A missing file means no servers. Values of `env` and `headers` may be `env:NAME`, read from
 * the server's environment when the MCP server is started (an unset variable is reported then,
 * naming the server and the variable).
 */
import path from 'node:path';
import { z } from 'zod';
import { headerProblems } from './web-addresses.js';
import { EVEN_WITH_OTHER_PROBLEMS, isRecord, loadYamlFile, parseYamlFile } from './yaml-file.js';

/** File name of the MCP configuration inside the config directory. */
export const MCP_FILE = 'mcp.yaml';

/** Default time allowed to start a server and list its tools, ms. */
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 10_000;
/** Default time allowed for one tool call, ms. */
export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 60_000;

/**
 * Server names become part of tool names (`mcp__<server>__<tool>`), so they use only characters
 * every model provider accepts in tool names, and never `__`, which separates server and tool.
 */
const SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
/** An environment variable name (POSIX portable names). */
const ENVIRONMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Longest server name: leaves room for the tool's own name within the 64-character limit. */
const MAX_SERVER_NAME_LENGTH = 32;

/** A value written literally or as `env:NAME` (an environment variable of the runtime server). */
const secretValue = z.string().refine((value) => !value.startsWith('env:') || ENVIRONMENT_NAME.test(value.slice(4)), {
  message: 'an env: reference needs a variable name of letters, digits and "_" (env:NAME)',
});

const timeouts = {
  /** Time allowed to start the server and list its tools, ms (default 10000). */
  startupTimeoutMs: z.number().int().min(100).max(600_000).optional(),
  /** Time allowed for one tool call, ms (default 60000). */
  toolTimeoutMs: z.number().int().min(100).max(86_400_000).optional(),
};

/**
 * A server started as a child process speaking MCP over stdin/stdout (MCP specification
 * 2025-06-18, Transports: stdio): `{ transport: stdio, command, args?, env?, cwd?, executor?,
 * enabled?, startupTimeoutMs?, toolTimeoutMs? }`.
 */
export const StdioMcpServerConfigSchema = z.strictObject({
  transport: z.literal('stdio'),
  /** The program (looked up on `PATH` when it has no slash). */
  command: z.string({ error: (issue) => (issue.input === undefined ? 'required: the program that starts the server' : undefined) }).min(1, 'must not be empty'),
  args: z.array(z.string()).optional(),
  /** Extra environment variables; the process otherwise gets only HOME, LOGNAME, PATH, SHELL, TERM and USER. */
  env: z.record(z.string(), secretValue).optional(),
  /** Working directory: absolute, or relative to the conversation's working directory (the default). */
  cwd: z.string().min(1, 'must not be empty').optional(),
  /** Executor that runs the process (default `local`). */
  executor: z.string().min(1, 'must not be empty').optional(),
  /** `false` keeps the entry without starting it. */
  enabled: z.boolean().optional(),
  ...timeouts,
});
/** A stdio server entry. */
export type StdioMcpServerConfig = z.infer<typeof StdioMcpServerConfigSchema>;

/**
 * A server reached over HTTP (MCP specification 2025-06-18, Transports: Streamable HTTP):
 * `{ transport: http, url, headers?, enabled?, startupTimeoutMs?, toolTimeoutMs? }`.
 */
export const HttpMcpServerConfigSchema = z.strictObject({
  transport: z.literal('http'),
  /** The MCP endpoint (`http://` or `https://`). */
  url: z.url({ protocol: /^https?$/, error: (issue) => (issue.input === undefined ? 'required: the server\'s MCP endpoint' : 'expected an http:// or https:// URL') }),
  /** HTTP headers sent with every request (e.g. `Authorization: env:TRACKER_AUTHORIZATION`). */
  headers: z.record(z.string(), secretValue).optional(),
  /** `false` keeps the entry without connecting to it. */
  enabled: z.boolean().optional(),
  ...timeouts,
});
/** An HTTP server entry. */
export type HttpMcpServerConfig = z.infer<typeof HttpMcpServerConfigSchema>;

/** One server entry, told apart by `transport`. */
export const McpServerConfigSchema = z.discriminatedUnion('transport', [StdioMcpServerConfigSchema, HttpMcpServerConfigSchema], {
  error: (issue) => (issue.code === 'invalid_union' ? 'expected transport: stdio or transport: http' : undefined),
});
/** One server entry. */
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** The whole `mcp.yaml`: `{ servers: { <name>: <server> } }`. */
export const McpFileSchema = z
  .strictObject({
    servers: z.record(z.string(), McpServerConfigSchema).default({}),
  })
  .superRefine((file: unknown, context) => {
    if (!isRecord(file) || !isRecord(file.servers)) return;
    // Checked here rather than on the record's keys, whose failures zod reports without our message.
    for (const [name, server] of Object.entries(file.servers)) {
      if (!SERVER_NAME.test(name)) {
        context.addIssue({ code: 'custom', path: ['servers', name], message: 'server names use letters, digits, "-" and single "_" ("__" separates server and tool in tool names)' });
      } else if (name.length > MAX_SERVER_NAME_LENGTH) {
        context.addIssue({ code: 'custom', path: ['servers', name], message: `server names are at most ${MAX_SERVER_NAME_LENGTH} characters (tool names are limited to 64)` });
      }
      if (!isRecord(server)) continue;
      if (server.transport !== 'stdio') {
        for (const problem of headerProblems(server.headers, ['servers', name, 'headers'])) context.addIssue({ code: 'custom', ...problem });
        continue;
      }
      const variables = isRecord(server.env) ? Object.keys(server.env) : [];
      for (const variable of variables) {
        if (!ENVIRONMENT_NAME.test(variable)) context.addIssue({ code: 'custom', path: ['servers', name, 'env', variable], message: 'environment variable names use letters, digits and "_" and do not start with a digit' });
      }
    }
  }, EVEN_WITH_OTHER_PROBLEMS);
/** The whole `mcp.yaml`. */
export type McpFile = z.infer<typeof McpFileSchema>;

/**
 * Parses `mcp.yaml` text.
 * @param file the file's path, used in error messages
 * @throws ConfigError naming the file, line and key path of every problem
 */
export function parseMcpFile(file: string, text: string): McpFile {
  return parseYamlFile(file, text, McpFileSchema);
}

/**
 * Loads `mcp.yaml` from a config directory; a missing file means no servers.
 * @throws ConfigError naming the file, line and key path of every problem
 */
export async function loadMcpFile(configDir: string): Promise<McpFile> {
  return loadYamlFile(path.join(configDir, MCP_FILE), McpFileSchema, () => ({ servers: {} }));
}

/**
 * Builds the MCP SDK transport for one configured server (MCP specification 2025-06-18,
 * Transports): for `stdio`, a process started by the entry's executor (a child process of the
 * runtime server for the plain local executor, an SSH exec channel on an `ssh` executor's
 * host, bubblewrap for a sandboxed local executor); Streamable HTTP for `http`, connected
 * from the runtime server. Everything that can be wrong before the first byte is sent (an unknown executor, an
 * unset `env:` variable, a missing working directory) is reported here, naming the server.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { guardedFetch, type RequestAddressCheck } from './guarded-fetch.js';
import { PipedProcessTransport } from './process-transport.js';
import { loadMcpSdk, type McpSdk } from './sdk.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { HttpMcpServerConfig, McpServerConfig, StdioMcpServerConfig } from '../config/mcp.js';
import { resolveSecret } from '../config/providers.js';
import type { Executor, ProcessExit } from '../executors/executor.js';

/** Where a conversation's MCP servers are started from. */
export interface McpServerPlacement {
  /** The conversation's working directory (absolute, on its executor). */
  workDirectory: string;
  /** Name of the conversation's executor. */
  workExecutor: string;
  /** The configured executor of a name, or undefined when there is none. */
  findExecutor(name: string): Executor | undefined;
  /** Environment `env:NAME` references are read from (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /**
   * The check each request of the named HTTP server must pass before it is sent (its redirects
   * are then not followed), or undefined for none (servers of `mcp.yaml`).
   */
  httpAddressCheck?: (serverName: string) => RequestAddressCheck | undefined;
}

/** A transport ready to connect, and what it knows about a failure. */
export interface PreparedTransport {
  transport: Transport;
  /** The last lines the server wrote to stderr (stdio only; empty otherwise). */
  stderrTail(): string;
  /**
   * Kills a stdio server's process at once (SIGKILL) if it is still running as this process's
   * child. For a server that failed to start: the SDK's own close gives it seconds to exit by
   * itself, which a server ignoring its stdin outlives when the caller exits first.
   */
  stopNow(): void;
  /** How a stdio server's process ended, once it has (undefined for HTTP or while it runs). */
  exit(): ProcessExit | undefined;
}

/** The executor stdio servers run on unless their entry names another. */
const DEFAULT_EXECUTOR_NAME = 'local';

/** Bytes of a stdio server's stderr kept to explain why it failed. */
const STDERR_TAIL_BYTES = 2_000;

/**
 * Creates the transport of one server.
 * @param serverName the server's name (its key in `mcp.yaml` or `mcpServers`)
 * @throws Error naming the problem (unknown executor, an executor kind that cannot host a
 *   stdio server, unset environment variable, missing working directory)
 */
export async function prepareTransport(config: McpServerConfig, placement: McpServerPlacement, serverName: string): Promise<PreparedTransport> {
  const sdk = await loadMcpSdk();
  return config.transport === 'stdio' ? prepareStdio(config, placement, sdk) : prepareHttp(config, placement, serverName, sdk);
}

function resolveValues(values: Record<string, string> | undefined, field: string, environment: NodeJS.ProcessEnv | undefined): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [key, value] of Object.entries(values ?? {})) resolved[key] = resolveSecret(value, `${field}.${key}`, environment) ?? '';
  return resolved;
}

async function prepareStdio(config: StdioMcpServerConfig, placement: McpServerPlacement, sdk: McpSdk): Promise<PreparedTransport> {
  const executorName = config.executor ?? DEFAULT_EXECUTOR_NAME;
  const executor = placement.findExecutor(executorName);
  if (executor === undefined) throw new Error(`executor "${executorName}" is not configured`);
  return prepareOnExecutor(config, placement, executor, executorName, sdk);
}

/**
 * A stdio server started by its executor (`spawnPiped`): a child process on this machine (in
 * bubblewrap for a sandboxed local executor), or over an SSH exec channel on the remote host.
 * The executor records the process like its commands, so a server that dies with the runtime
 * server is found and stopped by the next start.
 */
async function prepareOnExecutor(config: StdioMcpServerConfig, placement: McpServerPlacement, executor: Executor, executorName: string, sdk: McpSdk): Promise<PreparedTransport> {
  const spawnPiped = executor.spawnPiped?.bind(executor);
  if (spawnPiped === undefined) {
    throw new Error(`stdio MCP servers cannot run on executor "${executorName}" (kind ${executor.kind}): it cannot start a process with open pipes`);
  }
  const sameMachine = placement.workExecutor === executorName;
  let cwd: string | undefined;
  if (config.cwd !== undefined) {
    if (!path.posix.isAbsolute(config.cwd) && !sameMachine) {
      throw new Error(`cwd "${config.cwd}" is relative, but the conversation works on executor "${placement.workExecutor}", not "${executorName}": give an absolute cwd`);
    }
    cwd = path.posix.resolve(placement.workDirectory, config.cwd);
  } else if (sameMachine) {
    cwd = placement.workDirectory;
  }
  const isSandboxed = executor.kind === 'local' && (executor as { sandbox?: unknown }).sandbox !== undefined;
  // Spawning in a missing directory fails with ENOENT, which would wrongly blame the command.
  if (executor.kind === 'local' && !isSandboxed && cwd !== undefined && !(await stat(cwd).catch(() => undefined))?.isDirectory()) {
    throw new Error(`working directory ${cwd} does not exist`);
  }
  if (isSandboxed && cwd === undefined) {
    throw new Error(`the server runs in the sandbox of executor "${executorName}", which needs a workspace: give an absolute cwd, or use it from a conversation working on that executor`);
  }
  let stderr = '';
  const transport = new PipedProcessTransport(
    spawnPiped,
    {
      command: config.command,
      args: config.args ?? [],
      env: resolveValues(config.env, 'env', placement.environment),
      ...(cwd !== undefined ? { cwd } : {}),
      ...(isSandboxed ? { workspaceRoot: sameMachine ? placement.workDirectory : (cwd as string) } : {}),
    },
    sdk.types,
    (chunk) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    },
  );
  return { transport, stderrTail: () => stderr.trim(), stopNow: () => transport.stopNow(), exit: () => transport.exit };
}

function prepareHttp(config: HttpMcpServerConfig, placement: McpServerPlacement, serverName: string, { StreamableHTTPClientTransport }: McpSdk): PreparedTransport {
  const headers = resolveValues(config.headers, 'headers', placement.environment);
  const check = placement.httpAddressCheck?.(serverName);
  const transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers }, ...(check ? { fetch: guardedFetch(check) } : {}) });
  return { transport, stderrTail: () => '', stopNow: () => undefined, exit: () => undefined };
}

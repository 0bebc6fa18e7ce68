import { pathToFileURL } from 'node:url';
import { conciseFailureText } from './failure-text.js';
/**
 * One conversation's connection to one MCP server (MCP specification 2025-06-18: lifecycle
 * `initialize`, `tools/list` with pagination, `notifications/tools/list_changed`,
 * `tools/call`). It starts the server when asked, keeps the server's current tool list, and
 * notices when the server goes away so the next use starts it again.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { isMcpError, loadMcpSdk } from './sdk.js';
import { DEFAULT_MCP_STARTUP_TIMEOUT_MS, DEFAULT_MCP_TOOL_TIMEOUT_MS, type McpServerConfig } from '../config/mcp.js';
import type { ProcessExit } from '../executors/executor.js';
import type { Logger } from '../logger.js';
import { VERSION } from '../package-info.js';
import type { ToolResult } from '../tools/tool.js';
import { toToolResult } from './tool-result.js';
import { prepareTransport, type McpServerPlacement } from './transports.js';

/**
 * Where a connection stands:
 * - `stopped`: never started;
 * - `starting`: connecting and listing tools;
 * - `running`: connected, tools listed;
 * - `exited`: was running and went away (started again on next use);
 * - `failed`: the last start failed (tried again at the start of the next turn);
 * - `closed`: the conversation was shut down.
 */
export type McpServerState = 'stopped' | 'starting' | 'running' | 'exited' | 'failed' | 'closed';

/** What a connection needs besides its configuration. */
export interface McpConnectionOptions {
  placement: McpServerPlacement;
  logger?: Logger;
  /** Called whenever the server's tool list changed (listed after a start or a `list_changed`). */
  onToolsChanged(): void;
  /** For a server whose entry is only known when it starts (a built-in server): gives the entry at each start. */
  resolveConfig?(): Promise<McpServerConfig>;
  /** Called before each tool call; a rejection fails the call with its message. */
  beforeCall?(): Promise<void>;
  /** Called after each tool call. */
  afterCall?(): void;
}

/** Lists every page of `tools/list`. */
async function listAllTools(client: Client, options: { signal?: AbortSignal; timeout: number }): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor !== undefined ? { cursor } : undefined, options);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** An error's message with its cause's (`fetch failed` alone does not say that the connection was refused), on one line (see `conciseFailureText`). */
function errorText(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  const cause = (error as { cause?: { message?: string } })?.cause?.message;
  return conciseFailureText(cause && !message.includes(cause) ? `${message} (${cause})` : message);
}

/**
 * Exit statuses a POSIX shell gives a command it could not run (POSIX.1-2017, Shell Command
 * Language 2.8.2): stdio servers are started through a shell on every executor, so a missing or
 * non-executable command shows as one of these rather than as a spawn error.
 */
const SHELL_COMMAND_NOT_FOUND = 127;
const SHELL_COMMAND_NOT_EXECUTABLE = 126;

/** Describes why a start failed, in words a person (and the model) can act on. */
function describeStartFailure(error: unknown, command: string | undefined, timeoutMs: number, stderr: string, exit: ProcessExit | undefined): string {
  const failure = error as NodeJS.ErrnoException;
  const closed = isMcpError(failure, 'ConnectionClosed');
  // The shell's own message only repeats the command's name: the reason says it better.
  if (closed && command !== undefined && exit?.exitCode === SHELL_COMMAND_NOT_FOUND) return `command "${command}" was not found`;
  if (closed && command !== undefined && exit?.exitCode === SHELL_COMMAND_NOT_EXECUTABLE) return `command "${command}" is not executable`;
  let reason: string;
  if (failure.code === 'ENOENT' && command !== undefined) reason = `command "${command}" was not found`;
  else if (failure.code === 'EACCES' && command !== undefined) reason = `command "${command}" is not executable`;
  else if (closed && exit?.unknownExitReason !== undefined) reason = `the server exited before completing the MCP handshake (exit status unknown: ${exit.unknownExitReason})`;
  else if (closed) reason = 'the server exited before completing the MCP handshake';
  else if (isMcpError(failure, 'RequestTimeout')) reason = `no answer within ${timeoutMs} ms (startupTimeoutMs)`;
  else if (failure?.name === 'TimeoutError' || failure?.name === 'AbortError') reason = `no answer within ${timeoutMs} ms (startupTimeoutMs)`;
  else reason = errorText(error);
  return stderr ? `${reason}; its stderr ended with: ${stderr}` : reason;
}

/** A lazily started MCP client for one configured server. */
export class McpServerConnection {
  private currentState: McpServerState = 'stopped';
  private client: Client | undefined;
  private startup: Promise<void> | undefined;
  private refreshing: Promise<void> = Promise.resolve();
  private toolList: McpTool[] = [];
  private problem: string | undefined;
  private readonly startupTimeoutMs: number;
  private readonly toolTimeoutMs: number;

  /**
   * @param name the server's name from `mcp.yaml`
   * @param config its entry
   */
  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {
    this.startupTimeoutMs = config.startupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS;
    this.toolTimeoutMs = config.toolTimeoutMs ?? DEFAULT_MCP_TOOL_TIMEOUT_MS;
  }

  /** Where the connection stands. */
  get state(): McpServerState {
    return this.currentState;
  }

  /** The tools the server listed last (kept after it exits, so calls can start it again). */
  get tools(): readonly McpTool[] {
    return this.toolList;
  }

  /** Why the server is not running (`failed`, `exited`), or undefined. */
  get failure(): string | undefined {
    return this.problem;
  }

  /**
   * Starts the server unless it is running, starting or closed: connects, initializes and
   * lists its tools, all within `startupTimeoutMs`. Never rejects: a failure leaves the state
   * `failed` with the reason in `failure`, and is logged.
   */
  start(): Promise<void> {
    if (this.currentState === 'running' || this.currentState === 'closed') return Promise.resolve();
    this.startup ??= this.connect().finally(() => {
      this.startup = undefined;
    });
    return this.startup;
  }

  private async connect(): Promise<void> {
    this.currentState = 'starting';
    const { Client, types } = await loadMcpSdk();
    const { ListRootsRequestSchema, ToolListChangedNotificationSchema } = types;
    // Roots (MCP "roots"): the conversation's working directory is the one root a server may use.
    const client = new Client({ name: 'openvaala', version: VERSION }, { capabilities: { roots: { listChanged: false } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(this.options.placement.workDirectory).href, name: 'workspace' }] }));
    let command = this.config.transport === 'stdio' ? this.config.command : undefined;
    let stderrTail = () => '';
    let stopNow = () => undefined as void;
    let exit = (): ProcessExit | undefined => undefined;
    try {
      const config = this.options.resolveConfig ? await this.options.resolveConfig() : this.config;
      command = config.transport === 'stdio' ? config.command : undefined;
      const prepared = await prepareTransport(config, this.options.placement, this.name);
      stderrTail = prepared.stderrTail;
      stopNow = prepared.stopNow;
      exit = prepared.exit;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refreshTools(client));
      client.onclose = () => this.lost(client, stderrTail);
      const signal = AbortSignal.timeout(this.startupTimeoutMs);
      await client.connect(prepared.transport, { signal, timeout: this.startupTimeoutMs });
      const tools = await listAllTools(client, { signal, timeout: this.startupTimeoutMs });
      // Read through the getter: the conversation may have been shut down while this awaited.
      if (this.state === 'closed') {
        await client.close();
        return;
      }
      this.client = client;
      this.toolList = tools;
      this.problem = undefined;
      this.currentState = 'running';
      this.options.logger?.info({ mcpServer: this.name, tools: tools.length }, 'MCP server started');
      this.options.onToolsChanged();
    } catch (error) {
      client.onclose = undefined;
      // A server that failed to start gets no grace period: it is killed, not asked to exit.
      stopNow();
      await client.close().catch(() => undefined);
      // stderr arrives through a stream that may still hold the last chunks: let it drain.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.state === 'closed') return;
      this.problem = describeStartFailure(error, command, this.startupTimeoutMs, stderrTail(), exit());
      this.currentState = 'failed';
      this.options.logger?.warn({ mcpServer: this.name, problem: this.problem }, 'MCP server could not be started');
    }
  }

  /** The server went away (process exit, HTTP session closed): remember why; the next use starts it again. */
  private lost(client: Client, stderrTail: () => string): void {
    if (this.client !== client || this.currentState !== 'running') return;
    this.client = undefined;
    this.currentState = 'exited';
    const stderr = stderrTail();
    this.problem = `the server stopped${stderr ? `; its stderr ended with: ${stderr}` : ''}`;
    this.options.logger?.warn({ mcpServer: this.name, problem: this.problem }, 'MCP server stopped');
  }

  /**
   * Lists the tools again after `notifications/tools/list_changed`. Refreshes run one after
   * another, so the last notification's list wins.
   */
  private refreshTools(client: Client): void {
    this.refreshing = this.refreshing.then(async () => {
      if (this.client !== client) return;
      try {
        const tools = await listAllTools(client, { timeout: this.startupTimeoutMs });
        if (this.client !== client) return;
        this.toolList = tools;
        this.options.onToolsChanged();
      } catch (error) {
        this.options.logger?.warn({ mcpServer: this.name, error: (error as Error).message }, 'MCP tool list could not be refreshed');
      }
    });
  }

  /**
   * Makes sure the server runs for a tool call: starts it when it never ran or went away; a
   * server whose last start failed is not tried again before the next turn.
   * @throws Error naming the server and the reason when it is not running
   */
  async ensureRunning(): Promise<Client> {
    if (this.currentState === 'stopped' || this.currentState === 'exited' || this.currentState === 'starting') await this.start();
    if (this.currentState === 'closed') throw new Error(`MCP server "${this.name}" is closed: the conversation was shut down`);
    if (this.currentState !== 'running' || this.client === undefined) {
      throw new Error(`MCP server "${this.name}" is not available: ${this.problem ?? 'not started'} (it is tried again at the start of the next turn)`);
    }
    return this.client;
  }

  /**
   * Calls a tool (`tools/call`) with the turn's abort signal and `toolTimeoutMs`. When the
   * call made the server change its tool list, the new list is in place when this resolves,
   * so the next model request already offers it.
   * @param toolName the tool's name as the server lists it
   * @throws Error naming the server and the reason when it is unavailable, stops during the
   *   call, does not answer in time, or answers with a protocol error
   */
  async call(toolName: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    if (this.options.beforeCall) {
      await this.options.beforeCall().catch((error: unknown) => {
        throw new Error(`MCP server "${this.name}": ${errorText(error)}`, { cause: error });
      });
    }
    const client = await this.ensureRunning();
    try {
      const result = await client.callTool({ name: toolName, arguments: args }, undefined, { signal, timeout: this.toolTimeoutMs });
      await this.refreshing;
      return { ...toToolResult(result), details: { kind: 'mcp', server: this.name, tool: toolName, result } };
    } catch (error) {
      if (signal.aborted) throw new Error(`the call to MCP server "${this.name}" was cancelled (${(signal.reason as Error)?.message ?? 'turn interrupted'})`, { cause: error });
      if (isMcpError(error, 'RequestTimeout')) {
        throw new Error(`MCP server "${this.name}" did not answer within ${this.toolTimeoutMs} ms (toolTimeoutMs)`, { cause: error });
      }
      if (isMcpError(error, 'ConnectionClosed')) {
        throw new Error(`MCP server "${this.name}" stopped during the call: ${this.problem ?? 'connection closed'} (it is started again on next use)`, { cause: error });
      }
      if (!isMcpError(error) && this.client === client) {
        // A transport failure (HTTP request refused, pipe broken) rather than an answer: the
        // session may be gone, so connect again on next use.
        this.client = undefined;
        this.currentState = 'exited';
        this.problem = errorText(error);
        this.options.logger?.warn({ mcpServer: this.name, problem: this.problem }, 'MCP server connection lost');
        void client.close().catch(() => undefined);
        throw new Error(`MCP server "${this.name}" could not be reached: ${this.problem} (it is connected again on next use)`, { cause: error });
      }
      throw new Error(`MCP server "${this.name}": ${errorText(error)}`, { cause: error });
    } finally {
      this.options.afterCall?.();
    }
  }

  /**
   * Stops the running server (its process is stopped as at shutdown) without closing the
   * connection: the next use starts it again. Used when a built-in server's entry changed
   * (the agent's browser moved to another port).
   * @param reason why, kept as the connection's failure until the next start
   */
  disconnect(reason: string): void {
    const client = this.client;
    if (client === undefined || this.currentState !== 'running') return;
    this.client = undefined;
    this.currentState = 'exited';
    this.problem = reason;
    this.options.logger?.info({ mcpServer: this.name, reason }, 'MCP server stopped');
    void client.close().catch(() => undefined);
  }

  /** Disconnects and stops the server process; the connection cannot be used afterwards. */
  async close(): Promise<void> {
    this.currentState = 'closed';
    const client = this.client;
    this.client = undefined;
    await this.startup;
    await client?.close().catch(() => undefined);
  }
}

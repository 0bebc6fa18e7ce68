/**
 * The MCP servers of one conversation (SPEC §6 "MCP tools"): one client per enabled server of
 * `mcp.yaml`, started on the conversation's first turn, whose tools are offered to the model
 * as `mcp__<server>__<tool>` next to the environment tools. A server that fails to start is
 * tried again at the start of the next turn; one that goes away is started again on next use;
 * all are stopped when the conversation is shut down.
 */
import { z } from 'zod';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpFile, McpServerConfig } from '../config/mcp.js';
import type { Logger } from '../logger.js';
import { defineTool, type Tool } from '../tools/tool.js';
import { McpArgumentCheck } from './argument-check.js';
import { McpServerConnection } from './server-connection.js';
import { nameServerTools, serverToolPrefix } from './tool-names.js';
import type { McpServerPlacement } from './transports.js';

/** The MCP part of the runtime's configuration. */
export interface McpSettings {
  /** The servers of `mcp.yaml`, by name. */
  servers: McpFile['servers'];
  /** Where start failures and lost servers are logged. */
  logger?: Logger;
}

/**
 * An MCP server the runtime server itself provides to a conversation (the agent's browser),
 * rather than one of `mcp.yaml`: a stdio server whose entry is only known when it starts.
 */
export interface BuiltInMcpServer {
  /** The server's name (tools `mcp__<name>__<tool>`). */
  name: string;
  /** Brings up what the server needs and returns its entry; called at each start. @throws Error naming the reason it cannot start */
  resolveConfig(): Promise<McpServerConfig>;
  /** Called before each tool call (e.g. to start what the server needs). @throws Error that fails the call, naming the reason */
  beforeCall?(): Promise<void>;
  /** Called after each tool call. */
  afterCall?(): void;
  /** Registers a callback run when the running server must be restarted (its entry changed); returns the unsubscribe function. */
  onRestartNeeded?(listener: () => void): () => void;
}

/**
 * Arguments of an MCP tool as zod sees them: any JSON object. The server's own schema is
 * JSON Schema, which zod cannot check; `McpArgumentCheck` does, when the tool is called.
 */
const anyArguments = (): z.ZodType<Record<string, unknown>> => z.looseObject({});

/**
 * The argument schema of one MCP tool: accepts any object (the tool's `inputSchema` is checked
 * by `McpArgumentCheck`), and carries the server's JSON Schema as metadata, which zod's JSON
 * Schema export merges into its output, so the model sees the server's schema unchanged.
 */
function argumentsSchema(inputSchema: McpTool['inputSchema']): z.ZodType<Record<string, unknown>> {
  // `$schema` names the dialect of the whole document and `$id`/`id` would register the schema
  // globally under that id; neither belongs in a schema embedded in a tool list.
  const { $schema: _dialect, $id: _identifier, id: _legacyIdentifier, ...schema } = inputSchema as Record<string, unknown>;
  return anyArguments().meta({ ...schema, type: 'object' });
}

/** Tools that must be called as MCP tasks (`execution.taskSupport: required`) cannot be called by this client. */
function callable(tool: McpTool): boolean {
  return (tool as { execution?: { taskSupport?: string } }).execution?.taskSupport !== 'required';
}

/** The MCP clients of one conversation. */
export class McpClientManager {
  private readonly connections: McpServerConnection[] = [];
  private version = 0;
  private built: { version: number; tools: Tool[] } | undefined;
  private readonly combined = new WeakMap<Tool[], { version: number; tools: Tool[] }>();
  private readonly logger: Logger | undefined;
  private readonly argumentCheck: McpArgumentCheck;
  private readonly unsubscribers: (() => void)[] = [];

  /**
   * Creates the connections (nothing starts until `prepare` or a tool call).
   * @param settings the configured servers (disabled ones are left out); undefined = none
   * @param placement the conversation's work location and the executors, for stdio servers
   * @param builtIn servers the runtime server provides (after those of `mcp.yaml`; a name
   *   `mcp.yaml` already uses is left to `mcp.yaml`)
   */
  constructor(
    settings: McpSettings | undefined,
    placement: McpServerPlacement,
    builtIn: readonly BuiltInMcpServer[] = [],
  ) {
    this.logger = settings?.logger;
    this.argumentCheck = new McpArgumentCheck(settings?.logger);
    for (const [name, config] of Object.entries(settings?.servers ?? {})) {
      if (config.enabled === false) continue;
      this.connections.push(
        new McpServerConnection(name, config, {
          placement,
          ...(settings?.logger ? { logger: settings.logger } : {}),
          onToolsChanged: () => this.version++,
        }),
      );
    }
    for (const server of builtIn) {
      if (settings?.servers[server.name] !== undefined) continue;
      // The entry given here only carries the timeouts; the real one comes from resolveConfig.
      const connection = new McpServerConnection(server.name, { transport: 'stdio', command: server.name }, {
        placement,
        ...(settings?.logger ? { logger: settings.logger } : {}),
        onToolsChanged: () => this.version++,
        resolveConfig: () => server.resolveConfig(),
        ...(server.beforeCall ? { beforeCall: () => server.beforeCall?.() ?? Promise.resolve() } : {}),
        ...(server.afterCall ? { afterCall: () => server.afterCall?.() } : {}),
      });
      this.connections.push(connection);
      const unsubscribe = server.onRestartNeeded?.(() => connection.disconnect('its configuration changed'));
      if (unsubscribe) this.unsubscribers.push(unsubscribe);
    }
  }

  /** The connections, in `mcp.yaml` order. */
  get servers(): readonly McpServerConnection[] {
    return this.connections;
  }

  /**
   * Starts every server that is not running (never started, gone away, or failed before), all
   * at once, each within its `startupTimeoutMs`. Called at the start of each turn; never
   * rejects (failures are kept per server and logged).
   * @param signal stops waiting (the starts go on) when the turn is interrupted
   */
  async prepare(signal?: AbortSignal): Promise<void> {
    const starts = Promise.all(this.connections.map((connection) => connection.start()));
    if (signal === undefined) return void (await starts);
    await new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      if (signal.aborted) done();
      starts.then(done, done);
    });
  }

  /** The MCP tools of every server, in `mcp.yaml` order; the same array while no list changed. */
  tools(): Tool[] {
    if (this.built?.version === this.version) return this.built.tools;
    const tools: Tool[] = [];
    for (const connection of this.connections) {
      const offered = connection.tools.filter(callable);
      const { names, clashing } = nameServerTools(connection.name, offered.map((tool) => tool.name));
      if (clashing.length > 0) this.logger?.warn({ mcpServer: connection.name, tools: clashing }, 'MCP tools left out: their model-facing names would be the same');
      const originals = new Map(offered.map((tool) => [tool.name, tool]));
      for (const [name, original] of names) {
        const tool = originals.get(original);
        if (tool === undefined) continue;
        tools.push(
          defineTool({
            name,
            description: tool.description ?? tool.title ?? `Tool "${tool.name}" of MCP server "${connection.name}".`,
            parameters: argumentsSchema(tool.inputSchema),
            execute: async (args, context) => {
              // Refused before the server sees them: many servers would run on whatever came.
              const problems = await this.argumentCheck.problems(connection.name, tool, args);
              if (problems.length > 0) return { output: problems.map((problem) => `${name}: ${problem}`).join('\n'), isError: true };
              return connection.call(tool.name, args, context.signal);
            },
            describe: async () => ({ kind: 'mcp', server: connection.name, tool: tool.name }),
            declaredDetails: { kind: 'mcp' },
          }),
        );
      }
    }
    this.built = { version: this.version, tools };
    return tools;
  }

  /**
   * `base` followed by the MCP tools; the same array while neither changes, so callers can
   * tell by identity whether the tool set changed.
   */
  withTools(base: Tool[]): Tool[] {
    const mcpTools = this.tools();
    if (mcpTools.length === 0) return base;
    const cached = this.combined.get(base);
    if (cached?.version === this.version) return cached.tools;
    const tools = [...base, ...mcpTools];
    this.combined.set(base, { version: this.version, tools });
    return tools;
  }

  /**
   * A stand-in for a tool name that is not in the current list but belongs to a server that is
   * not running (`mcp__<server>__…`): calling it starts the server when it may be started, and
   * otherwise fails naming the server and the reason, so the model learns why.
   * @returns undefined when the name belongs to no such server
   */
  resolveTool(name: string): Tool | undefined {
    const connection = this.connections.find((candidate) => candidate.state !== 'running' && name.startsWith(serverToolPrefix(candidate.name)));
    if (connection === undefined) return undefined;
    return defineTool({
      name,
      description: `A tool of MCP server "${connection.name}", which is not running.`,
      parameters: anyArguments(),
      declaredDetails: { kind: 'mcp' },
      execute: async (args, context) => {
        await connection.ensureRunning();
        const tool = this.tools().find((candidate) => candidate.name === name);
        if (tool === undefined) {
          const own = this.tools().filter((candidate) => candidate.name.startsWith(serverToolPrefix(connection.name)));
          throw new Error(`MCP server "${connection.name}" has no tool "${name}" (its tools: ${own.map((candidate) => candidate.name).join(', ') || 'none'})`);
        }
        return tool.invoke(args, context);
      },
    });
  }

  /** Stops every server and disconnects; used when the conversation is shut down. */
  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    await Promise.all(this.connections.map((connection) => connection.close()));
  }
}

/**
 * A conversation's MCP clients (docs/mcp.md): the servers of `mcp.yaml`, the conversation's
 * own (`conversation/create` `mcpServers`, under the address check the server sets for them)
 * and the built-in ones, made for its first workspace. A reload of `mcp.yaml` replaces the
 * clients at the next turn that can: when no other session of the conversation is running.
 */
import type { Workspace } from '../executors/workspace.js';
import type { RequestAddressCheck } from '../mcp/guarded-fetch.js';
import { McpClientManager, type BuiltInMcpServer, type McpSettings } from '../mcp/client-manager.js';
import type { Executor } from '../executors/executor.js';
import type { Logger } from '../logger.js';

/** What the clients are made from, read again at each turn (a reload changes `settings`). */
export interface ConversationMcpSource {
  /** The servers of `mcp.yaml` and their logger, as configured now; undefined = none. */
  settings(): McpSettings | undefined;
  /** The conversation's own servers, by name; undefined = none. */
  ownServers(): McpSettings['servers'] | undefined;
  /** The check each request of the conversation's own HTTP servers must pass; undefined = none. */
  ownAddressCheck(): RequestAddressCheck | undefined;
  /** The servers the runtime server provides for a workspace (the agent's browser). */
  builtInServers(workspace: Workspace): BuiltInMcpServer[];
  /** The workspace servers are placed in (the conversation's first). */
  workspace(): Workspace;
  /** The configured executor of a name. */
  findExecutor(name: string): Executor | undefined;
  /** Where a failure to close old clients is told. */
  logger: Logger | undefined;
  /** The conversation's id, for the log. */
  conversationId: string;
}

/** The MCP clients of one conversation, remade when the configuration they came from changes. */
export class ConversationMcp {
  private clients: McpClientManager;
  /** The server list the clients were made from, to tell when a reload changed it. */
  private madeFrom: McpSettings['servers'] | undefined;

  constructor(private readonly source: ConversationMcpSource) {
    this.madeFrom = source.settings()?.servers;
    this.clients = this.create();
  }

  private create(): McpClientManager {
    const workspace = this.source.workspace();
    const configured = this.source.settings();
    // The conversation's own servers join those of mcp.yaml.
    const own = this.source.ownServers();
    const settings = own ? { ...configured, servers: { ...configured?.servers, ...own } } : configured;
    const check = own ? this.source.ownAddressCheck() : undefined;
    return new McpClientManager(
      settings,
      {
        workDirectory: workspace.root,
        workExecutor: workspace.executor.name,
        findExecutor: (name) => this.source.findExecutor(name),
        ...(check ? { httpAddressCheck: (name: string) => (own?.[name] ? check : undefined) } : {}),
      },
      this.source.builtInServers(workspace),
    );
  }

  /** The clients made last. */
  get current(): McpClientManager {
    return this.clients;
  }

  /**
   * The clients for a turn that is starting: when a reload changed the servers since the
   * clients were made and `othersRunning` is false, the old clients are stopped (in the
   * background) and new ones made from the configuration in force.
   */
  forTurn(othersRunning: boolean): McpClientManager {
    const servers = this.source.settings()?.servers;
    if (servers !== this.madeFrom && !othersRunning) {
      const old = this.clients;
      this.madeFrom = servers;
      this.clients = this.create();
      old.close().catch((error: unknown) => this.source.logger?.warn({ conversationId: this.source.conversationId, error: (error as Error).message }, 'closing the previous MCP clients failed'));
    }
    return this.clients;
  }

  /** Stops every server of the clients in use. */
  close(): Promise<void> {
    return this.clients.close();
  }
}

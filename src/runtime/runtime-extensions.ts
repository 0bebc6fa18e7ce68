/**
 * What the runtime server plugs into the runtime beyond its configuration: built-in MCP servers
 * (the agent's browser), cluster ownership, observers of every published event (notifications),
 * a check before each new turn (cost thresholds), a check of the agent of each subagent the
 * model starts (a project's sandbox), and work after each turn (the cost ledger) or
 * after a conversation's deletion (its scheduled tasks). Each is set by the part of the server
 * that owns it (src/server); the runtime only calls them.
 */
import type { BuiltInMcpServer } from '../mcp/client-manager.js';
import type { RequestAddressCheck } from '../mcp/guarded-fetch.js';
import type { Workspace } from '../executors/workspace.js';
import type { AnyNotification, Turn } from '../protocol/index.js';
import type { LiveConversation } from './conversation.js';

/** Ownership of conversations among the servers of a cluster (docs/deployment.md). */
export interface ConversationClaims {
  /** Takes the conversation when no live server owns it; true when this server owns it. */
  claim(conversationId: string): Promise<boolean>;
  /** Gives up a conversation claimed for nothing (it does not exist). */
  relinquish(conversationId: string): Promise<void>;
}

/** The runtime's extension points; all empty (no effect) until the server sets them. */
export class RuntimeExtensions {
  /**
   * MCP servers the runtime server provides to a conversation besides those of `mcp.yaml`
   * (the agent's browser), by the conversation's first workspace; absent = none. Read when a
   * conversation makes its MCP clients.
   */
  builtInMcpServers: ((workspace: Workspace) => BuiltInMcpServer[]) | undefined = undefined;
  /**
   * Several servers on one PostgreSQL schema (docs/deployment.md): a conversation is opened or
   * created only once this server owns it. Absent: this server is the only one.
   */
  ownership: ConversationClaims | undefined = undefined;
  /**
   * Work done after a conversation is deleted (e.g. deleting its scheduled tasks), in order;
   * a failing one is logged and the others still run.
   */
  readonly conversationDeletionHooks: ((conversationId: string) => Promise<void>)[] = [];
  /**
   * Told, synchronously and in order, every event any open conversation publishes (e.g. the
   * server's notifications). Unlike subscribers they keep no conversation open. One that throws
   * is logged and the others still run; it must not block (start async work and return).
   */
  readonly eventObservers: ((conversation: LiveConversation, event: AnyNotification) => void)[] = [];
  /**
   * Asked before an input starts or queues a new turn (not for steering a running turn); it
   * refuses by throwing (e.g. a project over its pausing cost threshold). Absent: never refused.
   */
  newTurnCheck: ((conversation: LiveConversation) => Promise<void>) | undefined = undefined;
  /**
   * The check every request of a conversation's own HTTP MCP servers (`conversation/create`
   * `mcpServers`, not those of `mcp.yaml`) must pass before it is sent, by conversation (e.g.
   * none reaching the server's machine from a project's conversation); undefined = none.
   * Read when a conversation makes its MCP clients.
   */
  ownMcpAddressCheck: ((conversation: LiveConversation) => RequestAddressCheck | undefined) | undefined = undefined;
  /**
   * Asked before a subagent the model starts (`spawn_agent`) is created with `agent`: why that
   * agent may not run in this conversation (e.g. an external agent, which would run outside the
   * sandbox of a project's executor), or undefined. The model, not a person, chose the agent,
   * so no caller's rights apply. Absent: never refused.
   */
  subagentRefusal: ((conversation: LiveConversation, agent: string) => string | undefined) | undefined = undefined;
  /**
   * Work done after each turn of any session ended and was recorded (e.g. adding its cost to
   * the ledger), in order; a failing one is logged and the others still run.
   */
  readonly turnCompletionHooks: ((conversation: LiveConversation, turn: Turn) => Promise<void>)[] = [];
}

/**
 * The protocol side of where members may work (`platform/access/workspace-confinement.ts`,
 * docs/platform.md "Where members work"): gives the rule the server's executors and its own
 * directories, and answers its refusals as invalid params naming the param.
 */
import type { McpServerConfig } from '../../config/mcp.js';
import type { Executor } from '../../executors/executor.js';
import { externalAgentRefusal } from '../../platform/access/external-agent-confinement.js';
import { checkConversationMcpServers } from '../../platform/access/mcp-confinement.js';
import { checkMemberWorkspace } from '../../platform/access/member-workspaces.js';
import { checkProjectLocation, checkProjectWorkspace, ConfinementError, type ConfinementContext, type LocationSource } from '../../platform/access/workspace-confinement.js';
import type { StoredProject } from '../../platform/projects/project-store.js';
import { ErrorCodes, RpcError, type MethodParams, type WorkLocationEntry } from '../../protocol/index.js';
import { confinedToProjects } from '../../platform/access/workspace-confinement.js';
import type { Caller } from '../../platform/caller.js';
import type { Platform } from '../../platform/platform.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { RpcConnection } from '../rpc-connection.js';

/**
 * The server's executors and own directories, as the rules need them, for work that has no
 * connection (a scheduled run).
 * @param protectedDirectories the server's configuration, data and state directories
 * @param platform the platform, whose data directory is always one of them
 * @returns the context; executors are looked up at each use, so a reload is seen
 */
export function serverConfinementContext(runtime: Runtime, protectedDirectories: readonly string[], platform: Platform | undefined): ConfinementContext {
  const directories = new Set(protectedDirectories);
  // The platform database and the secrets' key live here, whatever the configuration says.
  if (platform) directories.add(platform.dataDir);
  return { executor: (name) => runtime.findExecutor(name), serverDirectories: [...directories] };
}

/** The server's executors and own directories, as the rules need them. */
export function confinementContext(connection: RpcConnection): ConfinementContext {
  return serverConfinementContext(connection.runtime, connection.config.protectedDirectories, connection.platform);
}

/** Runs a check, answering its refusal as invalid params `<method>: params.<field>: …`. */
async function refusedAsInvalidParams(method: string, check: Promise<void>): Promise<void> {
  try {
    await check;
  } catch (error) {
    if (error instanceof ConfinementError) throw new RpcError(ErrorCodes.invalidParams, `${method}: params.${error.field}: ${error.message}`);
    throw error;
  }
}

/**
 * Refuses a new project's workspace the connection's caller may not use: one over the server's
 * own directories (`checkProjectWorkspace`), outside the directories `platform.memberWorkspaces`
 * lets members use, or over another project's workspace (`checkMemberWorkspace`).
 * @throws RpcError invalidParams naming `params.workspace.executor` or `params.workspace.directory`
 */
export async function confineProjectWorkspace(connection: RpcConnection, method: string, workspace: StoredProject['workspace']): Promise<void> {
  const context = confinementContext(connection);
  await refusedAsInvalidParams(method, checkProjectWorkspace(connection.caller, workspace, context.executor(workspace.executor), context.serverDirectories));
  const platform = connection.platform;
  if (!platform) return;
  const members = { executor: context.executor, allowed: platform.settings.memberWorkspaces, projects: platform.projects.list(), reaches: (projectId: string) => platform.access.projectAccess(connection.caller, projectId) !== undefined };
  await refusedAsInvalidParams(method, checkMemberWorkspace(connection.caller, workspace, members));
}

/**
 * Refuses a work location of a project conversation the connection's caller may not use (see
 * `checkProjectLocation`).
 * @param entries the work location asked for, or the project's workspace when none was given
 * @param source where the entries came from (names the params in a refusal)
 * @throws RpcError invalidParams naming the param
 */
export function confineProjectLocation(connection: RpcConnection, method: string, project: StoredProject, entries: readonly WorkLocationEntry[], source: LocationSource): Promise<void> {
  return refusedAsInvalidParams(method, checkProjectLocation(connection.caller, project, entries, source, confinementContext(connection)));
}

/**
 * Refuses MCP servers of a new project conversation the connection's caller may not give (see
 * `checkConversationMcpServers`).
 * @param cwd the conversation's first working directory
 * @throws RpcError invalidParams naming `params.mcpServers.<name>.<key>`
 */
export function confineConversationMcpServers(connection: RpcConnection, method: string, project: StoredProject, servers: Readonly<Record<string, McpServerConfig>>, cwd: string): Promise<void> {
  return refusedAsInvalidParams(method, checkConversationMcpServers(connection.caller, project, servers, cwd, confinementContext(connection)));
}

/**
 * Refuses an agent the connection's caller may not run in a conversation of `project` (see
 * `externalAgentRefusal`), as forbidden in the words of the access rules.
 * @param field the param that chose the agent (`params.agent`), or how it was chosen otherwise
 * @param executors the executors of the conversation's work location (the project's own is added)
 * @throws RpcError forbidden (-32003) `<method>: forbidden: <field>: agent "…" …`
 */
export function confineAgent(connection: RpcConnection, method: string, field: string, project: StoredProject, agent: string, executors: readonly Executor[]): void {
  const refusal = agentRefusal(connection.runtime, connection.caller, project, agent, executors);
  if (refusal !== undefined) throw new RpcError(ErrorCodes.forbidden, `${method}: forbidden: ${field}: ${refusal}`);
}

/**
 * Why `caller` may not run `agent` in a conversation of `project` (see `externalAgentRefusal`),
 * with the agent's definition and the project's executor as the runtime has them now.
 * @param executors the executors of the conversation's work location (the project's own is added)
 * @returns the reason, or undefined when the caller may run it
 */
export function agentRefusal(runtime: Runtime, caller: Caller, project: StoredProject, agent: string, executors: readonly Executor[]): string | undefined {
  const projectExecutor = runtime.findExecutor(project.workspace.executor);
  return externalAgentRefusal(caller, agent, runtime.agentDefinitions[agent], [...(projectExecutor ? [projectExecutor] : []), ...executors], project.id);
}

/** What `conversation/create` asks for, once its project's work location is filled in. */
type CreateOptions = Omit<MethodParams<'conversation/create'>, 'clientMessageId'>;

/**
 * The rest of `conversation/create`'s confinement for a project conversation, once its work
 * location passed `confineProjectLocation`: the agent (`params.agent`, or the default agent)
 * must be one the caller may run there (`confineAgent`), its MCP servers ones the caller may
 * give (`confineConversationMcpServers`), and a worktree is made inside the project's
 * workspace (`within`), never next to a checkout that is the workspace or holds it.
 * @returns the options, with `worktree.within` set for a caller held to projects
 * @throws RpcError forbidden for the agent; invalidParams naming `params.mcpServers.…`
 */
export async function confineNewProjectConversation(connection: RpcConnection, method: string, options: CreateOptions, context: { mcpServers?: Record<string, McpServerConfig> }): Promise<CreateOptions & { worktree?: { baseBranch?: string; within?: string } }> {
  if (options.projectId === undefined || !confinedToProjects(connection.caller)) return options;
  const project = connection.platform?.projects.find(options.projectId);
  if (!project) return options;
  const entries = options.workLocation ?? (options.cwd !== undefined ? [{ executor: options.executor ?? 'local', cwd: options.cwd }] : []);
  const executors = entries.flatMap((entry) => connection.runtime.findExecutor(entry.executor) ?? []);
  const agent = options.agent ?? connection.runtime.defaultAgent;
  confineAgent(connection, method, options.agent !== undefined ? 'params.agent' : `params.agent (not given, so the default agent "${agent}")`, project, agent, executors);
  const first = entries[0];
  if (context.mcpServers !== undefined && first) await confineConversationMcpServers(connection, method, project, context.mcpServers, first.cwd);
  return options.worktree ? { ...options, worktree: { ...options.worktree, within: project.workspace.directory } } : options;
}

/**
 * The platform's part of the running server (SPEC §9, docs/platform.md): what a project gives
 * the runtime (its secrets as environment variables, its resource limits, its agents' home),
 * the callers the HTTP server's upgrade path asks for (platform sessions, API tokens), and the
 * ending of connections whose access went (a member removed, a session revoked or expired).
 * Called by `runtime-services.ts`, which owns the opened {@link Platform}.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../logger.js';
import { ModelDiscovery } from '../models/model-discovery.js';
import type { Caller } from '../platform/caller.js';
import { accessEndedFor, type Platform } from '../platform/platform.js';
import { resourceLimitPrefix } from '../platform/projects/resource-limits.js';
import { unsandboxedAgentRefusal } from '../platform/access/external-agent-confinement.js';
import type { ProcessTracker } from '../executors/process-tracker.js';
import type { Runtime } from '../runtime/runtime.js';
import { serverMachineAddressRefusal } from '../platform/access/network-confinement.js';
import { recoverProjects } from './project-operations.js';
import type { RpcConnection } from './rpc-connection.js';
import { sessionSecrets, type PlatformRouteOptions } from './web/platform-routes.js';

/** How often platform-mode connections are checked for expired sessions, ms. */
export const PLATFORM_ACCESS_SWEEP_MS = 60_000;

/**
 * Gives the runtime what projects add to their conversations: their secrets as environment
 * variables of commands and external agents, their resource limits on sandboxed executors, a
 * per-project home of external agents' state (`CODEX_HOME`), and the model catalog's discovery.
 * @param processTracker where external agents' processes are recorded (a restart after a crash stops them)
 * @param discoverModels whether `models/list` asks providers for their models (`GET <baseURL>/models`)
 */
export function connectProjectsToRuntime(platform: Platform, runtime: Runtime, processTracker: ProcessTracker, discoverModels: boolean): void {
  if (discoverModels) runtime.modelDiscovery = new ModelDiscovery(() => runtime.models);
  const projectOf = (conversation: { id: string; projectId?: string | undefined }) => platform.projects.projectOf(conversation.id) ?? conversation.projectId;
  // A project's commands receive its secrets as environment variables.
  runtime.commandEnvironment = (conversation) => {
    const projectId = projectOf(conversation);
    return projectId === undefined ? undefined : Object.fromEntries(platform.secrets.environment(projectId));
  };
  // A project's resource limits hold for its commands on sandboxed executors.
  runtime.commandPrefix = (conversation, executor) => {
    if ((executor as { sandbox?: unknown }).sandbox === undefined) return undefined;
    const projectId = projectOf(conversation);
    return projectId === undefined ? undefined : resourceLimitPrefix(platform.projects.find(projectId)?.resources);
  };
  // A subagent the model starts in a sandboxed or remote project is never an external agent,
  // which would run on the server's machine outside the sandbox, whoever sent the prompt.
  runtime.extensions.subagentRefusal = (conversation, agent) => {
    const projectId = projectOf(conversation.state);
    const project = projectId !== undefined ? platform.projects.find(projectId) : undefined;
    if (!project) return undefined;
    const projectExecutor = runtime.findExecutor(project.workspace.executor);
    const executors = [...(projectExecutor ? [projectExecutor] : []), ...conversation.workspaces.map((workspace) => workspace.executor)];
    return unsandboxedAgentRefusal(agent, runtime.agentDefinitions[agent], executors, project.id);
  };
  // A project conversation's own HTTP MCP servers are called from this machine, outside any
  // sandbox: with members about, none may reach the machine itself, whoever gave it.
  runtime.extensions.ownMcpAddressCheck = (conversation) => (platform.signInEnabled && projectOf(conversation.state) !== undefined ? (url) => serverMachineAddressRefusal(url) : undefined);
  runtime.processTracker = processTracker;
  // Each project keeps its external agents' state in its own home (Codex reads CODEX_HOME).
  runtime.agentEnvironment = (conversation) => {
    const projectId = projectOf(conversation);
    if (projectId === undefined || !platform.projects.find(projectId)) return undefined;
    return { ...Object.fromEntries(platform.secrets.environment(projectId)), CODEX_HOME: platform.agentHome(projectId) };
  };
}

/**
 * Keeps every connection within its caller's access: access taken away in the projects part
 * (a member removed, a project deleted) ends what connections hold at once; callers whose
 * access ended in the identity part (revoked session or token, removed user) are disconnected;
 * in platform mode, connections are checked every `sweepMs` for expired sessions. Also starts
 * again the projects that were running before a restart.
 * @param connections the server's live connections (read at each change)
 * @returns stops the periodic check (at shutdown)
 */
export function watchPlatformAccess(platform: Platform, runtime: Runtime, connections: ReadonlySet<RpcConnection>, logger: Logger, sweepMs = PLATFORM_ACCESS_SWEEP_MS): () => void {
  platform.projects.onAccessChanged(() => {
    for (const connection of connections) connection.recheckAccess();
  });
  platform.onAccessEnded((ended) => {
    for (const connection of connections) if (accessEndedFor(connection.caller, ended)) connection.close(1008, ended.reason);
  });
  // Projects running before a restart are checked and started again; their status is persisted.
  recoverProjects(platform, runtime, logger).catch((error: unknown) => logger.error({ error: (error as Error).message }, 'projects could not be recovered after the restart'));
  if (!platform.signInEnabled) return () => undefined;
  // Sessions also end by expiring: connections whose session expired (or whose access changed
  // by any other way) are closed.
  const sweep = async () => {
    for (const connection of connections) {
      if (connection.caller.kind !== 'local-owner' && !(await platform.stillValid(connection.caller).catch(() => true))) connection.close(1008, 'the session expired or the access changed; sign in again');
    }
  };
  const timer = setInterval(() => {
    sweep().catch((error: unknown) => logger.warn({ error: (error as Error).message }, 'checking platform sessions failed'));
  }, sweepMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The callers of the HTTP server's upgrade path in platform mode (see `HttpServerOptions`). */
export interface PlatformCallers {
  /** The caller an API token (not the server token) stands for. */
  apiTokenCaller: (token: string) => Promise<Caller | undefined>;
  /** The caller a platform session cookie of an upgrade request stands for. */
  sessionCaller: (request: IncomingMessage) => Promise<Caller | undefined>;
}

/** The upgrade path's callers of a platform whose sign-in is on, read from its sessions and tokens. */
export function platformCallers(platform: Platform, routes: PlatformRouteOptions): PlatformCallers {
  return {
    apiTokenCaller: (given) => platform.callerOfToken(given),
    sessionCaller: async (request) => {
      for (const secret of sessionSecrets(request, routes)) {
        const caller = await platform.callerOfSession(secret);
        if (caller) return caller;
      }
      return undefined;
    },
  };
}

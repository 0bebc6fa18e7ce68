/**
 * The MCP servers a caller held to projects may give a project conversation
 * (`conversation/create` `mcpServers`; docs/platform.md, "Where members work"). A server entry
 * is a program to start or an address to call, with values that may be read from the server's
 * own environment (`env:NAME`). For such a caller, a stdio server runs on the project's
 * executor (not the default `local`, which may be outside the project's sandbox), in a
 * directory of the project's workspace, no value is taken from the server's environment,
 * which holds its provider keys and other secrets, and an HTTP server is not on the server's
 * machine or its link-local network (`network-confinement.ts`).
 */
import path from 'node:path';
import type { McpServerConfig } from '../../config/mcp.js';
import type { StoredProject } from '../projects/project-store.js';
import type { Caller } from '../caller.js';
import { serverMachineAddressRefusal } from './network-confinement.js';
import { checkProjectLocation, ConfinementError, confinedToProjects, type ConfinementContext } from './workspace-confinement.js';

/** The executor a stdio server runs on when its entry names none (as `mcp.yaml` reads it). */
const DEFAULT_EXECUTOR = 'local';

/** Refuses a value read from the server's environment. */
function checkValues(values: Record<string, string> | undefined, field: string): void {
  for (const [key, value] of Object.entries(values ?? {})) {
    if (value.startsWith('env:')) {
      throw new ConfinementError(`${field}.${key}`, `"${value}" reads the server's own environment variable ${value.slice(4)}; only administrators may pass the server's environment to an MCP server; give the value itself`);
    }
  }
}

/**
 * Refuses MCP servers of a new project conversation that `caller` may not give.
 * @param servers the checked entries, by name
 * @param cwd the conversation's first working directory (a relative `cwd` of an entry is resolved against it)
 * @throws ConfinementError naming `mcpServers.<name>.<key>`
 */
export async function checkConversationMcpServers(caller: Caller, project: StoredProject, servers: Readonly<Record<string, McpServerConfig>>, cwd: string, context: ConfinementContext): Promise<void> {
  if (!confinedToProjects(caller)) return;
  for (const [name, server] of Object.entries(servers)) {
    const field = `mcpServers.${name}`;
    if (server.transport === 'http') {
      checkValues(server.headers, `${field}.headers`);
      const refusal = await serverMachineAddressRefusal(new URL(server.url));
      if (refusal !== undefined) throw new ConfinementError(`${field}.url`, refusal);
      continue;
    }
    checkValues(server.env, `${field}.env`);
    const executor = server.executor ?? DEFAULT_EXECUTOR;
    if (executor !== project.workspace.executor) {
      throw new ConfinementError(
        `${field}.executor`,
        `executor "${executor}"${server.executor === undefined ? ' (the default)' : ''} is not the executor of project ${project.id}; a member's MCP server runs on the project's executor "${project.workspace.executor}": give executor: ${project.workspace.executor}`,
      );
    }
    if (server.cwd === undefined) continue;
    const directory = path.posix.resolve(cwd, server.cwd);
    try {
      await checkProjectLocation(caller, project, [{ executor, cwd: directory }], 'cwd', context);
    } catch (error) {
      if (error instanceof ConfinementError) throw new ConfinementError(`${field}.cwd`, error.message);
      throw error;
    }
  }
}

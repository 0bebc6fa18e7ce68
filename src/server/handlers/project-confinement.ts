/**
 * The protocol side of where members may work (`platform/access/workspace-confinement.ts`,
 * docs/platform.md "Where members work"): gives the rule the server's executors and its own
 * directories, and answers its refusals as invalid params naming the param.
 */
import { checkProjectLocation, checkProjectWorkspace, ConfinementError, type ConfinementContext, type LocationSource } from '../../platform/access/workspace-confinement.js';
import type { StoredProject } from '../../platform/projects/project-store.js';
import { ErrorCodes, RpcError, type WorkLocationEntry } from '../../protocol/index.js';
import type { RpcConnection } from '../rpc-connection.js';

/** The server's executors and own directories, as the rule needs them. */
function confinementContext(connection: RpcConnection): ConfinementContext {
  const directories = new Set(connection.config.protectedDirectories);
  // The platform database and the secrets' key live here, whatever the configuration says.
  if (connection.platform) directories.add(connection.platform.dataDir);
  return { executor: (name) => connection.runtime.findExecutor(name), serverDirectories: [...directories] };
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
 * Refuses a new project's workspace the connection's caller may not use (see `checkProjectWorkspace`).
 * @throws RpcError invalidParams naming `params.workspace.directory`
 */
export function confineProjectWorkspace(connection: RpcConnection, method: string, workspace: StoredProject['workspace']): Promise<void> {
  const context = confinementContext(connection);
  return refusedAsInvalidParams(method, checkProjectWorkspace(connection.caller, workspace, context.executor(workspace.executor), context.serverDirectories));
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

/**
 * Which directories a caller who is not an administrator may make a project in
 * (docs/platform.md, "Where members work"; `platform.memberWorkspaces` in `server.yaml`,
 * docs/configuration.md). Beside the server's own directories (`workspace-confinement.ts`),
 * two rules:
 *
 * - **Allowed directories.** A project's workspace decides where its members' commands run and
 *   what the protocol's file methods reach. On the plain `local` executor those commands run
 *   unsandboxed as the server's own user, so a member who could choose any directory there
 *   could read every other project's files and secrets. So an administrator lists, per
 *   executor, the directories members may use: a member's workspace on a listed executor must
 *   be one of them or lie inside one, and the plain `local` executor is refused to members
 *   unless it is listed. Other executors (sandboxed, `ssh`) are open to members unless listed.
 * - **Other projects.** A workspace that is, holds or lies inside the workspace of a project
 *   the caller does not belong to is refused on every executor: its files, `.env` included,
 *   are that project's.
 *
 * Paths are compared as they resolve (symlinks followed): on the server's machine with the
 * kernel's resolution, elsewhere with the executor's. The local owner and administrators
 * choose freely.
 */
import path from 'node:path';
import type { Executor } from '../../executors/executor.js';
import type { Caller } from '../caller.js';
import { confinesCommands } from './external-agent-confinement.js';
import type { StoredProject } from '../projects/project-store.js';
import { ConfinementError, confinedToProjects, isInside, realPathOnHost } from './workspace-confinement.js';

/** What the rule needs of the server. */
export interface MemberWorkspaceContext {
  /** The configured executor named `name`, or undefined. */
  executor(name: string): Executor | undefined;
  /** `platform.memberWorkspaces` of `server.yaml`: executor name → directories members may use. */
  allowed: Readonly<Record<string, readonly string[]>>;
  /** Every existing project. */
  projects: readonly StoredProject[];
  /** Whether the caller reaches project `projectId` (as a member, manager or administrator). */
  reaches(projectId: string): boolean;
}

/**
 * The real path of `directory` as `executor` resolves it: with the kernel's resolution on the
 * server's machine (a `local` executor, sandboxed or not, works on this machine's paths), else
 * with the executor's own (`ssh`).
 * @throws ConfinementError naming `workspace.directory` when a remote path cannot be resolved
 */
async function realPathOn(executor: Executor, directory: string): Promise<string> {
  if (executor.kind === 'local') return realPathOnHost(directory);
  try {
    return await executor.fs.realPath(directory);
  } catch (error) {
    throw new ConfinementError('workspace.directory', `"${directory}" cannot be resolved on executor "${executor.name}": ${(error as Error).message}`);
  }
}

/** Like `realPathOn`, for a path written by someone else (a setting, a stored project): as written when it cannot be resolved. */
async function resolvedOrAsWritten(executor: Executor, directory: string): Promise<string> {
  try {
    return await realPathOn(executor, directory);
  } catch {
    return path.posix.resolve(directory);
  }
}

/**
 * Refuses a workspace outside the directories `platform.memberWorkspaces` lets members use on
 * its executor, or on the plain `local` executor when none are listed for it.
 * @throws ConfinementError naming `workspace.executor` (unlisted plain `local`) or `workspace.directory`
 */
async function checkAllowedDirectories(workspace: StoredProject['workspace'], executor: Executor, allowed: readonly string[] | undefined, real: string): Promise<void> {
  const setting = `server.yaml platform.memberWorkspaces.${workspace.executor}`;
  if (allowed === undefined) {
    if (confinesCommands(executor)) return;
    throw new ConfinementError(
      'workspace.executor',
      `executor "${workspace.executor}" runs the commands of a project's members unsandboxed, as the server's own user, which can read the server's files and every other project's; ` +
        `only administrators may make a project on it, unless ${setting} lists directories members may use; choose a sandboxed or ssh executor (executors/list), or ask an administrator`,
    );
  }
  for (const root of allowed) {
    if (isInside(await resolvedOrAsWritten(executor, root), real, path.posix)) return;
  }
  throw new ConfinementError('workspace.directory', `"${workspace.directory}" is outside the directories members may use on executor "${workspace.executor}" (${setting}: ${allowed.join(', ')}); only administrators may make a project elsewhere`);
}

/** Whether two executors work on the same files: the same executor, or both on the server's machine. */
function sameFiles(first: Executor, second: Executor): boolean {
  return first.name === second.name || (first.kind === 'local' && second.kind === 'local');
}

/**
 * Refuses a workspace over a project the caller does not reach. The project is not named: the
 * caller may not know it exists.
 * @throws ConfinementError naming `workspace.directory`
 */
async function checkOtherProjects(workspace: StoredProject['workspace'], executor: Executor, real: string, context: MemberWorkspaceContext): Promise<void> {
  for (const project of context.projects) {
    const theirs = context.executor(project.workspace.executor);
    if (!theirs || !sameFiles(executor, theirs) || context.reaches(project.id)) continue;
    const other = await resolvedOrAsWritten(theirs, project.workspace.directory);
    const relation = real === other ? 'is' : isInside(other, real, path.posix) ? 'lies inside' : isInside(real, other, path.posix) ? 'contains' : undefined;
    if (relation === undefined) continue;
    throw new ConfinementError('workspace.directory', `"${workspace.directory}" ${relation} the workspace of another project, one you are not a member of; only its members and administrators may work there`);
  }
}

/**
 * Refuses a new project's workspace that a caller held to projects may not use (the rules of
 * this module); runs after the server's own directories were checked, and before anything
 * touches the directory.
 * @param caller who asks (nothing is refused to the local owner and administrators)
 * @param workspace the workspace asked for
 * @param context the server's executors, the setting and the existing projects
 * @throws ConfinementError naming `workspace.executor` or `workspace.directory`
 */
export async function checkMemberWorkspace(caller: Caller, workspace: StoredProject['workspace'], context: MemberWorkspaceContext): Promise<void> {
  if (!confinedToProjects(caller)) return;
  // An unknown executor is reported by the workspace check, naming the configured ones.
  const executor = context.executor(workspace.executor);
  if (!executor) return;
  const real = await realPathOn(executor, workspace.directory);
  await checkAllowedDirectories(workspace, executor, Object.hasOwn(context.allowed, workspace.executor) ? context.allowed[workspace.executor] : undefined, real);
  await checkOtherProjects(workspace, executor, real, context);
}

/**
 * Where callers who are not administrators may put a project and its conversations
 * (docs/platform.md, "Where members work"). The server's own directories (configuration, data,
 * state) hold its token, the secrets' key and the platform database: whoever reads them can
 * connect as the local owner. So a member or manager may neither make a project whose
 * workspace is, holds or lies in one of them, nor point a project conversation anywhere but
 * inside its project's workspace, on the project's executor, and away from those directories.
 *
 * Paths are compared as the file system resolves them (symlinks followed, `..` applied), so
 * neither a link to the data directory nor a detour through `..` passes. The local owner and
 * administrators choose freely: they can read those directories anyway.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Executor } from '../../executors/executor.js';
import type { WorkLocationEntry } from '../../protocol/entities.js';
import { isAdministrator, type Caller } from '../caller.js';
import type { StoredProject } from '../projects/project-store.js';

/** A project or work location a caller may not use; `field` names the param (without `params.`). */
export class ConfinementError extends Error {
  /**
   * @param field the param that was wrong, as the client wrote it (`cwd`, `workLocation[0].cwd`, `workspace.directory`)
   * @param message what is wrong with it and what is allowed
   */
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfinementError';
  }
}

/** What the confinement needs of the server. */
export interface ConfinementContext {
  /** The configured executor named `name`, or undefined. */
  executor(name: string): Executor | undefined;
  /** The server's own directories on its machine (configuration, data, state). */
  serverDirectories: readonly string[];
}

/**
 * Where a requested work location came from, which decides the params named in a refusal:
 * `cwd` (with `executor`), `workLocation` (each entry), or `projectId` (the project's workspace
 * as the default).
 */
export type LocationSource = 'cwd' | 'workLocation' | 'projectId';

/**
 * Whether `caller` is held to the rules of this module: everyone but the local owner and
 * administrators (a project's managers and members, and every project-scoped API token).
 */
export function confinedToProjects(caller: Caller): boolean {
  return !isAdministrator(caller);
}

const SERVER_DIRECTORIES = "the server's own directories (its configuration, data and state directories, which hold its token and keys)";

/**
 * Whether `candidate` is `root` or lies inside it (both absolute and normalized), compared as
 * paths: `/srv/app-other` is not inside `/srv/app`.
 * @param paths the path flavour (POSIX for executors' paths)
 */
export function isInside(root: string, candidate: string, paths: path.PlatformPath = path): boolean {
  const relative = paths.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${paths.sep}`) && !paths.isAbsolute(relative));
}

/**
 * The real path of `target` on the server's machine, as the kernel resolves it (a `..` after a
 * symlink goes up from where the link leads, not from the link). For a path that does not
 * exist: its deepest existing ancestor resolved, the missing parts appended (they cannot be
 * links).
 */
export async function realPathOnHost(target: string): Promise<string> {
  try {
    return await realpath(target);
  } catch {
    // Not there (yet): resolved through the part that exists.
  }
  const missing: string[] = [];
  let existing = path.resolve(target);
  for (;;) {
    try {
      return path.join(await realpath(existing), ...missing);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return path.resolve(target);
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

/**
 * How `directory` (on the server's machine) stands to the server's own directories.
 * @returns a description of the overlap, or undefined when there is none
 */
async function serverDirectoryOverlap(directory: string, serverDirectories: readonly string[]): Promise<string | undefined> {
  const real = await realPathOnHost(directory);
  for (const serverDirectory of serverDirectories) {
    const protectedPath = await realPathOnHost(serverDirectory);
    if (real === protectedPath) return `is one of ${SERVER_DIRECTORIES}`;
    if (isInside(protectedPath, real)) return `lies inside one of ${SERVER_DIRECTORIES}`;
    if (isInside(real, protectedPath)) return `contains one of ${SERVER_DIRECTORIES}`;
  }
  return undefined;
}

/**
 * Refuses a workspace for a new project that a caller held to projects may not use: on an
 * executor of the server's machine (`local`, sandboxed or not), a directory that is, holds or
 * lies inside one of the server's own directories. Runs before anything touches the
 * directory (a sandboxed executor would otherwise open it to its file operations).
 * @param executor the workspace's executor; undefined when not configured (the workspace check reports that)
 * @throws ConfinementError naming `workspace.directory`
 */
export async function checkProjectWorkspace(caller: Caller, workspace: StoredProject['workspace'], executor: Executor | undefined, serverDirectories: readonly string[]): Promise<void> {
  if (!confinedToProjects(caller) || executor?.kind !== 'local') return;
  const overlap = await serverDirectoryOverlap(workspace.directory, serverDirectories);
  if (overlap !== undefined) {
    throw new ConfinementError('workspace.directory', `"${workspace.directory}" ${overlap}; only administrators may make a project there; choose a directory of your own work`);
  }
}

/**
 * Refuses a work location of a project conversation that a caller held to projects may not
 * use: every entry must be on the project's executor, its directory inside the project's
 * workspace (as written, and once symlinks are followed on the executor) and, on the server's
 * machine, away from the server's own directories (a workspace an administrator placed over
 * them is refused this way too).
 * @param entries the work location asked for (the project's workspace when the request gave none)
 * @param source where the entries came from (names the params in a refusal)
 * @throws ConfinementError naming the param, also when a directory cannot be resolved on the executor
 */
export async function checkProjectLocation(caller: Caller, project: StoredProject, entries: readonly WorkLocationEntry[], source: LocationSource, context: ConfinementContext): Promise<void> {
  if (!confinedToProjects(caller)) return;
  const { executor: executorName, directory } = project.workspace;
  const where = `the workspace of project ${project.id} (${directory} on executor "${executorName}")`;
  for (const [index, entry] of entries.entries()) {
    const field = (key: 'cwd' | 'executor'): string => (source === 'workLocation' ? `workLocation[${index}].${key}` : source === 'cwd' ? key : 'projectId');
    if (entry.executor !== executorName) {
      throw new ConfinementError(field('executor'), `executor "${entry.executor}" is not the project's executor; a conversation of the project works in ${where}`);
    }
    const executor = context.executor(executorName);
    if (!executor) throw new ConfinementError(field('executor'), `executor "${executorName}" of project ${project.id} is not configured`);
    if (!isInside(path.posix.resolve(directory), path.posix.resolve(entry.cwd), path.posix)) {
      throw new ConfinementError(field('cwd'), `"${entry.cwd}" is outside ${where}; a conversation of a project works inside its workspace`);
    }
    // Resolved on the server's machine first, so a link to a server directory is refused
    // for where it leads rather than only as a link out of the workspace.
    const overlap = executor.kind === 'local' ? await serverDirectoryOverlap(entry.cwd, context.serverDirectories) : undefined;
    if (overlap !== undefined) {
      const subject = source === 'projectId' ? where : `"${entry.cwd}" (in ${where})`;
      throw new ConfinementError(field('cwd'), `${subject} ${overlap}; only administrators may work there${source === 'projectId' ? '; give a cwd inside the workspace away from them' : ''}`);
    }
    await checkRealPathInside(executor, directory, entry.cwd, where, field('cwd'));
  }
}

/**
 * Why a caller held to projects may not use a project conversation where it works now. The
 * location was checked when it was set, but by the rules of the one who set it: it may predate
 * these rules, or an administrator may have placed it (docs/platform.md, "Where members work").
 * So whatever acts in the location for such a caller (a turn, files, a terminal, a worktree)
 * checks it again, as `checkProjectLocation` would for a new one.
 * @param workLocation where the conversation works (its stored entries, or its worktree's checkout)
 * @param what how the location is named in the reason (`conversation conv_… works in`)
 * @returns the reason, or undefined when the caller may use it
 */
export async function storedLocationRefusal(caller: Caller, project: StoredProject, workLocation: readonly WorkLocationEntry[], what: string, context: ConfinementContext): Promise<string | undefined> {
  if (!confinedToProjects(caller)) return undefined;
  try {
    await checkProjectLocation(caller, project, workLocation, 'workLocation', context);
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfinementError)) throw error;
    const place = workLocation.map((entry) => `"${entry.cwd}" on executor "${entry.executor}"`).join(', ');
    return `${what} ${place}, where members of project ${project.id} may not work: ${error.message}; an administrator, or a manager moving it into the workspace with conversation/update workLocation, can make it usable again`;
  }
}

/**
 * Resolves `cwd` and the workspace `directory` on the executor, as its commands will see them
 * (symlinks followed, a `..` after a link taken from where the link leads).
 * @throws ConfinementError naming `field` when `cwd` leads outside the workspace or cannot be
 *   resolved (a working directory must exist)
 */
async function checkRealPathInside(executor: Executor, directory: string, cwd: string, where: string, field: string): Promise<void> {
  const resolve = async (target: string, what: string): Promise<string> => {
    try {
      return await executor.fs.realPath(target);
    } catch (error) {
      throw new ConfinementError(field, `${what} cannot be resolved on executor "${executor.name}": ${(error as Error).message}`);
    }
  };
  const root = await resolve(directory, where);
  const real = await resolve(cwd, `"${cwd}"`);
  if (!isInside(root, real, path.posix)) throw new ConfinementError(field, `"${cwd}" leads outside ${where} once symlinks are followed (to ${real})`);
}

/**
 * What the project methods do beyond the stores (SPEC §9): checking a project's workspace on
 * its executor (start), writing its secrets to the workspace `.env`, and deleting a project
 * with everything under it. Shared by the protocol handlers and the server's start.
 */
import type { Logger } from '../logger.js';
import type { Platform } from '../platform/platform.js';
import type { StoredProject } from '../platform/projects/project-store.js';
import { writeEnvFile } from '../platform/secrets/env-file.js';
import { deleteConversation } from '../runtime/lifecycle.js';
import { NotFoundError, type Runtime } from '../runtime/runtime.js';

/**
 * Hooks run for each conversation of a project being deleted, before the conversation itself
 * (schedules, once they exist, remove theirs here).
 */
export type ConversationDeletionHook = (conversationId: string) => Promise<void>;

/** A project's workspace directory could not be reached. */
export class WorkspaceUnavailableError extends Error {}

/**
 * Checks that a project's workspace directory exists on its executor (for an SSH executor this
 * connects to the host; for a sandboxed local one it runs `true` in the sandbox).
 * @throws WorkspaceUnavailableError naming the executor and directory
 */
export async function checkWorkspace(runtime: Runtime, workspace: StoredProject['workspace']): Promise<void> {
  const executor = runtime.findExecutor(workspace.executor);
  if (!executor) throw new WorkspaceUnavailableError(`executor "${workspace.executor}" is not configured (configured: ${runtime.listExecutors().map((entry) => entry.name).join(', ')})`);
  let stat;
  try {
    // A sandboxed executor sees a directory once it is told it is a workspace (as `Workspace` does).
    executor.useWorkspace?.(workspace.directory);
    stat = await executor.fs.stat(workspace.directory);
  } catch (error) {
    throw new WorkspaceUnavailableError(`executor "${workspace.executor}" cannot be reached: ${(error as Error).message}`);
  }
  if (stat?.kind !== 'directory') throw new WorkspaceUnavailableError(`"${workspace.directory}" is not a directory on executor "${workspace.executor}"`);
  if ((executor as { sandbox?: unknown }).sandbox !== undefined) {
    const result = await executor.run({ command: 'true', cwd: workspace.directory, workspaceRoot: workspace.directory, timeoutMs: 30_000, maxOutputBytes: 4096 });
    if (result.exitCode !== 0) throw new WorkspaceUnavailableError(`the sandbox of executor "${workspace.executor}" does not start: ${result.output.trim().slice(0, 300)}`);
  }
}

/**
 * Starts a project: status `starting` (persisted), then `running` when its workspace answers,
 * `error` with the reason otherwise.
 */
export async function startProject(platform: Platform, runtime: Runtime, projectId: string): Promise<StoredProject> {
  const project = await platform.projects.setStatus(projectId, 'starting');
  try {
    await checkWorkspace(runtime, project.workspace);
  } catch (error) {
    if (!(error instanceof WorkspaceUnavailableError)) throw error;
    return platform.projects.setStatus(projectId, 'error', error.message);
  }
  return platform.projects.setStatus(projectId, 'running');
}

/**
 * After a restart: projects recorded `running` or `starting` are started again (their
 * workspace checked anew), so the status shown is true now, not what it was before the stop.
 */
export async function recoverProjects(platform: Platform, runtime: Runtime, logger: Logger): Promise<void> {
  for (const project of platform.projects.list()) {
    if (project.status !== 'running' && project.status !== 'starting') continue;
    const started = await startProject(platform, runtime, project.id);
    if (started.status === 'error') logger.warn({ projectId: project.id, reason: started.statusMessage }, 'a project that was running before the restart cannot be started');
  }
}

/**
 * Writes a project's secrets to its workspace `.env` (managed block only), kept out of the
 * workspace's git repository (docs/platform.md, "Secrets"); when it cannot be, the server log
 * says why (the secrets are written all the same).
 * @throws NotFoundError when the project's executor is not configured; Error naming the file when it cannot be written
 */
export async function syncEnvFile(platform: Platform, runtime: Runtime, projectId: string): Promise<void> {
  const project = platform.projects.get(projectId);
  const executor = runtime.findExecutor(project.workspace.executor);
  if (!executor) throw new NotFoundError(`executor "${project.workspace.executor}" of project ${projectId} is not configured`);
  const { gitWarning } = await writeEnvFile(executor, project.workspace.directory, platform.secrets.environment(projectId));
  if (gitWarning !== undefined) runtime.logger?.warn({ projectId, problem: gitWarning }, "the project's secrets file is not kept out of git");
}

/**
 * Deletes a project and everything under it, in this order: its conversations (each with
 * its hooks, uploads and read markers), its secrets (and their `.env` block), its data
 * directory folder (external agents' home), its members and the project itself.
 * @returns how many conversations were deleted
 */
export async function deleteProject(platform: Platform, runtime: Runtime, projectId: string, hooks: ConversationDeletionHook[] = []): Promise<number> {
  platform.projects.get(projectId);
  const conversations = platform.projects.conversationsOf(projectId);
  for (const conversationId of conversations) await deleteProjectConversation(platform, runtime, conversationId, hooks);
  if (platform.secrets.list(projectId).length > 0) {
    await platform.secrets.removeProject(projectId);
    // The workspace stays (it is the user's); only the server's block leaves its .env.
    await syncEnvFile(platform, runtime, projectId).catch(() => undefined);
  }
  await platform.costs.forgetProject(projectId);
  platform.removeProjectFiles(projectId);
  await platform.projects.remove(projectId);
  return conversations.length;
}

/** Deletes one conversation with what the platform keeps of it (hooks, read markers, project binding). */
export async function deleteProjectConversation(platform: Platform, runtime: Runtime, conversationId: string, hooks: ConversationDeletionHook[] = []): Promise<void> {
  for (const hook of hooks) await hook(conversationId);
  try {
    // Its uploads live in its folder, which goes with it.
    await deleteConversation(runtime, conversationId);
  } catch (error) {
    // Bound but never committed (no input ever): nothing is stored to delete.
    if (!(error instanceof NotFoundError)) throw error;
  }
  await platform.userState.forgetConversation(conversationId);
  await platform.projects.unbindConversation(conversationId);
}

/**
 * Whether a scheduled task may still run as the user it acts for (docs/platform.md, "Scheduled
 * tasks", "Whose access a run needs"). A task is a standing instruction of its user: once that
 * user can no longer reach its conversation (removed, taken out of the project, the project
 * deleted, a role change that lost the access), a run would act, and spend, in their name
 * where they have no right to. The scheduler asks just before each delivery, because that is
 * the one point every way of losing access passes through, whatever changed it.
 *
 * Reaching the conversation is not all a turn of the user needs: the checks at use a member's
 * own turn goes through (where the conversation works, which agent its session runs) are asked
 * at the same point, through a {@link TaskTurnCheck} the server gives, so a run is refused
 * exactly when the user's own `session/input` would be, whoever changed what since.
 */
import type { AccessControl } from '../access/access-control.js';
import type { Caller, PlatformRole } from '../caller.js';
import type { ProjectStore } from '../projects/project-store.js';
import type { StoredTask } from './task-types.js';

/** The id the local owner's own state (and a task acting for them) is kept under. */
const LOCAL_OWNER_ID = 'local-owner';

/** What the check reads of the platform (a `Platform` is one). */
export interface TaskUserDirectory {
  /** The accounts and their roles. */
  users: { get(userId: string): Promise<{ role: PlatformRole } | undefined> };
  /** The access rules every connection goes through. */
  access: AccessControl;
  /** The projects and their members, to say which access was lost. */
  projects: ProjectStore;
  /**
   * Whether platform mode is on. Off, nobody signs in and the account store may hold no one,
   * so a user without an account is checked as a member of the projects (the memberships still
   * hold) rather than as removed.
   */
  signInEnabled: boolean;
}

/**
 * Why a turn `caller` started in conversation `conversationId` would be refused at use (the
 * checks of `session/input` beyond reaching the conversation), or undefined when it would not.
 * May throw when the check cannot be made (the run is then retried, not refused).
 */
export type TaskTurnCheck = (caller: Caller, conversationId: string) => Promise<string | undefined>;

/**
 * Builds the scheduler's run check (`SchedulerOptions.runRefusal`) over the platform.
 * @param turnCheck the checks at use of a turn the user starts; without it only reaching the conversation is checked
 * @returns a function giving why `task` may not run now as its user, or undefined when it may
 *   (always for a task acting for nobody or for the local owner, who reaches everything); it
 *   throws what `turnCheck` throws
 */
export function taskUserRefusal(platform: TaskUserDirectory, turnCheck?: TaskTurnCheck): (task: StoredTask) => Promise<string | undefined> {
  return async (task) => {
    const userId = task.userId;
    if (userId === undefined || userId === LOCAL_OWNER_ID) return undefined;
    const account = await platform.users.get(userId);
    if (!account && platform.signInEnabled) return `user ${userId} no longer exists (removed)`;
    const role = account?.role ?? 'member';
    // The caller a signed-in session of the user would be: the access rules never read the session id.
    const caller: Caller = { kind: 'user', userId, role, webSessionId: '' };
    if (platform.access.mayReadConversation(caller, task.conversationId)) {
      const refusal = await turnCheck?.(caller, task.conversationId);
      return refusal === undefined ? undefined : `task ${task.id} ("${task.name}") acts for user ${userId}, whose own turn in conversation ${task.conversationId} would now be refused: ${refusal}`;
    }
    const projectId = platform.projects.projectOf(task.conversationId);
    if (projectId === undefined || !platform.projects.find(projectId)) {
      return `user ${userId} can no longer reach conversation ${task.conversationId}: it is in no project, and only administrators reach those`;
    }
    return `user ${userId} is no longer a member of project ${projectId}, which conversation ${task.conversationId} belongs to`;
  };
}

/**
 * `schedules/*` (docs/protocol.md, "Scheduled tasks"): a conversation's scheduled tasks, on the
 * server's {@link ScheduleService}. Errors name the method and the parameter at fault.
 */
import { ErrorCodes, RpcError, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { InvalidScheduleError } from '../../platform/schedules/next-occurrence.js';
import { publicRun, publicTask, UnknownTaskError, type ScheduleService } from '../../platform/schedules/schedule-service.js';
import { isAdministrator, type Caller } from '../../platform/caller.js';
import type { RpcConnection } from '../rpc-connection.js';

type ScheduleMethod = 'schedules/list' | 'schedules/create' | 'schedules/update' | 'schedules/delete' | 'schedules/runNow' | 'schedules/pause' | 'schedules/resume' | 'schedules/history';
/** The scheduled-task handlers, bound to one connection. */
export type ScheduleHandlers = { [M in ScheduleMethod]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/** Runs `work`, turning the scheduler's errors into protocol errors that name `method` and the parameter. */
async function answer<T>(method: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UnknownTaskError) throw new RpcError(ErrorCodes.notFound, `${method}: params.taskId: ${error.message}`);
    if (error instanceof InvalidScheduleError) throw new RpcError(ErrorCodes.invalidParams, `${method}: params.${error.message}`);
    throw error;
  }
}

/**
 * The user a new task acts for: a signed-in user or a token's user who is not an administrator
 * always creates tasks for themselves (`params.userId` is ignored); an administrator may name
 * another user and otherwise acts for themselves; the local owner has no account and gives
 * `params.userId` as is.
 */
export function taskUserId(caller: Caller, requested: string | undefined): string | undefined {
  if (caller.kind === 'local-owner') return requested;
  if (isAdministrator(caller)) return requested ?? caller.userId;
  return caller.userId;
}

/** Builds the `schedules/*` handlers. */
export function createScheduleHandlers(connection: RpcConnection): ScheduleHandlers {
  const runtime = connection.runtime;
  const service = (method: string): ScheduleService => {
    if (!runtime.schedules) throw new RpcError(ErrorCodes.internalError, `${method}: scheduled tasks are not available on this server`);
    return runtime.schedules;
  };
  return {
    async 'schedules/list'(params) {
      await runtime.getConversation(params.conversationId);
      return { tasks: service('schedules/list').list(params.conversationId).map(publicTask) };
    },
    async 'schedules/create'(params) {
      // The conversation must exist (a NotFoundError names it).
      await runtime.getConversation(params.conversationId);
      const { userId, ...task } = params;
      const actingFor = taskUserId(connection.caller, userId);
      return answer('schedules/create', async () => {
        const created = await service('schedules/create').create({ ...task, ...(actingFor !== undefined ? { userId: actingFor } : {}) });
        // A task is a use of its conversation: one that had no input yet lived only in memory
        // and would be gone after a restart, leaving the task pointing at nothing.
        await runtime.store.ensureDurable(params.conversationId);
        return { task: publicTask(created) };
      });
    },
    async 'schedules/update'(params) {
      const { taskId, ...changes } = params;
      return answer('schedules/update', async () => ({ task: publicTask(await service('schedules/update').update(taskId, changes)) }));
    },
    async 'schedules/delete'(params) {
      return answer('schedules/delete', async () => {
        await service('schedules/delete').delete(params.taskId);
        return { taskId: params.taskId };
      });
    },
    async 'schedules/runNow'(params) {
      return answer('schedules/runNow', async () => ({ run: publicRun(await service('schedules/runNow').runNow(params.taskId)) }));
    },
    async 'schedules/pause'(params) {
      return answer('schedules/pause', async () => ({ task: publicTask(await service('schedules/pause').pause(params.taskId)) }));
    },
    async 'schedules/resume'(params) {
      return answer('schedules/resume', async () => ({ task: publicTask(await service('schedules/resume').resume(params.taskId)) }));
    },
    async 'schedules/history'(params) {
      return answer('schedules/history', async () => ({ runs: (await service('schedules/history').history(params.taskId, params.limit)).map(publicRun) }));
    },
  };
}

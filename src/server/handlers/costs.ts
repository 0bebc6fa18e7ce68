/**
 * `costs/*` (docs/protocol.md, "Costs"): totals of the platform's cost ledger per conversation,
 * per project and month (with the project's thresholds) and per user and month, and the
 * projects' thresholds. Access is checked before a handler runs (access-rules.ts), except
 * `costs/user` naming another user, which only administrators may.
 */
import { ErrorCodes, RpcError, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { isAdministrator } from '../../platform/caller.js';
import { stateOwner } from '../../platform/settings/user-state.js';
import type { Platform } from '../../platform/platform.js';
import type { RpcConnection } from '../rpc-connection.js';

type CostMethod = 'costs/conversation' | 'costs/project' | 'costs/user' | 'costs/setThresholds';
/** The cost handlers, bound to one connection. */
export type CostHandlers = { [M in CostMethod]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/** Builds the `costs/*` handlers. */
export function createCostHandlers(connection: RpcConnection): CostHandlers {
  const platformOf = (method: string): Platform => {
    if (!connection.platform) throw new RpcError(ErrorCodes.internalError, `${method}: costs are not kept on this server`);
    return connection.platform;
  };
  const projectOf = (method: string, projectId: string) => {
    const platform = platformOf(method);
    if (!platform.projects.find(projectId)) throw new RpcError(ErrorCodes.notFound, `${method}: params.projectId: project "${projectId}" does not exist`);
    return platform;
  };
  return {
    async 'costs/conversation'(params) {
      // The conversation must exist (a NotFoundError names it).
      await connection.runtime.getConversation(params.conversationId);
      return { conversationId: params.conversationId, totals: await platformOf('costs/conversation').costs.ledger.conversationTotals(params.conversationId) };
    },
    async 'costs/project'(params) {
      const costs = projectOf('costs/project', params.projectId).costs;
      const month = params.month ?? costs.currentMonth();
      const standing = await costs.standing(params.projectId, month);
      return { projectId: params.projectId, month, ...standing, byUser: await costs.ledger.projectMonthTotalsByUser(params.projectId, month) };
    },
    async 'costs/user'(params) {
      const costs = platformOf('costs/user').costs;
      const own = stateOwner(connection.caller);
      const userId = params.userId ?? own;
      if (userId !== own && !isAdministrator(connection.caller)) throw new RpcError(ErrorCodes.forbidden, `costs/user: forbidden: params.userId: only administrators may read another user's costs (leave userId out for your own)`);
      const month = params.month ?? costs.currentMonth();
      return { userId, month, totals: await costs.ledger.userMonthTotals(userId, month) };
    },
    async 'costs/setThresholds'(params) {
      const costs = projectOf('costs/setThresholds', params.projectId).costs;
      return { projectId: params.projectId, thresholds: await costs.setThresholds(params.projectId, { warnUsd: params.warnUsd, pauseUsd: params.pauseUsd }) };
    },
  };
}

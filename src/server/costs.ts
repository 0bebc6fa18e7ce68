/**
 * Costs in the running server (docs/platform.md, "Costs and thresholds"): every finished turn
 * goes into the platform's cost ledger, a turn that brings its project's month total to a
 * threshold is announced to the conversation's subscribers (`costs/thresholdReached`), and
 * new turns of a project past its pausing threshold are refused.
 */
import type { Logger } from '../logger.js';
import type { Platform } from '../platform/platform.js';
import type { Runtime } from '../runtime/runtime.js';

/**
 * Connects the platform's cost accounting to the runtime: the ledger hears of every finished
 * turn (`runtime.extensions.turnCompletionHooks`) and the pausing threshold guards new turns
 * (`runtime.extensions.newTurnCheck`, throwing `CostLimitReachedError`).
 */
export function connectCostsToRuntime(platform: Platform, runtime: Runtime, logger: Logger): void {
  const projectOf = (conversation: { id: string; state: { projectId?: string | undefined } }) => platform.projects.projectOf(conversation.id) ?? conversation.state.projectId;
  runtime.extensions.newTurnCheck = async (conversation) => {
    const projectId = projectOf(conversation);
    await platform.costs.checkNewTurn(projectId, projectId !== undefined ? platform.projects.find(projectId)?.name : undefined);
  };
  runtime.extensions.turnCompletionHooks.push(async (conversation, turn) => {
    const crossings = await platform.costs.recordTurn(turn, projectOf(conversation));
    for (const crossing of crossings) {
      logger.warn({ conversationId: conversation.id, ...crossing }, crossing.action === 'pause' ? 'a project reached its pausing cost threshold: new turns are refused' : 'a project reached its warning cost threshold');
      conversation.publish({ method: 'costs/thresholdReached', params: { conversationId: conversation.id, ...crossing } });
    }
  });
}

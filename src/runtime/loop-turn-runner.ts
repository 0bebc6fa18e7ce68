/**
 * The built-in agent loop as a `TurnRunner` (see `turn-runner.ts`): builds the loop's
 * environment — model, tools (MCP included), system prompt with the turn's skills, approval
 * policy, hooks, steering — around the turn context, and runs the loop or a compaction.
 */
import type { AgentDefinition } from '../config/agents.js';
import { scheduleTaskTool } from '../tools/schedule-task.js';
import { updatePlanTool } from '../tools/update-plan.js';
import { runAgent, runCompaction, type AgentEnvironment } from './agent.js';
import type { TurnExtensions } from './instructions/turn-extensions.js';
import type { TurnHost } from './session-turn.js';
import type { TurnRunner } from './turn-runner.js';
import { usageReport } from './usage.js';

/** What the loop runner is made with: the session, the turn's model and extensions, and what to run. */
export interface LoopTurnOptions {
  host: TurnHost;
  /** `provider/model` of the turn. */
  model: string;
  /** The agent's definition, taken once at the start of the turn. */
  definition: AgentDefinition;
  extensions: TurnExtensions;
  /** `compact`: a manual compaction instead of a model turn. */
  work: 'agent' | 'compact';
  /** The turn's reasoning effort (`session/input` `reasoningEffort`), if any. */
  reasoningEffort?: AgentEnvironment['reasoningEffort'];
  /** Interrupts the turn (an approval answered `deny_interrupt`). */
  controller: AbortController;
}

/**
 * The built-in agent loop for one turn. Configuration problems (unknown model, unset key)
 * throw from `runTurn` for the session to record as a model error.
 */
export function loopTurnRunner(options: LoopTurnOptions): TurnRunner {
  return {
    async runTurn(context) {
      const { host, model, definition, extensions, controller } = options;
      const conversation = host.conversation;
      const runtime = conversation.runtime;
      const { turnId } = context;
      const mcp = host.mcpForTurn();
      const schedules = runtime.schedules;
      // Tasks the agent schedules start disabled until a person enables them.
      const scheduling = schedules ? [scheduleTaskTool({ createTask: (input) => schedules.create({ ...input, conversationId: conversation.id }, true) })] : [];
      const baseTools = [...host.tools(), updatePlanTool({ setPlan: (plan) => context.setPlan(plan) }), ...scheduling, ...extensions.tools];
      const resolvedModel = runtime.models.resolve(model);
      const environment: AgentEnvironment = {
        model: resolvedModel,
        // Read before each model call: an MCP server's tool list may change during the turn.
        get tools() {
          return mcp.withTools(baseTools);
        },
        resolveTool: (name) => mcp.resolveTool(name),
        system: extensions.system(conversation.systemPrompt(host.state.agent)),
        workspace: conversation.workspace,
        commands: host.commands,
        signal: context.signal,
        maxSteps: definition.maxSteps ?? runtime.limits.maxStepsPerTurn,
        retryPolicy: runtime.limits.retryPolicy,
        compactionThreshold: runtime.limits.compactionThreshold,
        toolOutputLimitBytes: runtime.limits.toolOutputLimitBytes,
        readAttachment: (attachmentId) => runtime.attachments?.read(conversation.id, attachmentId)?.bytes,
        contextMeter: host.contextMeter,
        sessionId: host.id,
        turnId,
        history: () => host.items,
        // A policy given with conversation/create wins over the agent's, in every session of the conversation.
        authorize: (call, hookPermission, executor, shown) => host.approvals.authorize(turnId, conversation.state.approvalPolicy ?? definition.approvals, call, controller.signal, hookPermission, executor, shown),
        clientFiles: conversation.clientFiles.accessFor(host.id),
        clientCommands: (itemId) => conversation.clientCommands.accessFor(host.id, itemId),
        askUser: (question, call) => conversation.userInputs.request({ conversationId: conversation.id, sessionId: host.id, turnId, ...call, ...question }, controller.signal),
        hooks: extensions.hooks,
        takeSteering: () => host.queue.takeSteering(),
        submitSteering: async (input, recordMessage) => {
          // Steering passes the same hooks as a prompt: a guard on what users send cannot be gone around by sending it mid-turn.
          const refusal = await extensions.submitPrompt(input.content, recordMessage);
          if (refusal === undefined) return;
          conversation.publish({ method: 'turn/warning', params: { conversationId: conversation.id, sessionId: host.id, turnId, source: 'hook', name: 'user_prompt_submit', message: `steering input ${input.id} was not given to the turn: ${refusal.replace(/^the prompt was/, 'it was')}` } });
        },
        record: (item) => context.record(item),
        itemStarted: (itemId, kind, partial) => context.itemStarted(itemId, kind, partial),
        itemDelta: (itemId, delta) => context.itemDelta(itemId, delta),
        modelCallCompleted: (lastCall, turnTotal) =>
          conversation.publish({
            method: 'session/usage',
            params: usageReport({ conversationId: conversation.id, sessionId: host.id, turnId, seq: conversation.itemHead(host.id) }, resolvedModel, lastCall, turnTotal, runtime.prices(resolvedModel.name)),
          }),
        ...(runtime.logger ? { logger: runtime.logger } : {}),
        ...(options.reasoningEffort ? { reasoningEffort: options.reasoningEffort } : {}),
        modelRetrying: (retry) => conversation.publish({ method: 'turn/retrying', params: { conversationId: conversation.id, sessionId: host.id, turnId, ...retry } }),
      };
      // MCP servers start on the first turn; ones that failed are tried again on each turn.
      if (options.work !== 'compact') {
        await mcp.prepare(context.signal);
        // Said to the clients, not only logged: the model silently lacking a server's tools looks like a model problem.
        for (const server of mcp.servers) {
          if (server.state !== 'failed' || context.signal.aborted) continue;
          conversation.publish({ method: 'turn/warning', params: { conversationId: conversation.id, sessionId: host.id, turnId, source: 'mcp_server', name: server.name, message: `MCP server "${server.name}" could not be started: ${server.failure ?? 'unknown reason'}; its tools are not offered this turn (it is tried again at the next one)` } });
        }
      }
      return options.work === 'compact' ? runCompaction(environment) : runAgent(environment);
    },
  };
}

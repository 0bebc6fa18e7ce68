/**
 * Handlers of the agent methods (`agents/list`, `session/setAgent`; SPEC §5): what clients
 * learn of `agents.yaml`, and changing a session's agent.
 */
import type { AgentDefinition } from '../../config/agents.js';
import { ErrorCodes, RpcError, type AgentInfo } from '../../protocol/index.js';
import type { MethodHandlers } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';
import { confineAgent } from './project-confinement.js';

/** How `agents/list` describes one definition of `agents.yaml`. */
export function describeAgent(name: string, definition: AgentDefinition, isDefault: boolean): AgentInfo {
  return {
    name,
    ...(definition.description !== undefined ? { description: definition.description } : {}),
    ...(definition.model !== undefined ? { model: definition.model } : {}),
    hasInstructions: (definition.instructions ?? '').trim() !== '',
    ...(definition.maxSteps !== undefined ? { maxSteps: definition.maxSteps } : {}),
    approvals: {
      default: definition.approvals?.default ?? 'allow',
      rules: (definition.approvals?.rules ?? []).map((rule) => ({ tool: rule.tool, decision: rule.decision, ...(rule.match ? { match: rule.match } : {}) })),
    },
    default: isDefault,
  };
}

/**
 * Builds the agent handlers bound to one connection (spread into `createMethodHandlers`).
 * `session/setAgent` refuses an agent `agents.yaml` does not define with `invalidParams` naming
 * `params.agent` and the defined agents, an unknown session with `notFound`, and an agent the
 * caller may not run in the conversation's project with `forbidden` (`confineAgent`).
 */
export function createAgentHandlers(connection: RpcConnection): Pick<MethodHandlers, 'agents/list' | 'session/setAgent'> {
  const runtime = connection.runtime;
  return {
    async 'agents/list'() {
      const defaultAgent = runtime.defaultAgent;
      const agents = Object.entries(runtime.agentDefinitions).map(([name, definition]) => describeAgent(name, definition, name === defaultAgent));
      return { agents, defaultAgent };
    },

    async 'session/setAgent'(params) {
      const conversation = await runtime.getConversation(params.conversationId);
      const id = params.sessionId ?? conversation.state.rootSessionId;
      const session = conversation.sessions.get(id);
      if (!session) throw new RpcError(ErrorCodes.notFound, `session/setAgent: params.sessionId: session "${id}" is not part of conversation ${conversation.id}`);
      const definition = runtime.agentDefinitions[params.agent];
      if (!definition) {
        throw new RpcError(ErrorCodes.invalidParams, `session/setAgent: params.agent: agent "${params.agent}" is not defined in agents.yaml (defined: ${Object.keys(runtime.agentDefinitions).join(', ')})`);
      }
      // The agent's model is resolved now, so an agent naming a provider that is not configured is refused before anything changes.
      if (definition.model !== undefined) {
        try {
          runtime.models.resolve(definition.model);
        } catch (error) {
          throw new RpcError(ErrorCodes.invalidParams, `session/setAgent: params.agent: agent "${params.agent}" cannot run: ${(error as Error).message}`);
        }
      }
      // A member may not pick an agent that would run outside the project's sandbox or machine.
      const projectId = connection.platform?.projects.projectOf(conversation.id);
      const project = projectId !== undefined ? connection.platform?.projects.find(projectId) : undefined;
      if (project) confineAgent(connection, 'session/setAgent', 'params.agent', project, params.agent, conversation.workspaces.map((workspace) => workspace.executor));
      const deferred = session.isRunning;
      return { session: await session.setAgent(params.agent, definition.model), deferred };
    },
  };
}

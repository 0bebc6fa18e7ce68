/**
 * Agents in the runtime protocol (SPEC §5 `agents/list`, `session/setAgent`): what clients
 * learn of the agents defined in `agents.yaml`, and how a session changes its agent.
 */
import { z } from 'zod';
import { ApprovalPolicyInfoSchema } from './conversation-context.js';
import { SessionSchema } from './entities.js';

const idParam = (prefix: string, what: string) =>
  z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`), { message: `not a ${what} id (expected ${prefix}_ followed by letters and digits)` });

/** One agent of `agents.yaml`, as `agents/list` describes it. */
export const AgentInfoSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  /** `provider/model` the agent runs on; absent = the configured default model. */
  model: z.string().optional(),
  /** True when the agent has instructions of its own (added to the system prompt). */
  hasInstructions: z.boolean(),
  /** Model calls allowed in one turn, when the agent sets it. */
  maxSteps: z.number().int().positive().optional(),
  /** The agent's approval policy (an agent without one allows every call). */
  approvals: ApprovalPolicyInfoSchema,
  /** True for the agent used when none is named. */
  default: z.boolean(),
});
/** One agent of `agents.yaml`, as `agents/list` describes it. */
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

/** The agent methods, spread into `methods`. */
export const agentMethods = {
  /** The agents of `agents.yaml` in file order, and the default agent's name. */
  'agents/list': {
    params: z.object({}),
    result: z.object({ agents: z.array(AgentInfoSchema), defaultAgent: z.string() }),
  },
  /**
   * Changes a session's agent (and its model, when the agent names one) from the session's next
   * turn on; the change is recorded as an `agent_change` item when that turn starts. A running
   * turn finishes with the agent it started with (`deferred: true`).
   */
  'session/setAgent': {
    params: z.object({ conversationId: idParam('conv', 'conversation'), sessionId: idParam('sess', 'session').optional(), agent: z.string().min(1) }),
    result: z.object({
      session: SessionSchema,
      /** True when a turn is running: it keeps its agent, the new one applies from the next turn. */
      deferred: z.boolean(),
    }),
  },
} as const;

/**
 * A session's modes and configuration options in the Agent Client Protocol
 * (https://agentclientprotocol.com/protocol/v1/session-modes and
 * https://agentclientprotocol.com/protocol/v1/session-config-options): the agents of
 * `agents.yaml` are the modes (`agents/list`, `session/setAgent`); the model (`models/list`,
 * `session/setModel`) and the reasoning effort of the next turns are the options.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { RuntimeClient } from '../../client/runtime-client.js';
import { ReasoningEffortSchema, type ReasoningEffort, type Session } from '../../protocol/index.js';

/** Id of the model option. */
export const MODEL_OPTION = 'model';
/** Id of the reasoning effort option. */
export const EFFORT_OPTION = 'reasoning_effort';
/** The effort value meaning "as the model is configured" (no `reasoningEffort` sent). */
export const DEFAULT_EFFORT = 'default';

/** A session's modes and options, as `session/new`, `session/load` and `session/resume` answer them. */
export interface SessionSettings {
  modes: acp.SessionModeState;
  configOptions: acp.SessionConfigOption[];
}

/**
 * Reads the agents and models from the server and describes the session's settings.
 * @param effort the effort this connection chose for the session's next turns; absent = the model's default
 */
export async function sessionSettings(client: RuntimeClient, session: Session, effort: ReasoningEffort | undefined): Promise<SessionSettings> {
  const [{ agents }, { models }] = await Promise.all([client.request('agents/list', {}), client.request('models/list', {})]);
  const modes: acp.SessionModeState = {
    currentModeId: session.agent,
    availableModes: agents.map((agent) => ({ id: agent.name, name: agent.name, ...(agent.description ? { description: agent.description } : {}) })),
  };
  // A session may run on a model the catalog no longer lists; it stays selectable.
  const modelOptions = models.map((model) => ({ value: model.id, name: model.displayName, description: model.id }));
  if (!models.some((model) => model.id === session.model)) modelOptions.unshift({ value: session.model, name: session.model, description: session.model });
  const configOptions: acp.SessionConfigOption[] = [{ id: MODEL_OPTION, name: 'Model', category: 'model', type: 'select', currentValue: session.model, options: modelOptions }];
  const efforts = models.find((model) => model.id === session.model)?.reasoningEfforts ?? [];
  if (efforts.length > 0) {
    configOptions.push({
      id: EFFORT_OPTION,
      name: 'Reasoning effort',
      category: 'thought_level',
      type: 'select',
      currentValue: effort !== undefined && efforts.includes(effort) ? effort : DEFAULT_EFFORT,
      options: [{ value: DEFAULT_EFFORT, name: 'Model default' }, ...efforts.map((value) => ({ value, name: value }))],
    });
  }
  return { modes, configOptions };
}

/**
 * Reads a reasoning effort option value.
 * @returns the effort, or undefined for `default`
 * @throws Error naming the value when it is not an effort
 */
export function parseEffort(value: string): ReasoningEffort | undefined {
  if (value === DEFAULT_EFFORT) return undefined;
  const parsed = ReasoningEffortSchema.safeParse(value);
  if (!parsed.success) throw new Error(`session/set_config_option: value "${value}" is not a reasoning effort (${[DEFAULT_EFFORT, ...ReasoningEffortSchema.options].join(', ')})`);
  return parsed.data;
}

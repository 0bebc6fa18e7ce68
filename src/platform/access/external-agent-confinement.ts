/**
 * Which agents a caller held to projects may run (docs/platform.md, "Where members work",
 * "External agents"). An external agent (`kind: acp`, `kind: codex-app-server`) is a program
 * the server starts on its own machine, as its own user, in the conversation's directory:
 * neither the bubblewrap sandbox of a `sandbox: bwrap` executor nor the other machine of an
 * `ssh` executor holds it. In a project that works on such an executor, a member who could run
 * one would step out of what the project's executor confines, with the server's account. So
 * there, external agents are for administrators only; on a plain `local` executor every
 * command already runs as the server's user, and nothing more is given away.
 */
import { isExternalAgent, type AgentDefinition } from '../../config/agents.js';
import type { Executor } from '../../executors/executor.js';
import { confinedToProjects } from './workspace-confinement.js';
import type { Caller } from '../caller.js';

/**
 * Whether `executor` keeps its commands from the server's machine as the server's user sees
 * it: a sandboxed local executor (`sandbox: bwrap`), or an executor elsewhere (`ssh`, `virtual`).
 */
export function confinesCommands(executor: Executor): boolean {
  return executor.kind !== 'local' || (executor as { sandbox?: unknown }).sandbox !== undefined;
}

/** How a confining executor is named in a refusal. */
function describeConfinement(executor: Executor): string {
  return executor.kind === 'local' ? `the bubblewrap sandbox of executor "${executor.name}" (sandbox: bwrap)` : `executor "${executor.name}" (${executor.kind}, away from the server's machine)`;
}

/**
 * Why `agent` may not run for a project whose work happens on `executors`, whoever asks: an
 * external agent would run unsandboxed on the server's machine while one of them confines its
 * commands. The rule behind {@link externalAgentRefusal}, also applied on its own where no
 * administrator chose the agent (a subagent the model starts).
 * @param agent the agent's name in `agents.yaml`
 * @param definition its definition; undefined (not defined) is not refused here
 * @param executors the project's executor and those of the conversation's work location
 * @param projectId the project, named in the reason
 * @returns the reason, or undefined when the agent may run
 */
export function unsandboxedAgentRefusal(agent: string, definition: AgentDefinition | undefined, executors: readonly Executor[], projectId: string): string | undefined {
  if (definition === undefined || !isExternalAgent(definition)) return undefined;
  const confining = executors.find(confinesCommands);
  if (confining === undefined) return undefined;
  return (
    `agent "${agent}" (kind ${definition.kind}) is a program the server runs on its own machine as its own user, outside ${describeConfinement(confining)} ` +
    `that project ${projectId} works on; only administrators may use it there; choose an agent of kind openvaala (agents/list)`
  );
}

/**
 * Why `caller` may not run `agent` in a project conversation (see {@link unsandboxedAgentRefusal});
 * never refused to the local owner and administrators, who hold the server's account anyway.
 * @returns the reason, or undefined when the caller may run it
 */
export function externalAgentRefusal(caller: Caller, agent: string, definition: AgentDefinition | undefined, executors: readonly Executor[], projectId: string): string | undefined {
  if (!confinedToProjects(caller)) return undefined;
  return unsandboxedAgentRefusal(agent, definition, executors, projectId);
}

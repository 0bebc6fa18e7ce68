/**
 * How a finished `tool_call` item ended, as clients show it. `isError` says whether the tool
 * itself failed (what the model reads as an error: a refusal, a denied approval, a timeout, an
 * MCP tool error, a patch that did not apply); a command that ran and exited non-zero, or was
 * killed by a signal, is a normal result for the model (`isError: false`) but a failed call
 * for a reader, told by `exitCode` and the `command` details. Likewise a collaboration call
 * that waited for a subagent whose turn failed is a normal result for the model (it reads the
 * status) but a failed call for a reader, told by the `subagent` details' `states` (as Codex
 * marks a wait on an errored agent failed). Every client decides it here.
 */
import type { Item } from './items.js';

type ToolCallItem = Extract<Item, { kind: 'tool_call' }>;

/** How a finished tool call ended, for display. */
export interface ToolCallOutcome {
  /** `succeeded`, `failed` (tool error, refusal, non-zero exit, signal, timeout) or `interrupted` (the turn was interrupted). */
  state: 'succeeded' | 'failed' | 'interrupted';
  /**
   * What to say after the mark, when anything: `exit 127`, `killed by SIGKILL`, `timed out`,
   * `subagent failed` / `2 of 3 subagents failed`, joined by `, ` (`exit 0` for a command
   * that succeeded). Empty when there is nothing to add.
   */
  detail: string;
}

/** Tools whose call succeeds when the command they act on ended badly (stopping it is their purpose). */
const STOPPING_TOOLS = new Set(['kill_command']);

/**
 * How a finished tool call ended: interrupted when its item says so, failed when the tool
 * failed (`isError`, status `failed`), the command it ran (or read the end of) exited
 * non-zero or was killed by a signal, or a subagent it acted on had failed, else succeeded.
 */
export function toolCallOutcome(item: ToolCallItem): ToolCallOutcome {
  const details = item.details?.kind === 'command' ? item.details : undefined;
  const exitCode = item.exitCode ?? details?.exitCode ?? null;
  const signal = details?.signal ?? null;
  const structured = item.structured as { timedOut?: unknown } | undefined;
  const timedOut = structured?.timedOut === true;
  const parts: string[] = [];
  if (exitCode !== null) parts.push(`exit ${exitCode}`);
  else if (signal !== null && !timedOut) parts.push(`killed by ${signal}`);
  if (timedOut) parts.push('timed out');
  const agents = item.details?.kind === 'subagent' ? (item.details.states ?? []) : [];
  const failedAgents = agents.filter((agent) => agent.status === 'failed').length;
  if (failedAgents > 0) parts.push(agents.length === 1 ? 'subagent failed' : `${failedAgents} of ${agents.length} subagents failed`);
  const detail = parts.join(', ');
  if (item.status === 'interrupted') return { state: 'interrupted', detail };
  const commandFailed = !STOPPING_TOOLS.has(item.toolName) && ((exitCode !== null && exitCode !== 0) || signal !== null);
  const failed = item.isError || item.status === 'failed' || timedOut || commandFailed || failedAgents > 0;
  return { state: failed ? 'failed' : 'succeeded', detail };
}

/**
 * The points where the agent loop calls out during a turn (SPEC §6): around each tool call
 * (`pre_tool_use`, `post_tool_use`), after the results of a step are recorded, when the model
 * stops (`stop`) and before a compaction (`pre_compact`). The loop only sees `AgentHooks`;
 * `createAgentHooks` backs it with the configured hooks.
 */
import type { Workspace } from '../../executors/workspace.js';
import type { ToolResult } from '../../tools/tool.js';
import type { RequestedToolCall } from '../model-call.js';
import type { HookRunContext, HookRunner } from './hook-runner.js';

/** What `pre_tool_use` hooks decided about one call. */
export interface ToolCallGate {
  /** Set when the call must not run: why (the model reads it as the call's result). */
  refusal?: string;
  /** The arguments to run the tool with (the model's, or a hook's `updatedArguments`). */
  arguments: unknown;
  /** `allow` skips asking a person; `ask` asks even where the approval policy allows. */
  permission?: 'allow' | 'ask';
  /** Context the hooks added, appended to the call's result. */
  context: string[];
}

/** What the agent loop calls during a turn. Every method records what it did as items. */
export interface AgentHooks {
  /** Runs `pre_tool_use` hooks for a call about to run on `workspace`. */
  beforeToolCall(call: RequestedToolCall, workspace: Workspace): Promise<ToolCallGate>;
  /** Runs `post_tool_use` hooks after a call ran; returns the result with their context appended. */
  afterToolCall(call: RequestedToolCall, gate: ToolCallGate, result: ToolResult, workspace: Workspace): Promise<ToolResult>;
  /** Called once the step's tool results are recorded (records instructions that must follow them, e.g. loaded skills). */
  afterToolCalls(): Promise<void>;
  /**
   * Runs `stop` hooks when the model answered without tool calls.
   * @param stopHookActive true when a stop hook already made this turn go on
   * @returns true when a hook blocked the stop: its reason was recorded and the loop goes on
   */
  beforeStop(stopHookActive: boolean): Promise<boolean>;
  /** Runs `pre_compact` hooks before the summary request; their context is recorded so the summary sees it. */
  beforeCompaction(trigger: 'auto' | 'manual'): Promise<void>;
}

/** What `createAgentHooks` needs from the session. */
export interface AgentHooksOptions {
  runner: HookRunner;
  /** The run context for events that are not about a tool call (on the conversation's first executor). */
  context: HookRunContext;
  /** Records an `instruction` item (source `agent`, name `hook:<event>`) holding hook output for the model. */
  recordInstruction(name: string, body: string): Promise<void>;
  /** Called after the step's tool results are recorded. */
  afterToolCalls?: () => Promise<void>;
}

function appendContext(result: ToolResult, additions: { event: string; text: string }[]): ToolResult {
  if (additions.length === 0) return result;
  const text = additions.map((addition) => `[${addition.event} hook]\n${addition.text}`).join('\n\n');
  return { ...result, output: `${result.output}${result.output.endsWith('\n') ? '\n' : '\n\n'}${text}` };
}

/** Builds the agent loop's hooks from the configured hooks. */
export function createAgentHooks(options: AgentHooksOptions): AgentHooks {
  const { runner, context } = options;
  const onWorkspace = (workspace: Workspace): HookRunContext => ({ ...context, workspace });
  const recordContext = async (event: string, texts: string[]): Promise<void> => {
    for (const text of texts) await options.recordInstruction(`hook:${event}`, text);
  };
  return {
    async beforeToolCall(call, workspace) {
      const outcome = await runner.run('pre_tool_use', onWorkspace(workspace), { toolName: call.toolName, callId: call.callId, arguments: call.arguments });
      return {
        ...(outcome.block !== undefined ? { refusal: `blocked by a pre_tool_use hook: ${outcome.block}` } : {}),
        arguments: outcome.updatedArguments ?? call.arguments,
        ...(outcome.permission ? { permission: outcome.permission } : {}),
        context: outcome.additionalContext,
      };
    },
    async afterToolCall(call, gate, result, workspace) {
      const outcome = await runner.run('post_tool_use', onWorkspace(workspace), {
        toolName: call.toolName,
        callId: call.callId,
        arguments: gate.arguments,
        result: { output: result.output, isError: result.isError, ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}) },
      });
      return appendContext(result, [
        ...gate.context.map((text) => ({ event: 'pre_tool_use', text })),
        ...outcome.additionalContext.map((text) => ({ event: 'post_tool_use', text })),
        ...(outcome.block !== undefined ? [{ event: 'post_tool_use', text: outcome.block }] : []),
      ]);
    },
    async afterToolCalls() {
      await options.afterToolCalls?.();
    },
    async beforeStop(stopHookActive) {
      const outcome = await runner.run('stop', context, { stopHookActive });
      await recordContext('stop', outcome.additionalContext);
      if (outcome.block === undefined) return false;
      await options.recordInstruction('hook:stop', `A stop hook asks you to go on before ending your turn:\n${outcome.block}`);
      return true;
    },
    async beforeCompaction(trigger) {
      const outcome = await runner.run('pre_compact', context, { trigger });
      await recordContext('pre_compact', outcome.additionalContext);
    },
  };
}

/**
 * The agent loop inside a turn (SPEC §3, §6): build the request from the items → call the
 * model (streaming) → run the requested tools (concurrently) → record the results → repeat
 * until the model stops. Steering input is read before each model call.
 */
import { newId } from '../ids.js';
import type { Item, ItemDelta, ItemOf, ReasoningEffort, TokenUsage, ToolDetails, TurnStatus, TurnStopReason } from '../protocol/index.js';
import { reasoningText } from './reasoning-parts.js';
import type { Logger } from '../logger.js';
import type { ResolvedModel } from '../models/model-registry.js';
import type { Tool, ToolContext, ToolResult, UserAnswer, UserQuestion } from '../tools/tool.js';
import { compactHistory, contextDoesNotFitMessage, measureKeptContext, type ContextMeter, type ContextPart } from './compaction.js';
import type { AgentHooks, ToolCallGate } from './hooks/agent-hooks.js';
import { buildModelMessages } from './context-builder.js';
import { callModel, ModelCallError, toModelTools, type ModelCallResult, type RequestedToolCall, type RetryPolicy } from './model-call.js';
import { workspaceForCall } from './tool-routing.js';
import { originOf, type SteeringInput } from './input-queue.js';
import { addUsage } from './usage.js';
import { StreamedAnswer } from './streamed-answer.js';
import { unknownNameHint } from '../similar-names.js';

/** A model call about to be retried (announced to clients as `turn/retrying`). */
export interface ModelRetry {
  /** The retry about to be made, from 1. */
  attempt: number;
  maxRetries: number;
  /** Wait before it, ms. */
  delayMs: number;
  /** HTTP status of the failure; null for a connection failure. */
  httpStatus: number | null;
  /** The provider's message. */
  message: string;
}

/** What the loop needs from the session running it. */
export interface AgentEnvironment {
  model: ResolvedModel;
  /**
   * The tools offered to the model, read before every model call: the list may change during a
   * turn (an MCP server's tool list changed). A new array means a changed list.
   */
  tools: Tool[];
  /** Finds a tool the list does not hold (an MCP server that is not running), so its call can say why. */
  resolveTool?(name: string): Tool | undefined;
  /** System instructions sent with every request. */
  system: string;
  /** Workspace of the conversation's default executor. */
  workspace: ToolContext['workspace'];
  /** The session's background commands, handed to tools; absent = tools cannot start any. */
  commands?: ToolContext['commands'];
  /** Aborted when the turn is interrupted. */
  signal: AbortSignal;
  /** Model calls allowed in one turn. */
  maxSteps: number;
  retryPolicy: RetryPolicy;
  /** Cap on one tool result's text as the model reads it, in bytes (applied when requests are built). */
  toolOutputLimitBytes: number;
  /** Reads an uploaded attachment of the conversation (see `ModelMessageOptions.readAttachment`). */
  readAttachment?: (attachmentId: string) => Uint8Array | undefined;
  /** Compact when the estimated request exceeds this fraction of the context window (0–1). */
  compactionThreshold: number;
  /** The session's meter of context size, kept across turns. */
  contextMeter: ContextMeter;
  sessionId: string;
  turnId: string;
  /** Every item of the session so far, oldest first (including this turn's). */
  history(): Item[];
  /**
   * Decides whether a tool call may run (approval policy; may wait for a person).
   * `hookPermission` is a `pre_tool_use` hook's decision: `allow` skips asking, `ask` asks even where the policy allows.
   * `executor` names the executor the call is routed to (shown in the approval request).
   * `shown.sideEffects` is the tool's `sideEffects` (false: only rules naming the tool gate it).
   */
  authorize(call: RequestedToolCall, hookPermission: 'allow' | 'ask' | undefined, executor: string | undefined, shown: { itemId: string; details?: ToolDetails; sideEffects?: boolean }): Promise<{ allowed: boolean; message?: string }>;
  /** Text files served by a client on the local executor's machine (an editor); given to calls routed to a `local` executor. */
  clientFiles?: ToolContext['clientFiles'];
  /** Commands run by a client on the local executor's machine (an editor's terminal), for the call `itemId`; given to calls routed to an unsandboxed `local` executor. */
  clientCommands?(itemId: string): NonNullable<ToolContext['clientCommands']>;
  /** Asks the user a question for a tool call (`request_user_input`); absent = nobody can be asked. */
  askUser?(question: UserQuestion, call: { callId: string; itemId: string }): Promise<UserAnswer>;
  /** Hooks around tool calls, the stop and compaction (`hooks.yaml`), and skill loading; absent = none. */
  hooks?: AgentHooks;
  /** Removes and returns steering inputs received since the last call. */
  takeSteering(): SteeringInput[];
  /**
   * Hands one steering input to the turn as a user's prompt is handed to a new one (its
   * `user_prompt_submit` hooks, then `recordMessage`, then what the hooks and `$skill`
   * mentions add); a refused one is not recorded. Absent: recorded as it is.
   */
  submitSteering?(input: SteeringInput, recordMessage: () => Promise<void>): Promise<void>;
  /** Persists a completed item and tells clients (`item/completed`). */
  record(item: Item): Promise<void>;
  /** Tells clients an item began (`item/started`). */
  itemStarted(itemId: string, kind: Item['kind'], partial: Record<string, unknown>): void;
  /** Streams progress of an item in progress (`item/delta`). */
  itemDelta(itemId: string, delta: ItemDelta): void;
  /** The turn's reasoning effort, over the model's configured one (`session/input` `reasoningEffort`); absent = configured. */
  reasoningEffort?: ReasoningEffort;
  /** The server log, for details a person at a terminal should not be shown (a provider's full validation report); absent = not logged. */
  logger?: Pick<Logger, 'warn'>;
  /** Announces that a failed model call will be retried after `delayMs` (optional). */
  modelRetrying?(retry: ModelRetry): void;
  /** Told after every model call that returned: that call's usage and the turn's total so far (optional). */
  modelCallCompleted?(lastCall: TokenUsage, turnTotal: TokenUsage): void;
}

/** How the loop ended. */
export interface AgentOutcome {
  status: Exclude<TurnStatus, 'running'>;
  steps: number;
  usage: TokenUsage;
  /** Why it ended; `user_interrupt` for any abort (the session tells a shutdown apart). */
  stopReason: TurnStopReason;
  error?: string;
}

/**
 * The stop reason of a model answer that ended the turn, from the AI SDK's finish reason:
 * `length` (the output token limit) → `max_tokens`, `content-filter` → `refusal`, anything
 * else → `end_turn`.
 */
export function stopReasonOfFinish(finishReason: string): TurnStopReason {
  if (finishReason === 'length') return 'max_tokens';
  if (finishReason === 'content-filter') return 'refusal';
  return 'end_turn';
}

function totalTokens(parts: ContextPart[]): number {
  return parts.reduce((sum, part) => sum + part.tokens, 0);
}

function contextDoesNotFit(environment: AgentEnvironment, parts: ContextPart[], afterCompaction: boolean, reportedTokens?: number): ModelCallError {
  return new ModelCallError(contextDoesNotFitMessage(parts, environment.compactionThreshold, environment.model, afterCompaction, reportedTokens), null, false, undefined, 0, 'context_overflow');
}

/** The empty usage. */
export const ZERO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

class ItemFactory {
  constructor(private readonly environment: AgentEnvironment) {}
  base(id = newId('item'), createdAt = Date.now()) {
    return { id, sessionId: this.environment.sessionId, turnId: this.environment.turnId, createdAt, completedAt: Date.now() };
  }
}

/**
 * Runs tool calls concurrently and records their items in the order the model requested
 * them (SPEC §3), each as soon as it and every call before it have finished.
 */
async function runToolCalls(environment: AgentEnvironment, calls: RequestedToolCall[], items: ItemFactory): Promise<void> {
  const toolsByName = new Map(environment.tools.map((tool) => [tool.name, tool]));
  let previousAnnouncement = Promise.resolve();
  const executions = calls.map((call) => {
    const itemId = newId('item');
    const createdAt = Date.now();
    const tool = toolsByName.get(call.toolName) ?? environment.resolveTool?.(call.toolName);
    // Where the call runs: the executor its arguments route it to (the hooks may re-route it).
    let workspace = workspaceForCall(tool, call.arguments, environment.workspace);
    const started = performance.now();
    // What the call will do (command and cwd, diffs) goes out with item/started and is replaced
    // by the result's details at completion. Calls are described concurrently but announced in
    // the order the model requested them.
    let details: ToolDetails | undefined;
    // A client serving files is on the server's machine: only local calls go through it.
    const clientFiles = (routed: typeof workspace) => (environment.clientFiles && routed?.executor.kind === 'local' ? { clientFiles: environment.clientFiles } : {});
    // Nor does a sandboxed one: the client's terminal would run the command outside the sandbox.
    const clientCommands = (routed: typeof workspace) =>
      environment.clientCommands && routed?.executor.kind === 'local' && (routed.executor as { sandbox?: unknown }).sandbox === undefined ? { clientCommands: environment.clientCommands(itemId) } : {};
    const description = workspace ? tool?.describe?.(call.arguments, { workspace: environment.workspace, ...clientFiles(workspace) }) : undefined;
    const announced = previousAnnouncement.then(async () => {
      details = await description;
      environment.itemStarted(itemId, 'tool_call', { callId: call.callId, toolName: call.toolName, arguments: call.arguments, ...(workspace ? { executor: workspace.executor.name } : {}), ...(details ? { details } : {}) });
    });
    previousAnnouncement = announced;
    // The arguments that ran: the model's, unless a pre_tool_use hook replaced them.
    let gate: ToolCallGate = { arguments: call.arguments, context: [] };
    const work = async (): Promise<ToolResult> => {
      await announced;
      if (!tool) return { output: `unknown tool "${call.toolName}"${unknownNameHint(call.toolName, [...toolsByName.keys()])}; available: ${[...toolsByName.keys()].join(', ')}`, isError: true };
      // pre_tool_use hooks run first: they may refuse the call, replace its arguments or decide on approval.
      gate = (await environment.hooks?.beforeToolCall(call, workspace ?? environment.workspace)) ?? gate;
      if (gate.refusal !== undefined) return { output: `${call.toolName}: not run: ${gate.refusal}`, isError: true };
      const effectiveCall = { ...call, arguments: gate.arguments };
      workspace = workspaceForCall(tool, effectiveCall.arguments, environment.workspace);
      if (gate.arguments !== call.arguments && workspace) details = await tool.describe?.(gate.arguments, { workspace: environment.workspace, ...clientFiles(workspace) });
      const askUser = environment.askUser?.bind(environment);
      const toolContext: ToolContext = {
        workspace: environment.workspace,
        signal: environment.signal,
        onOutput: (chunk) => environment.itemDelta(itemId, { output: chunk }),
        ...(environment.commands ? { commands: environment.commands } : {}),
        ...(askUser ? { askUser: (question) => askUser(question, { callId: call.callId, itemId }) } : {}),
        ...clientFiles(workspace),
        ...clientCommands(workspace),
      };
      // A call naming an executor outside the work location fails in the tool without running: nothing to approve.
      if (!workspace) return tool.invoke(effectiveCall.arguments, toolContext);
      let permission: { allowed: boolean; message?: string };
      try {
        permission = await environment.authorize(effectiveCall, gate.permission, workspace?.executor.name, { itemId, ...(details ? { details } : {}), ...(tool.sideEffects !== undefined ? { sideEffects: tool.sideEffects } : {}) });
      } catch {
        return { output: `${call.toolName}: not run: the turn was interrupted while waiting for approval`, isError: true };
      }
      if (!permission.allowed) return { output: `${call.toolName}: not run: ${permission.message ?? 'denied'}`, isError: true };
      const result = await tool.invoke(effectiveCall.arguments, toolContext);
      return environment.hooks ? environment.hooks.afterToolCall(effectiveCall, gate, result, workspace) : result;
    };
    // The output is stored as the tool gave it (bounded by defineTool); the model's cap and
    // cleaning are applied when requests are built (`buildModelMessages`).
    return work().then((result): ItemOf<'tool_call'> => ({
      ...items.base(itemId, createdAt),
      completedAt: Date.now(),
      kind: 'tool_call',
      status: environment.signal.aborted ? 'interrupted' : result.isError ? 'failed' : 'completed',
      callId: call.callId,
      toolName: call.toolName,
      arguments: gate.arguments,
      ...(workspace ? { executor: workspace.executor.name } : {}),
      output: result.output,
      isError: result.isError,
      ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
      ...(result.structured ? { structured: result.structured } : {}),
      ...((result.details ?? details) ? { details: result.details ?? details } : {}),
      durationMs: Math.round(performance.now() - started),
      ...(call.providerMetadata ? { providerData: { model: environment.model.name, metadata: call.providerMetadata } } : {}),
    }));
  });
  for (const execution of executions) {
    await environment.record(await execution);
  }
}

/**
 * A turn that only compacts the session (manual compaction, `session/compact`).
 * Never rejects: a failed summary call is recorded as a `model_error` item.
 */
export async function runCompaction(environment: AgentEnvironment): Promise<AgentOutcome> {
  const items = new ItemFactory(environment);
  try {
    const usage = await compactHistory(environment, 'manual');
    environment.contextMeter.reset();
    environment.modelCallCompleted?.(usage, usage);
    return { status: 'completed', steps: 1, usage, stopReason: 'end_turn' };
  } catch (error) {
    return recordFailure(environment, items, error, 1, ZERO_USAGE);
  }
}

/** Records a model failure as a `model_error` item and ends the turn `failed`. */
async function recordFailure(environment: AgentEnvironment, items: ItemFactory, error: unknown, steps: number, usage: TokenUsage): Promise<AgentOutcome> {
  if (environment.signal.aborted) return { status: 'interrupted', steps, usage, stopReason: 'user_interrupt' };
  const failure = error instanceof ModelCallError ? error : new ModelCallError((error as Error).message, null, false, undefined);
  if (failure.detail) {
    environment.logger?.warn({ sessionId: environment.sessionId, turnId: environment.turnId, model: environment.model.name, kind: failure.kind, detail: failure.detail }, failure.message);
  }
  await environment.record({
    ...items.base(),
    kind: 'model_error',
    status: 'failed',
    provider: environment.model.providerName,
    model: environment.model.name,
    httpStatus: failure.httpStatus,
    message: failure.message,
    retries: failure.retries,
  });
  return { status: 'failed', steps, usage, stopReason: 'model_error', error: failure.message };
}

/**
 * Runs the loop until the model answers without tool calls, the step limit is reached, the
 * model fails after its retries, or the turn is interrupted. Every outcome is recorded as
 * items before this resolves; it never rejects for model or tool failures.
 */
export async function runAgent(environment: AgentEnvironment): Promise<AgentOutcome> {
  const items = new ItemFactory(environment);
  let toolList = environment.tools;
  let tools = toModelTools(toolList);
  let usage = ZERO_USAGE;
  let steps = 0;
  let stopHookActive = false;

  while (true) {
    for (const input of environment.takeSteering()) {
      const recordMessage = () => environment.record({ ...items.base(), kind: 'user_message', status: 'completed', content: input.content, mode: 'steer', inputId: input.id, ...originOf(input) });
      await (environment.submitSteering ? environment.submitSteering(input, recordMessage) : recordMessage());
    }
    if (steps >= environment.maxSteps) {
      await environment.record({ ...items.base(), kind: 'interruption', status: 'completed', reason: 'limit', message: `stopped after ${steps} model calls (maxSteps)` });
      return { status: 'interrupted', steps, usage, stopReason: 'step_limit', error: `step limit of ${environment.maxSteps} reached` };
    }
    const toMessages = (list: Item[]) => buildModelMessages(list, { model: environment.model.name, toolOutputLimitBytes: environment.toolOutputLimitBytes, readAttachment: environment.readAttachment });
    const estimate = environment.contextMeter.estimate(environment.history(), environment.system, toMessages);
    const nothingNewToCompact = environment.history().at(-1)?.kind === 'context_summary';
    if (environment.tools !== toolList) {
      toolList = environment.tools;
      tools = toModelTools(toolList);
    }
    const limit = environment.compactionThreshold * environment.model.contextWindow;
    if (!nothingNewToCompact && estimate > limit) {
      // Compaction only shrinks what came between the instructions and the latest request: when
      // the rest is already too large, summarising again and again cannot help.
      const kept = measureKeptContext(environment.history(), environment.system, toolList);
      if (totalTokens(kept) > limit) return recordFailure(environment, items, contextDoesNotFit(environment, kept, false), steps, usage);
      // The estimate said a compaction would help, but the provider counted the first request after the last one over the threshold.
      const reportedAfter = environment.contextMeter.inputTokensAfterCompaction;
      if (reportedAfter !== undefined && reportedAfter > limit) {
        const parts = measureKeptContext(environment.history(), environment.system, toolList, true);
        return recordFailure(environment, items, contextDoesNotFit(environment, parts, true, reportedAfter), steps, usage);
      }
      try {
        const compactionUsage = await compactHistory(environment);
        usage = addUsage(usage, compactionUsage);
        environment.modelCallCompleted?.(compactionUsage, usage);
        environment.contextMeter.reset();
      } catch (error) {
        return recordFailure(environment, items, error, steps, usage);
      }
      const afterCompaction = measureKeptContext(environment.history(), environment.system, toolList, true);
      if (totalTokens(afterCompaction) > limit) return recordFailure(environment, items, contextDoesNotFit(environment, afterCompaction, true), steps, usage);
    }
    steps++;
    const answer = new StreamedAnswer({ model: environment.model, itemStarted: environment.itemStarted.bind(environment), itemDelta: environment.itemDelta.bind(environment), record: environment.record.bind(environment), base: (id, createdAt) => items.base(id, createdAt) });
    let result: ModelCallResult;
    try {
      result = await callModel(
        environment.model,
        { system: environment.system, messages: toMessages(environment.history()), tools, ...(environment.reasoningEffort ? { reasoningEffort: environment.reasoningEffort } : {}) },
        environment.signal,
        {
          onTextDelta: answer.onTextDelta,
          onReasoningDelta: answer.onReasoningDelta,
          // An attempt that broke off: what it streamed stays, ended as cut off, before the retry (or the failure) is told.
          onCutOff: () => answer.end('failed'),
          onRetry: (failure, attempt, delayMs) =>
            environment.modelRetrying?.({ attempt, maxRetries: environment.retryPolicy.maxRetries, delayMs, httpStatus: failure.httpStatus, message: failure.message }),
        },
        environment.retryPolicy,
      );
    } catch (error) {
      if (environment.signal.aborted) {
        // What the user already saw stays in the transcript.
        await answer.end('interrupted');
        return { status: 'interrupted', steps, usage, stopReason: 'user_interrupt' };
      }
      return recordFailure(environment, items, error, steps, usage);
    }
    usage = addUsage(usage, result.usage);
    environment.modelCallCompleted?.(result.usage, usage);
    environment.contextMeter.report(result.usage, environment.history().length);
    if (result.reasoningParts.length > 0) {
      // The provider's opaque data (encrypted reasoning, signatures) is kept so the reasoning can be sent back as it came.
      await environment.record({
        ...items.base(answer.reasoningItemId, answer.reasoningCreatedAt),
        kind: 'reasoning',
        status: 'completed',
        ...reasoningText(environment.model.kind, result.reasoningParts),
        model: environment.model.name,
        providerData: { parts: result.reasoningParts },
      });
    }
    if (result.text) {
      await environment.record({ ...items.base(answer.textItemId, answer.textCreatedAt), kind: 'assistant_message', status: 'completed', text: result.text, model: environment.model.name });
    }
    if (result.toolCalls.length === 0) {
      // A stop hook may make the model go on (its reason is recorded for the next request).
      if (environment.hooks && (await environment.hooks.beforeStop(stopHookActive))) {
        stopHookActive = true;
        continue;
      }
      return { status: 'completed', steps, usage, stopReason: stopReasonOfFinish(result.finishReason) };
    }
    await runToolCalls(environment, result.toolCalls, items);
    await environment.hooks?.afterToolCalls();
    if (environment.signal.aborted) return { status: 'interrupted', steps, usage, stopReason: 'user_interrupt' };
  }
}

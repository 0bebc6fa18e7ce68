/**
 * One streaming model call, with retries on transient failures (SPEC §6: retries with backoff
 * on 429/5xx; provider errors keep the provider's message), also when the stream breaks after
 * output was streamed (as Codex retries a dropped stream). OpenAI Responses providers go
 * through the runtime's own client (`src/models/openai-responses/`); the others through the
 * AI SDK, which is imported on the first such call.
 */
import type { ModelMessage, ToolSet } from 'ai';
import { z } from 'zod';
import type { ModelTool } from '../models/openai-responses/request-body.js';
import { responsesRequestBody } from '../models/openai-responses/request-body.js';
import { streamResponse } from '../models/openai-responses/response-stream.js';
import type { ResolvedModel } from '../models/model-registry.js';
import { reasoningProviderOptions } from '../models/reasoning.js';
import type { ReasoningEffort } from '../protocol/index.js';
import type { TokenUsage } from '../protocol/index.js';
import type { Tool } from '../tools/tool.js';
import { ModelCallError, toModelCallError } from '../models/model-errors.js';
import { describeKept, ResponseCollector, type CollectedPart } from './response-collector.js';
import { StreamIdleTimeout } from './stream-idle-timeout.js';

export { ModelCallError, parseRetryAfter, toModelCallError, type ModelFailureKind } from '../models/model-errors.js';

/** A tool call the model asked for. */
export interface RequestedToolCall {
  callId: string;
  toolName: string;
  /** Parsed JSON arguments (or the raw string when it was not valid JSON). */
  arguments: unknown;
  /** Provider data to send back with the call (Gemini's `thoughtSignature`), by provider. */
  providerMetadata?: Record<string, Record<string, unknown>>;
}

/**
 * One block of reasoning as the provider sent it: the readable text plus the provider's
 * metadata (OpenAI item id and encrypted content, Anthropic signature…) needed to send it
 * back unchanged in later requests.
 */
export interface ReasoningPart {
  text: string;
  providerMetadata?: Record<string, Record<string, unknown>>;
}

/** What one model call produced. */
export interface ModelCallResult {
  text: string;
  reasoning: string;
  reasoningParts: ReasoningPart[];
  toolCalls: RequestedToolCall[];
  usage: TokenUsage;
  finishReason: string;
}

export type { ModelTool } from '../models/openai-responses/request-body.js';

/** What one model call sends. */
export interface ModelRequest {
  system?: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  /** The turn's reasoning effort, over the model's configured one (see `src/models/reasoning.ts`). */
  reasoningEffort?: ReasoningEffort;
}

/** Streaming callbacks of a model call. */
export interface ModelCallHandlers {
  onTextDelta?: (text: string) => void;
  /** `partIndex`: which reasoning block of this answer (0-based) the text belongs to. */
  onReasoningDelta?: (text: string, partIndex: number) => void;
  /**
   * Called when an attempt that had streamed text or reasoning failed (not when it was aborted),
   * before it is retried or its failure thrown, with what it streamed: the receiver ends the items
   * it opened for it (the next attempt streams from the start again, into new ones). Awaited.
   */
  onCutOff?: (partial: ModelCallResult, failure: ModelCallError) => void | Promise<void>;
  /** Called before a retry, with the failure and the delay chosen (ms). */
  onRetry?: (failure: ModelCallError, attempt: number, delayMs: number) => void;
}

/** Retry policy of model calls. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff delay, ms; doubles each retry, with ±25 % jitter. */
  baseDelayMs: number;
  /** Upper bound of one delay, ms (also caps `Retry-After`). */
  maxDelayMs: number;
  /**
   * Silence allowed in a stream, ms: an attempt from which nothing arrives for this long (its
   * answer's head included) is given up as a dropped stream, and retried.
   */
  streamIdleTimeoutMs: number;
}

/**
 * Default: 4 retries from 500 ms, at most 30 s apart; a stream silent for 5 minutes counts as
 * dropped (Codex's `stream_idle_timeout_ms` default, and undici's body timeout).
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000, streamIdleTimeoutMs: 300_000 };

// A tool's JSON Schema is made once per tool object, not once per step; and once per zod
// schema, not once per turn: tool objects are made for each turn around the same schemas.
const modelToolCache = new WeakMap<Tool, ModelTool>();
const jsonSchemaCache = new WeakMap<Tool['parameters'], Record<string, unknown>>();

function jsonSchemaOf(parameters: Tool['parameters']): Record<string, unknown> {
  let schema = jsonSchemaCache.get(parameters);
  if (!schema) {
    schema = z.toJSONSchema(parameters, { unrepresentable: 'any' }) as Record<string, unknown>;
    jsonSchemaCache.set(parameters, schema);
  }
  return schema;
}

/**
 * The tools as the model sees them (name, description, JSON Schema of the arguments).
 * Arguments are validated by the tool wrapper when a call runs, not by the model client.
 */
export function toModelTools(tools: Tool[]): ModelTool[] {
  return tools.map((tool) => {
    let modelTool = modelToolCache.get(tool);
    if (!modelTool) {
      modelTool = { name: tool.name, description: tool.description, parameters: jsonSchemaOf(tool.parameters) };
      modelToolCache.set(tool, modelTool);
    }
    return modelTool;
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function backoffDelay(policy: RetryPolicy, attempt: number, failure: ModelCallError): number {
  if (failure.retryAfterMs !== undefined) return Math.min(failure.retryAfterMs, policy.maxDelayMs);
  const exponential = policy.baseDelayMs * 2 ** (attempt - 1);
  const jitter = exponential * (0.75 + Math.random() * 0.5);
  return Math.min(jitter, policy.maxDelayMs);
}

/**
 * Marks the stable prefix of an Anthropic request as cacheable (Anthropic prompt caching:
 * `cache_control` breakpoints on the system prompt and on the latest message), so each step
 * of a turn re-reads the prefix from the cache instead of paying for it again. Other
 * providers cache automatically and get the request unchanged.
 */
export function withPromptCaching(model: Pick<ResolvedModel, 'kind'>, system: string | undefined, messages: ModelMessage[]): { system?: string; messages: ModelMessage[] } {
  if (model.kind !== 'anthropic') return { ...(system ? { system } : {}), messages };
  const cache = { anthropic: { cacheControl: { type: 'ephemeral' } } };
  const marked = messages.map((message, index) => (index === messages.length - 1 ? { ...message, providerOptions: { ...message.providerOptions, ...cache } } : message));
  return { messages: [...(system ? [{ role: 'system' as const, content: system, providerOptions: cache }] : []), ...marked] as ModelMessage[] };
}

/** Streams through the runtime's own Responses client; its usage arrives already in our shape. */
async function streamResponsesOnce(model: ResolvedModel, request: ModelRequest, signal: AbortSignal, collector: ResponseCollector, idle: StreamIdleTimeout): Promise<void> {
  const providerOptions = reasoningProviderOptions(model.kind, model.reasoning, request.reasoningEffort);
  const body = responsesRequestBody({ modelId: model.modelId, ...(request.system ? { system: request.system } : {}), messages: request.messages, tools: request.tools, ...(providerOptions?.openai ? { openai: providerOptions.openai } : {}) });
  await streamResponse({
    connection: model.connection,
    body,
    signal,
    onChunk: () => idle.touch(),
    handlers: {
      onTextDelta: (text) => collector.handle({ type: 'text-delta', text }),
      onReasoningStart: (id, providerMetadata) => collector.handle({ type: 'reasoning-start', id, providerMetadata }),
      onReasoningDelta: (id, text) => collector.handle({ type: 'reasoning-delta', id, text }),
      onReasoningEnd: (id, providerMetadata) => collector.handle({ type: 'reasoning-end', id, providerMetadata }),
      onToolCall: (toolCallId, toolName, input) => collector.handle({ type: 'tool-call', toolCallId, toolName, input }),
      onFinish: (usage, finishReason) => {
        collector.outcome.usage = usage;
        collector.outcome.finishReason = finishReason;
      },
    },
  });
}

/** Streams through the AI SDK (Anthropic, Gemini, Chat Completions servers). */
async function streamSdkOnce(model: ResolvedModel, request: ModelRequest, signal: AbortSignal, collector: ResponseCollector, idle: StreamIdleTimeout): Promise<void> {
  const [{ jsonSchema, streamText }, languageModel] = await Promise.all([import('ai'), model.languageModel()]);
  const tools: ToolSet = {};
  for (const tool of request.tools) tools[tool.name] = { description: tool.description, inputSchema: jsonSchema(tool.parameters as Parameters<typeof jsonSchema>[0]) };
  const prepared = withPromptCaching(model, request.system, request.messages);
  const providerOptions = reasoningProviderOptions(model.kind, model.reasoning, request.reasoningEffort);
  const result = streamText({
    model: languageModel,
    ...(prepared.system ? { system: prepared.system } : {}),
    messages: prepared.messages,
    // Anthropic's cached system prompt travels as a system message on purpose (withPromptCaching).
    allowSystemInMessages: true,
    tools,
    ...(providerOptions ? { providerOptions: providerOptions as NonNullable<Parameters<typeof streamText>[0]['providerOptions']> } : {}),
    abortSignal: signal,
    maxRetries: 0,
    onError: ({ error }) => {
      collector.failure ??= error;
    },
  });
  // Parts of other types (step boundaries, sources…) are ignored by the collector's switch; each
  // still says the stream is alive.
  for await (const part of result.fullStream) {
    idle.touch();
    collector.handle(part as CollectedPart);
  }
}

async function streamOnce(
  model: ResolvedModel,
  request: ModelRequest,
  signal: AbortSignal,
  handlers: ModelCallHandlers,
  policy: RetryPolicy,
): Promise<ModelCallResult> {
  const collector = new ResponseCollector(handlers);
  const idle = new StreamIdleTimeout(policy.streamIdleTimeoutMs);
  try {
    await (model.kind === 'openai' ? streamResponsesOnce : streamSdkOnce)(model, request, AbortSignal.any([signal, idle.signal]), collector, idle);
  } catch (error) {
    // A broken stream (connection dropped mid-answer) throws out of the iteration; what arrived is kept.
    collector.failure ??= error;
  } finally {
    idle.stop();
  }
  if (signal.aborted) throw signal.reason ?? new Error('aborted');
  // However the client reported the abort (an error, an `abort` part, a quiet end), the stall is the failure.
  if (idle.expired) collector.failure = idle.signal.reason;
  if (collector.failure !== undefined) {
    const error = toModelCallError(collector.failure);
    (error as ModelCallError & { partial?: ModelCallResult }).partial = collector.result();
    throw error;
  }
  return collector.result();
}

/** What the attempt that threw `error` had collected (an empty answer when it failed before streaming). */
function partialOf(error: unknown): ModelCallResult {
  return (error as { partial?: ModelCallResult }).partial ?? { text: '', reasoning: '', reasoningParts: [], toolCalls: [], usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, finishReason: 'unknown' };
}

/**
 * The failure a call ends with, its message saying how many attempts were made (when more than
 * one) and, for an answer that had begun, what of it the transcript keeps.
 */
function finalFailure(failure: ModelCallError, attempts: number, partial: ModelCallResult, streamed: boolean, earlierCutOffs: number): ModelCallError {
  const parts = [failure.message];
  if (attempts > 1) parts.push(failure.retryable ? `gave up after ${attempts} attempts` : `on attempt ${attempts} (not retried)`);
  const begun = streamed || partial.toolCalls.length > 0 || failure.kind === 'dropped_stream' || failure.kind === 'malformed_event';
  if (begun || earlierCutOffs > 0) parts.push(describeKept(partial, earlierCutOffs));
  if (parts.length === 1) return failure;
  return new ModelCallError(parts.join('; '), failure.httpStatus, failure.retryable, failure.retryAfterMs, failure.retries, failure.kind, failure.detail);
}

/**
 * Calls the model, streaming deltas to the handlers, retrying transient failures (429, 5xx,
 * connection resets, a stream that broke off or stalled, an error event the provider calls
 * transient) with exponential backoff and jitter, honouring `Retry-After`. An attempt that had
 * streamed output is retried too: `handlers.onCutOff` ends what it streamed first, and the next
 * attempt streams its answer from the start. Tool calls are only returned with a whole answer,
 * so a call of a cut-off attempt is never run.
 * @throws ModelCallError after the last retry, or at once for non-retryable errors; its message
 *   says how many attempts were made and what of a begun answer was kept
 * @throws the abort reason when `signal` is aborted
 */
export async function callModel(
  model: ResolvedModel,
  request: ModelRequest,
  signal: AbortSignal,
  handlers: ModelCallHandlers = {},
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<ModelCallResult> {
  let cutOffs = 0;
  for (let attempt = 0; ; attempt++) {
    let streamed = false;
    const tracking: ModelCallHandlers = {
      onTextDelta: (text) => {
        streamed = true;
        handlers.onTextDelta?.(text);
      },
      onReasoningDelta: (text, partIndex) => {
        streamed = true;
        handlers.onReasoningDelta?.(text, partIndex);
      },
    };
    try {
      return await streamOnce(model, request, signal, tracking, policy);
    } catch (error) {
      if (signal.aborted) throw error;
      const failure = toModelCallError(error);
      failure.retries = attempt;
      const partial = partialOf(error);
      if (streamed) await handlers.onCutOff?.(partial, failure);
      if (!failure.retryable || attempt >= policy.maxRetries) throw finalFailure(failure, attempt + 1, partial, streamed, cutOffs);
      if (streamed) cutOffs++;
      const delay = backoffDelay(policy, attempt + 1, failure);
      handlers.onRetry?.(failure, attempt + 1, delay);
      await sleep(delay, signal);
    }
  }
}

/**
 * One streaming model call, with retries on transient failures (SPEC §6: retries with backoff
 * on 429/5xx; provider errors keep the provider's message). OpenAI Responses providers go
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
import { StreamedText } from './streamed-text.js';

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
}

/** Default: 4 retries from 500 ms, at most 30 s apart. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

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

function toUsage(usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number; inputTokenDetails?: { cacheReadTokens?: number }; outputTokenDetails?: { reasoningTokens?: number } }): TokenUsage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
    ...(usage.inputTokenDetails?.cacheReadTokens !== undefined ? { cachedInputTokens: usage.inputTokenDetails.cacheReadTokens } : {}),
    ...(usage.outputTokenDetails?.reasoningTokens !== undefined ? { reasoningTokens: usage.outputTokenDetails.reasoningTokens } : {}),
  };
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

/**
 * The part of a tool call's provider metadata worth keeping for replay. OpenAI's item ids are
 * left out: they point at responses stored by OpenAI, which the runtime does not rely on (it
 * sends the whole history), and would make the SDK send references instead of the calls.
 */
function replayableMetadata(metadata: unknown): { providerMetadata?: Record<string, Record<string, unknown>> } {
  if (!metadata || typeof metadata !== 'object') return {};
  const kept = Object.fromEntries(Object.entries(metadata as Record<string, Record<string, unknown>>).filter(([provider]) => provider !== 'openai'));
  return Object.keys(kept).length > 0 ? { providerMetadata: kept } : {};
}

type Metadata = Record<string, Record<string, unknown>> | undefined;

/** The stream parts the collector reads, in the AI SDK's shape (which its own client emits too). */
type CollectedPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-start' | 'reasoning-end'; id: string; providerMetadata?: Metadata }
  | { type: 'reasoning-delta'; id: string; text: string; providerMetadata?: Metadata }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown; providerMetadata?: Metadata }
  | { type: 'finish'; totalUsage: Parameters<typeof toUsage>[0]; finishReason: string }
  | { type: 'error'; error: unknown };

/** Collects one streamed answer: text, reasoning blocks with their metadata, tool calls, usage, failure. */
class ResponseCollector {
  readonly outcome: ModelCallResult = { text: '', reasoning: '', reasoningParts: [], toolCalls: [], usage: toUsage({}), finishReason: 'unknown' };
  failure: unknown;
  /**
   * The answer's text while it streams: `+=` on `outcome.text` kept one rope node per delta (about
   * 50 bytes each, 200,000 deltas ≈ 10 MiB) alive until the answer ended; see {@link StreamedText}.
   */
  private readonly text = new StreamedText();
  private readonly openReasoning = new Map<string, ReasoningPart>();

  constructor(private readonly handlers: ModelCallHandlers) {}

  /** The answer so far, its text joined into one flat string. */
  result(): ModelCallResult {
    if (this.outcome.text.length !== this.text.length) this.outcome.text = this.text.toString();
    return this.outcome;
  }

  private merge(target: ReasoningPart, metadata: unknown): void {
    if (metadata && typeof metadata === 'object') {
      target.providerMetadata = { ...target.providerMetadata, ...(metadata as Record<string, Record<string, unknown>>) };
    }
  }

  handle(part: CollectedPart): void {
    switch (part.type) {
      case 'text-delta':
        this.text.append(part.text);
        this.handlers.onTextDelta?.(part.text);
        break;
      case 'reasoning-start': {
        const block: ReasoningPart = { text: '' };
        this.merge(block, part.providerMetadata);
        this.openReasoning.set(part.id, block);
        this.outcome.reasoningParts.push(block);
        break;
      }
      case 'reasoning-end': {
        const block = this.openReasoning.get(part.id);
        if (block) this.merge(block, part.providerMetadata);
        break;
      }
      case 'reasoning-delta':
        this.outcome.reasoning += part.text;
        {
          const block = this.openReasoning.get(part.id);
          if (block) {
            block.text += part.text;
            this.merge(block, part.providerMetadata);
          }
          const index = block ? this.outcome.reasoningParts.indexOf(block) : this.outcome.reasoningParts.length - 1;
          this.handlers.onReasoningDelta?.(part.text, Math.max(index, 0));
        }
        break;
      case 'tool-call':
        this.outcome.toolCalls.push({ callId: part.toolCallId, toolName: part.toolName, arguments: part.input, ...replayableMetadata(part.providerMetadata) });
        break;
      case 'finish':
        this.outcome.usage = toUsage(part.totalUsage);
        this.outcome.finishReason = part.finishReason;
        break;
      case 'error':
        this.failure ??= part.error;
        break;
      default:
        break;
    }
  }
}

/**
 * What of a broken answer stays in the transcript: the text that arrived (recorded as a failed
 * `assistant_message`). Reasoning and tool calls of an unfinished answer are dropped: they
 * cannot be replayed or run without the rest of the answer.
 */
function describeKept(outcome: ModelCallResult): string {
  const dropped = [
    ...(outcome.reasoning ? ['its reasoning'] : []),
    ...(outcome.toolCalls.length > 0 ? [`${outcome.toolCalls.length} tool call${outcome.toolCalls.length === 1 ? '' : 's'} (not run)`] : []),
  ];
  const kept = outcome.text ? `kept the ${outcome.text.length} characters of text that arrived` : 'no text had arrived';
  return dropped.length > 0 ? `${kept}; dropped ${dropped.join(' and ')}` : kept;
}

/** Streams through the runtime's own Responses client; its usage arrives already in our shape. */
async function streamResponsesOnce(model: ResolvedModel, request: ModelRequest, signal: AbortSignal, collector: ResponseCollector): Promise<void> {
  const providerOptions = reasoningProviderOptions(model.kind, model.reasoning, request.reasoningEffort);
  const body = responsesRequestBody({ modelId: model.modelId, ...(request.system ? { system: request.system } : {}), messages: request.messages, tools: request.tools, ...(providerOptions?.openai ? { openai: providerOptions.openai } : {}) });
  await streamResponse({
    connection: model.connection,
    body,
    signal,
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
async function streamSdkOnce(model: ResolvedModel, request: ModelRequest, signal: AbortSignal, collector: ResponseCollector): Promise<void> {
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
  // Parts of other types (step boundaries, sources…) are ignored by the collector's switch.
  for await (const part of result.fullStream) collector.handle(part as CollectedPart);
}

async function streamOnce(
  model: ResolvedModel,
  request: ModelRequest,
  signal: AbortSignal,
  handlers: ModelCallHandlers,
): Promise<ModelCallResult> {
  const collector = new ResponseCollector(handlers);
  try {
    await (model.kind === 'openai' ? streamResponsesOnce : streamSdkOnce)(model, request, signal, collector);
  } catch (error) {
    // A broken stream (connection dropped mid-answer) throws out of the iteration; what arrived is kept.
    collector.failure ??= error;
  }
  if (signal.aborted) throw signal.reason ?? new Error('aborted');
  if (collector.failure !== undefined) {
    let error = toModelCallError(collector.failure);
    if (error.kind === 'dropped_stream' || error.kind === 'malformed_event') {
      error = new ModelCallError(`${error.message}; ${describeKept(collector.result())}`, error.httpStatus, error.retryable, error.retryAfterMs, error.retries, error.kind, error.detail);
    }
    (error as ModelCallError & { partial?: ModelCallResult }).partial = collector.result();
    throw error;
  }
  return collector.result();
}

/**
 * Calls the model, streaming deltas to the handlers, retrying transient failures (429, 5xx,
 * connection resets) with exponential backoff and jitter and honouring `Retry-After`.
 * A retry is only made when nothing was streamed yet, so clients never see text twice.
 * @throws ModelCallError after the last retry, or at once for non-retryable errors
 * @throws the abort reason when `signal` is aborted
 */
export async function callModel(
  model: ResolvedModel,
  request: ModelRequest,
  signal: AbortSignal,
  handlers: ModelCallHandlers = {},
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<ModelCallResult> {
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
      return await streamOnce(model, request, signal, tracking);
    } catch (error) {
      if (signal.aborted) throw error;
      const failure = toModelCallError(error);
      failure.retries = attempt;
      if (!failure.retryable || streamed || attempt >= policy.maxRetries) throw failure;
      const delay = backoffDelay(policy, attempt + 1, failure);
      handlers.onRetry?.(failure, attempt + 1, delay);
      await sleep(delay, signal);
    }
  }
}

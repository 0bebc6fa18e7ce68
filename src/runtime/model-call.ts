/**
 * One streaming model call through the AI SDK, with retries on transient failures
 * (SPEC §6: retries with backoff on 429/5xx; provider errors keep the provider's message).
 */
import { APICallError, jsonSchema, streamText, type ModelMessage, type ToolSet } from 'ai';
import { z } from 'zod';
import type { ResolvedModel } from '../models/model-registry.js';
import type { TokenUsage } from '../protocol/index.js';
import type { Tool } from '../tools/tool.js';

/** A tool call the model asked for. */
export interface RequestedToolCall {
  callId: string;
  toolName: string;
  /** Parsed JSON arguments (or the raw string when it was not valid JSON). */
  arguments: unknown;
}

/** What one model call produced. */
export interface ModelCallResult {
  text: string;
  reasoning: string;
  toolCalls: RequestedToolCall[];
  usage: TokenUsage;
  finishReason: string;
}

/** Streaming callbacks of a model call. */
export interface ModelCallHandlers {
  onTextDelta?: (text: string) => void;
  onReasoningDelta?: (text: string) => void;
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

/** A model call that failed, with what the provider said. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number | null,
    readonly retryable: boolean,
    /** Delay the provider asked for (`Retry-After`), ms. */
    readonly retryAfterMs: number | undefined,
    /** Retries made before giving up. */
    public retries = 0,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

function providerMessage(error: APICallError): string {
  if (error.responseBody) {
    try {
      const body = JSON.parse(error.responseBody) as { error?: { message?: unknown } | string; message?: unknown };
      if (typeof body.error === 'string') return body.error;
      if (body.error && typeof body.error.message === 'string') return body.error.message;
      if (typeof body.message === 'string') return body.message;
    } catch {
      // Not JSON: the SDK's own message below is the best there is.
    }
  }
  return error.message;
}

/** Parses a `Retry-After` header (seconds or HTTP date, RFC 9110 §10.2.3) into ms. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Converts whatever the SDK threw into a ModelCallError that says whether a retry may help. */
export function toModelCallError(error: unknown): ModelCallError {
  if (error instanceof ModelCallError) return error;
  const cause = (error as { cause?: unknown })?.cause;
  const apiError = APICallError.isInstance(error) ? error : APICallError.isInstance(cause) ? cause : undefined;
  if (apiError) {
    const status = apiError.statusCode ?? null;
    const retryable = status === null ? apiError.isRetryable : status === 408 || status === 409 || status === 429 || status >= 500;
    const headers = apiError.responseHeaders ?? {};
    return new ModelCallError(providerMessage(apiError), status, retryable, parseRetryAfter(headers['retry-after']));
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException)?.code ?? (cause as NodeJS.ErrnoException)?.code;
  const connectionFailure = ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET'].includes(code ?? '') || /fetch failed|socket/i.test(message);
  return new ModelCallError(message, null, connectionFailure, undefined);
}

/** Converts tools to the AI SDK's tool set; arguments are validated by our own tool wrapper, not the SDK. */
export function toSdkTools(tools: Tool[]): ToolSet {
  const set: ToolSet = {};
  for (const tool of tools) {
    set[tool.name] = {
      description: tool.description,
      inputSchema: jsonSchema(z.toJSONSchema(tool.parameters, { unrepresentable: 'any' }) as Parameters<typeof jsonSchema>[0]),
    };
  }
  return set;
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

async function streamOnce(
  model: ResolvedModel,
  request: { system?: string; messages: ModelMessage[]; tools: ToolSet },
  signal: AbortSignal,
  handlers: ModelCallHandlers,
): Promise<ModelCallResult> {
  let failure: unknown;
  const result = streamText({
    model: model.model,
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages,
    tools: request.tools,
    abortSignal: signal,
    maxRetries: 0,
    onError: ({ error }) => {
      failure ??= error;
    },
  });
  const outcome: ModelCallResult = { text: '', reasoning: '', toolCalls: [], usage: toUsage({}), finishReason: 'unknown' };
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        outcome.text += part.text;
        handlers.onTextDelta?.(part.text);
        break;
      case 'reasoning-delta':
        outcome.reasoning += part.text;
        handlers.onReasoningDelta?.(part.text);
        break;
      case 'tool-call':
        outcome.toolCalls.push({ callId: part.toolCallId, toolName: part.toolName, arguments: part.input });
        break;
      case 'finish':
        outcome.usage = toUsage(part.totalUsage);
        outcome.finishReason = part.finishReason;
        break;
      case 'error':
        failure ??= part.error;
        break;
      default:
        break;
    }
  }
  if (signal.aborted) throw signal.reason ?? new Error('aborted');
  if (failure !== undefined) {
    const error = toModelCallError(failure);
    (error as ModelCallError & { partial?: ModelCallResult }).partial = outcome;
    throw error;
  }
  return outcome;
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
  request: { system?: string; messages: ModelMessage[]; tools: ToolSet },
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
      onReasoningDelta: (text) => {
        streamed = true;
        handlers.onReasoningDelta?.(text);
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

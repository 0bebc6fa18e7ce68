/**
 * The runtime's own streaming client of the OpenAI Responses API: one `POST <baseURL>/responses`
 * with `stream: true`, its server-sent events (WHATWG HTML §9.2, parsed by `eventsource-parser`)
 * folded into text, reasoning, tool calls, usage and a finish reason (source: OpenAI API
 * reference, "Streaming events" of the Responses API).
 *
 * Why not the AI SDK here: on the runtime's hot path (one request per agent step) the SDK's
 * stream stages and its schema validation of every event cost about five times the CPU of
 * this direct parse (`npm run bench:model-stream`; docs/performance.md, "The performance work"). Events are checked by hand
 * for the fields this client reads, so a malformed event is still reported by name and field.
 * Other providers keep going through the SDK.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ProviderConnection } from '../model-registry.js';
import { droppedStream, httpFailure, malformedEventField, ModelCallError, unparsableEvent } from '../model-errors.js';
import type { TokenUsage } from '../../protocol/index.js';
import { postRequest, readText } from './http-post.js';
import { encodeRequestBody } from './request-body.js';

/** Default address of the API when the provider configures none (as the OpenAI SDKs use). */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** What the stream delivers, in order. Reasoning blocks are one per summary part of a reasoning item. */
export interface ResponsesStreamHandlers {
  onTextDelta(text: string): void;
  /** A reasoning block begins; `id` is `<item id>:<summary index>`. */
  onReasoningStart(id: string, providerMetadata: Record<string, Record<string, unknown>>): void;
  onReasoningDelta(id: string, text: string): void;
  /** A reasoning block ends, with its final provider data (the encrypted content arrives here). */
  onReasoningEnd(id: string, providerMetadata: Record<string, Record<string, unknown>>): void;
  onToolCall(callId: string, toolName: string, input: unknown): void;
  onFinish(usage: TokenUsage, finishReason: string): void;
}

type Event = Record<string, unknown>;

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Reads a field the client relies on, throwing a `malformed_event` failure naming it when it has the wrong type. */
function field<T>(event: Event, path: string, expected: 'string' | 'number' | 'object', optional = false): T {
  let value: unknown = event;
  for (const key of path.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  if (value === undefined && optional) return undefined as T;
  if (describeType(value) !== expected) {
    throw malformedEventField(String(event.type), path, `expected ${expected}, received ${value === undefined ? 'undefined' : describeType(value)}`, JSON.stringify(event).slice(0, 2000));
  }
  return value as T;
}

function usageOf(usage: Record<string, unknown> | undefined): TokenUsage {
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  const inputTokens = number(usage?.input_tokens) ?? 0;
  const outputTokens = number(usage?.output_tokens) ?? 0;
  const cached = number((usage?.input_tokens_details as Record<string, unknown> | undefined)?.cached_tokens);
  const reasoning = number((usage?.output_tokens_details as Record<string, unknown> | undefined)?.reasoning_tokens);
  return {
    inputTokens,
    outputTokens,
    totalTokens: number(usage?.total_tokens) ?? inputTokens + outputTokens,
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  };
}

/** The finish reason in the AI SDK's words (`stop`, `tool-calls`, `length`, `content-filter`, `other`), which the runtime maps to stop reasons. */
function finishReasonOf(incompleteReason: unknown, sawToolCall: boolean): string {
  if (incompleteReason === undefined || incompleteReason === null) return sawToolCall ? 'tool-calls' : 'stop';
  if (incompleteReason === 'max_output_tokens') return 'length';
  if (incompleteReason === 'content_filter') return 'content-filter';
  return sawToolCall ? 'tool-calls' : 'other';
}

function streamError(error: Record<string, unknown> | undefined, raw: Event): ModelCallError {
  const name = [error?.type, error?.code].find((value) => typeof value === 'string' && value !== 'error') as string | undefined;
  const message = typeof error?.message === 'string' ? error.message : 'no message';
  const transient = name !== undefined && /overloaded|rate_limit|server_error|api_error|internal|unavailable/i.test(name);
  return new ModelCallError(`the provider reported an error mid-answer: ${name ? `${name}: ` : ''}${message}`, null, transient, undefined, 0, 'stream_error', JSON.stringify(raw).slice(0, 2000));
}

/** Folds the events of one response; throws `ModelCallError` on an error event or a malformed one. */
class ResponseFold {
  finished = false;
  private sawToolCall = false;
  /** Summary parts started per reasoning item id. */
  private readonly reasoningParts = new Map<string, number>();

  constructor(private readonly handlers: ResponsesStreamHandlers) {}

  private reasoningMetadata(itemId: string, encrypted: unknown): Record<string, Record<string, unknown>> {
    return { openai: { itemId, reasoningEncryptedContent: typeof encrypted === 'string' ? encrypted : null } };
  }

  handle(event: Event): void {
    switch (event.type) {
      case 'response.output_text.delta':
        this.handlers.onTextDelta(field<string>(event, 'delta', 'string'));
        break;
      case 'response.output_item.added': {
        const item = field<Event>(event, 'item', 'object');
        if (item.type === 'reasoning') {
          const itemId = field<string>(event, 'item.id', 'string');
          this.reasoningParts.set(itemId, 1);
          this.handlers.onReasoningStart(`${itemId}:0`, this.reasoningMetadata(itemId, item.encrypted_content));
        }
        break;
      }
      case 'response.reasoning_summary_part.added': {
        const itemId = field<string>(event, 'item_id', 'string');
        const index = field<number>(event, 'summary_index', 'number');
        if (index > 0) {
          this.reasoningParts.set(itemId, Math.max(this.reasoningParts.get(itemId) ?? 0, index + 1));
          this.handlers.onReasoningStart(`${itemId}:${index}`, this.reasoningMetadata(itemId, undefined));
        }
        break;
      }
      case 'response.reasoning_summary_text.delta':
        this.handlers.onReasoningDelta(`${field<string>(event, 'item_id', 'string')}:${field<number>(event, 'summary_index', 'number')}`, field<string>(event, 'delta', 'string'));
        break;
      case 'response.output_item.done': {
        const item = field<Event>(event, 'item', 'object');
        if (item.type === 'function_call') {
          const argumentsText = field<string>(event, 'item.arguments', 'string');
          let input: unknown = argumentsText;
          try {
            input = JSON.parse(argumentsText);
          } catch {
            // Not JSON: the raw text goes to the tool, whose argument check names the problem.
          }
          this.sawToolCall = true;
          this.handlers.onToolCall(field<string>(event, 'item.call_id', 'string'), field<string>(event, 'item.name', 'string'), input);
        } else if (item.type === 'reasoning') {
          const itemId = field<string>(event, 'item.id', 'string');
          const parts = this.reasoningParts.get(itemId) ?? 0;
          for (let index = 0; index < parts; index++) this.handlers.onReasoningEnd(`${itemId}:${index}`, this.reasoningMetadata(itemId, item.encrypted_content));
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = field<Event>(event, 'response', 'object');
        const details = response.incomplete_details as Record<string, unknown> | null | undefined;
        this.finished = true;
        this.handlers.onFinish(usageOf(response.usage as Record<string, unknown> | undefined), finishReasonOf(details?.reason, this.sawToolCall));
        break;
      }
      case 'response.failed': {
        const response = field<Event>(event, 'response', 'object');
        throw streamError(response.error as Record<string, unknown> | undefined, event);
      }
      case 'error':
        throw streamError((typeof event.error === 'object' && event.error !== null ? event.error : event) as Record<string, unknown>, event);
      default:
        // Events this client does not need (created, in_progress, content parts, argument deltas, …).
        break;
    }
  }
}

/** What one request needs. */
export interface ResponsesCall {
  connection: ProviderConnection;
  body: Record<string, unknown>;
  signal: AbortSignal;
  handlers: ResponsesStreamHandlers;
  /** Told of every chunk of the answer's body as it arrives, events or not (the caller's idle timeout). */
  onChunk?: () => void;
}

function requestHeaders(connection: ProviderConnection): Record<string, string> {
  const apiKey = connection.apiKey ?? process.env.OPENAI_API_KEY;
  if (apiKey === undefined) {
    throw new ModelCallError('the OpenAI API key is missing: set apiKey in providers.yaml (e.g. apiKey: env:OPENAI_API_KEY), or store one with: openvaala auth set <provider>', null, false, undefined, 0, 'other');
  }
  return { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${apiKey}`, ...connection.headers };
}

/**
 * Makes one streaming request and delivers its events to the handlers.
 * @throws ModelCallError for an HTTP error answer (`http`), an answer that broke off or ended
 *   before its last event (`dropped_stream`), an event that is not JSON or lacks a field
 *   (`malformed_event`), an error event (`stream_error`); RequestFailedError for a failed
 *   connection (classified by `toModelCallError`); the abort reason when `signal` is aborted
 */
export async function streamResponse(call: ResponsesCall): Promise<void> {
  const baseURL = (call.connection.baseURL ?? process.env.OPENAI_BASE_URL ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const response = await postRequest(`${baseURL}/responses`, requestHeaders(call.connection), encodeRequestBody(call.body), call.signal);
  if (response.status < 200 || response.status >= 300) {
    const body = await readText(response.body).catch(() => undefined);
    const retryAfter = response.headers['retry-after'];
    throw httpFailure(response.status, body, typeof retryAfter === 'string' ? retryAfter : undefined, `${response.status} ${response.statusText}`.trim());
  }
  const fold = new ResponseFold(call.handlers);
  let failure: unknown;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      if (failure !== undefined || message.data === '[DONE]') return;
      let event: unknown;
      try {
        event = JSON.parse(message.data);
      } catch (error) {
        failure = unparsableEvent(message.data, (error as Error).message);
        return;
      }
      if (event === null || typeof event !== 'object' || typeof (event as Event).type !== 'string') {
        failure = malformedEventField(message.event ?? 'unnamed', 'type', `expected string, received ${describeType((event as Event | null)?.type)}`, message.data.slice(0, 2000));
        return;
      }
      try {
        fold.handle(event as Event);
      } catch (error) {
        failure = error;
      }
    },
  });
  // The decoder keeps a multi-byte character cut between two chunks until its last byte arrives.
  response.body.setEncoding('utf8');
  try {
    for await (const chunk of response.body) {
      call.onChunk?.();
      parser.feed(chunk as string);
      if (failure !== undefined) break;
    }
  } catch (error) {
    if (call.signal.aborted) throw call.signal.reason;
    throw droppedStream(error, (error as Error).message);
  }
  if (failure !== undefined) {
    response.body.destroy();
    throw failure;
  }
  if (!fold.finished) throw droppedStream(undefined, 'the event stream ended before response.completed');
}

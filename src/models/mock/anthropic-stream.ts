import { argumentsAsObject, type MockError, type MockUsage, type ResolvedReply, type ServerSentEvent } from './script.js';

/** What the Anthropic encoders need besides the reply: the model name echoed back. */
export interface AnthropicContext {
  model: string;
}

/**
 * The `usage` object of Anthropic Messages, counts in tokens. Unlike OpenAI, `input_tokens`
 * excludes the tokens read from (`cache_read_input_tokens`) and written to
 * (`cache_creation_input_tokens`) the prompt cache; `output_tokens` includes the thinking, whose
 * share is `output_tokens_details.thinking_tokens`.
 */
export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  output_tokens_details?: { thinking_tokens: number };
}

/** A content block of an Anthropic assistant message: thinking, text or a tool use. */
export type AnthropicContentBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

/** A non-streamed Anthropic Messages response (`"type": "message"`). */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: 'end_turn' | 'tool_use' | null;
  stop_sequence: null;
  usage: AnthropicUsage;
}

/** The error body of the Anthropic API: `{"type": "error", "error": {"type", "message"}}`. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** Error types the Anthropic API documents (source: Anthropic API reference, Errors). */
const ANTHROPIC_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

/** The error type Anthropic sends with an HTTP status. */
function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * Encodes an error as Anthropic's error body (source: Anthropic API reference, Errors). The
 * scripted `type` is kept when it is one of Anthropic's error types (e.g. `overloaded_error`), so
 * one script can serve OpenAI and Anthropic clients; otherwise the status decides
 * (429 `rate_limit_error`, 529 `overloaded_error`, other 5xx `api_error`, …).
 */
export function anthropicErrorBody(error: MockError): AnthropicErrorBody {
  const type = error.type !== undefined && ANTHROPIC_ERROR_TYPES.has(error.type) ? error.type : anthropicErrorType(error.status);
  return { type: 'error', error: { type, message: error.message } };
}

/**
 * Converts scripted usage to Anthropic's `usage` (source: Anthropic Messages, `usage`): the cached
 * parts are moved out of `input_tokens`, and `output_tokens_details` appears only when there are
 * thinking tokens.
 */
export function toAnthropicUsage(usage: MockUsage): AnthropicUsage {
  return {
    input_tokens: Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteInputTokens),
    cache_creation_input_tokens: usage.cacheWriteInputTokens,
    cache_read_input_tokens: usage.cachedInputTokens,
    output_tokens: usage.outputTokens,
    ...(usage.reasoningTokens > 0 ? { output_tokens_details: { thinking_tokens: usage.reasoningTokens } } : {}),
  };
}

/** Stable message id, so tests can assert on it: `msg_mock_<request number>`. */
function messageId(reply: ResolvedReply): string {
  return `msg_mock_${reply.requestNumber}`;
}

function stopReason(reply: ResolvedReply): 'end_turn' | 'tool_use' {
  return reply.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
}

/**
 * Encodes a reply as the Anthropic Messages event stream (source: Anthropic Messages streaming
 * events). Each event has an `event:` line repeating `data.type`:
 *
 * 1. `message_start`: the message with empty `content`, `stop_reason: null` and the input usage
 *    (`output_tokens` is 1 so far, as Anthropic reports it);
 * 2. per content block, at increasing `index`: `content_block_start`, its deltas,
 *    `content_block_stop`; a `ping` follows the first `content_block_start`, as in Anthropic's
 *    example stream. Blocks, in order:
 *    - thinking (when the reply reasons; one block per reasoning part): `{type: "thinking",
 *      thinking: "", signature: ""}`, one `thinking_delta` per reasoning delta, then one
 *      `signature_delta`;
 *    - text (when the reply has text): `{type: "text", text: ""}`, one `text_delta` per delta;
 *    - one `tool_use` block per tool call: `{type: "tool_use", id, name, input: {}}`, then the
 *      arguments JSON split across several `input_json_delta` (`partial_json`);
 * 3. `message_delta` with `stop_reason` `end_turn` or `tool_use` and `usage.output_tokens`
 *    (plus `output_tokens_details.thinking_tokens` when there are thinking tokens);
 * 4. `message_stop`.
 *
 * There is no `[DONE]` terminator in this API.
 */
export function encodeAnthropicStream(reply: ResolvedReply, context: AnthropicContext): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>, isDelta = false): void => {
    events.push({ event: type, data: { type, ...fields }, isDelta, ...(type === 'message_delta' ? { finishes: true } : {}) });
  };
  let blockIndex = 0;
  const startBlock = (contentBlock: Record<string, unknown>): number => {
    emit('content_block_start', { index: blockIndex, content_block: contentBlock });
    if (blockIndex === 0) emit('ping', {});
    blockIndex += 1;
    return blockIndex - 1;
  };

  const usage = toAnthropicUsage(reply.usage);
  emit('message_start', {
    message: {
      id: messageId(reply),
      type: 'message',
      role: 'assistant',
      model: context.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: Math.min(1, usage.output_tokens),
      },
    },
  });

  if (reply.hasReasoning) {
    for (const deltas of reply.reasoningPartDeltas) {
      const index = startBlock({ type: 'thinking', thinking: '', signature: '' });
      for (const thinking of deltas) {
        emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }, true);
      }
      emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: reply.reasoningSignature } });
      emit('content_block_stop', { index });
    }
  }
  if (reply.hasText) {
    const index = startBlock({ type: 'text', text: '' });
    for (const text of reply.textDeltas) {
      emit('content_block_delta', { index, delta: { type: 'text_delta', text } }, true);
    }
    emit('content_block_stop', { index });
  }
  for (const call of reply.toolCalls) {
    const index = startBlock({ type: 'tool_use', id: call.id, name: call.name, input: {} });
    for (const partial_json of call.argumentDeltas) {
      emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }, true);
    }
    emit('content_block_stop', { index });
  }

  emit('message_delta', {
    delta: { stop_reason: stopReason(reply), stop_sequence: null },
    usage: {
      output_tokens: usage.output_tokens,
      ...(usage.output_tokens_details ? { output_tokens_details: usage.output_tokens_details } : {}),
    },
  });
  emit('message_stop', {});
  return events;
}

/**
 * Encodes a reply as a non-streamed Anthropic message (source: Anthropic Messages, response
 * body): `content` holds the thinking block (with its signature), the text block and the
 * `tool_use` blocks, in that order; a tool call's `input` is the parsed arguments object (a raw
 * scripted string that is not a JSON object is sent as that string).
 */
export function encodeAnthropicMessage(reply: ResolvedReply, context: AnthropicContext): AnthropicMessage {
  const content: AnthropicContentBlock[] = [];
  if (reply.hasReasoning) {
    for (const deltas of reply.reasoningPartDeltas) content.push({ type: 'thinking', thinking: deltas.join(''), signature: reply.reasoningSignature });
  }
  if (reply.hasText) content.push({ type: 'text', text: reply.textDeltas.join('') });
  for (const call of reply.toolCalls) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsAsObject(call.argumentsText) });
  }
  return {
    id: messageId(reply),
    type: 'message',
    role: 'assistant',
    model: context.model,
    content,
    stop_reason: stopReason(reply),
    stop_sequence: null,
    usage: toAnthropicUsage(reply.usage),
  };
}

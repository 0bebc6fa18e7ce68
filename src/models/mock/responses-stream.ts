import type { MockUsage, ResolvedReply, ServerSentEvent } from './script.js';

/**
 * What the Responses encoders need besides the reply: the model name echoed back, the creation
 * time (Unix seconds), and whether the request's `include` asked for
 * `reasoning.encrypted_content` (reasoning items then carry `encrypted_content`).
 */
export interface ResponsesContext {
  model: string;
  createdSeconds: number;
  includeEncryptedReasoning: boolean;
}

/** The `usage` object of the OpenAI Responses API, counts in tokens. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The `output_text` content part of a message item. */
interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: [];
  logprobs: [];
}

/** A reasoning summary part (`summary_text`) of a reasoning item. */
interface SummaryTextPart {
  type: 'summary_text';
  text: string;
}

/** An output item of the Responses API: a reasoning item, an assistant message or a function call. */
export type ResponsesOutputItem =
  | {
      id: string;
      type: 'reasoning';
      summary: SummaryTextPart[];
      encrypted_content?: string;
    }
  | {
      id: string;
      type: 'message';
      status: 'in_progress' | 'completed';
      role: 'assistant';
      content: OutputTextPart[];
    }
  | {
      id: string;
      type: 'function_call';
      status: 'in_progress' | 'completed';
      arguments: string;
      call_id: string;
      name: string;
    };

/** The `response` object of the OpenAI Responses API (the fields a client reads, plus the usual defaults). */
export interface ResponsesResponse {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete';
  error: null;
  incomplete_details: { reason: string } | null;
  instructions: null;
  max_output_tokens: null;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: null;
  reasoning: { effort: null; summary: null };
  service_tier: string;
  store: boolean;
  temperature: number;
  text: { format: { type: 'text' } };
  tool_choice: 'auto';
  tools: [];
  top_p: number;
  truncation: 'disabled';
  usage: ResponsesUsage | null;
  user: null;
  metadata: Record<string, never>;
}

/**
 * Converts scripted usage to the Responses `usage` object.
 * Source: OpenAI Responses object reference (`usage`, `*_tokens_details`).
 */
export function toResponsesUsage(usage: MockUsage): ResponsesUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** Stable ids derived from the request number, so tests can assert on them. */
function responseId(reply: ResolvedReply): string {
  return `resp_mock_${reply.requestNumber}`;
}
function reasoningId(reply: ResolvedReply): string {
  return `rs_mock_${reply.requestNumber}`;
}
function messageId(reply: ResolvedReply): string {
  return `msg_mock_${reply.requestNumber}`;
}
function functionCallItemId(reply: ResolvedReply, index: number): string {
  return `fc_mock_${reply.requestNumber}_${index}`;
}

function outputTextPart(text: string): OutputTextPart {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** The reasoning item, `summary` as given; `encrypted_content` only when the request asked for it. */
function reasoningItem(reply: ResolvedReply, context: ResponsesContext, summary: SummaryTextPart[]): ResponsesOutputItem {
  return {
    id: reasoningId(reply),
    type: 'reasoning',
    summary,
    ...(context.includeEncryptedReasoning ? { encrypted_content: reply.reasoningSignature } : {}),
  };
}

/**
 * The completed output items: the reasoning first (when the reply reasons), then the message
 * (when there is text), then the function calls.
 */
function completedOutput(reply: ResolvedReply, context: ResponsesContext): ResponsesOutputItem[] {
  const output: ResponsesOutputItem[] = [];
  if (reply.hasReasoning) {
    output.push(reasoningItem(reply, context, reply.reasoningPartDeltas.map((deltas) => ({ type: 'summary_text', text: deltas.join('') }))));
  }
  if (reply.hasText) {
    output.push({
      id: messageId(reply),
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [outputTextPart(reply.textDeltas.join(''))],
    });
  }
  reply.toolCalls.forEach((call, index) => {
    output.push({
      id: functionCallItemId(reply, index),
      type: 'function_call',
      status: 'completed',
      arguments: call.argumentsText,
      call_id: call.id,
      name: call.name,
    });
  });
  return output;
}

function responseObject(
  reply: ResolvedReply,
  context: ResponsesContext,
  status: 'in_progress' | 'completed',
): ResponsesResponse {
  const completed = status === 'completed';
  return {
    id: responseId(reply),
    object: 'response',
    created_at: context.createdSeconds,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: context.model,
    output: completed ? completedOutput(reply, context) : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: completed ? toResponsesUsage(reply.usage) : null,
    user: null,
    metadata: {},
  };
}

/**
 * Encodes a reply as the Responses API event stream (source: OpenAI Responses streaming events):
 *
 * - `response.created`, `response.in_progress` (response with `status: "in_progress"`, no output);
 * - for reasoning, the first output item: `response.output_item.added` (`type: "reasoning"`,
 *   empty `summary`), per reasoning part: `response.reasoning_summary_part.added` (`summary_index` 0, 1, …), one
 *   `response.reasoning_summary_text.delta` per reasoning delta, `response.reasoning_summary_text.done`,
 *   `response.reasoning_summary_part.done`, `response.output_item.done`; the item has
 *   `encrypted_content` when the request's `include` lists `reasoning.encrypted_content`;
 * - for text, the next output item: `response.output_item.added` (message), `response.content_part.added`,
 *   one `response.output_text.delta` per delta, `response.output_text.done`,
 *   `response.content_part.done`, `response.output_item.done`;
 * - per tool call: `response.output_item.added` (`type: "function_call"`, empty arguments), one
 *   `response.function_call_arguments.delta` per piece, `response.function_call_arguments.done`,
 *   `response.output_item.done`;
 * - `response.completed` with the full output and `usage`.
 *
 * Each event's name is repeated in `data.type`, and `data.sequence_number` counts from 0.
 * There is no `[DONE]` terminator in this API.
 */
export function encodeResponsesStream(reply: ResolvedReply, context: ResponsesContext): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>, isDelta = false): void => {
    const finishes = type === 'response.completed' || type === 'response.incomplete';
    events.push({ event: type, data: { type, sequence_number: events.length, ...fields }, isDelta, ...(finishes ? { finishes } : {}) });
  };

  emit('response.created', { response: responseObject(reply, context, 'in_progress') });
  emit('response.in_progress', { response: responseObject(reply, context, 'in_progress') });

  const output = completedOutput(reply, context);
  let outputIndex = 0;
  if (reply.hasReasoning) {
    const item_id = reasoningId(reply);
    emit('response.output_item.added', { output_index: outputIndex, item: reasoningItem(reply, context, []) });
    reply.reasoningPartDeltas.forEach((deltas, summary_index) => {
      const text = deltas.join('');
      const position = { item_id, output_index: outputIndex, summary_index };
      emit('response.reasoning_summary_part.added', { ...position, part: { type: 'summary_text', text: '' } });
      for (const delta of deltas) {
        emit('response.reasoning_summary_text.delta', { ...position, delta }, true);
      }
      emit('response.reasoning_summary_text.done', { ...position, text });
      emit('response.reasoning_summary_part.done', { ...position, part: { type: 'summary_text', text } });
    });
    emit('response.output_item.done', { output_index: outputIndex, item: output[outputIndex] });
    outputIndex += 1;
  }
  if (reply.hasText) {
    const item_id = messageId(reply);
    const text = reply.textDeltas.join('');
    const position = { item_id, output_index: outputIndex, content_index: 0 };
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    emit('response.content_part.added', { ...position, part: outputTextPart('') });
    for (const delta of reply.textDeltas) {
      emit('response.output_text.delta', { ...position, delta, logprobs: [] }, true);
    }
    emit('response.output_text.done', { ...position, text, logprobs: [] });
    emit('response.content_part.done', { ...position, part: outputTextPart(text) });
    emit('response.output_item.done', { output_index: outputIndex, item: output[outputIndex] });
    outputIndex += 1;
  }
  reply.toolCalls.forEach((call, index) => {
    const item_id = functionCallItemId(reply, index);
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: { id: item_id, type: 'function_call', status: 'in_progress', arguments: '', call_id: call.id, name: call.name },
    });
    for (const delta of call.argumentDeltas) {
      emit('response.function_call_arguments.delta', { item_id, output_index: outputIndex, delta }, true);
    }
    emit('response.function_call_arguments.done', {
      item_id,
      output_index: outputIndex,
      arguments: call.argumentsText,
    });
    emit('response.output_item.done', { output_index: outputIndex, item: output[outputIndex] });
    outputIndex += 1;
  });

  if (reply.incompleteReason) {
    emit('response.incomplete', { response: { ...responseObject(reply, context, 'completed'), status: 'incomplete', incomplete_details: { reason: reply.incompleteReason } } });
  } else {
    emit('response.completed', { response: responseObject(reply, context, 'completed') });
  }
  return events;
}

/**
 * Encodes a reply as the non-streamed Responses API `response` object
 * (source: OpenAI Responses object reference): `status: "completed"`, the reasoning, message and
 * function call items in `output`, and `usage`.
 */
export function encodeResponse(reply: ResolvedReply, context: ResponsesContext): ResponsesResponse {
  return responseObject(reply, context, 'completed');
}

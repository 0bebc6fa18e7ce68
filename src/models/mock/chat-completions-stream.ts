import type { MockUsage, ResolvedReply, ServerSentEvent } from './script.js';

/**
 * What the Chat Completions encoders need besides the reply: the model name echoed back, the
 * creation time (Unix seconds), and whether the request asked for a usage chunk
 * (`stream_options.include_usage`).
 */
export interface ChatCompletionContext {
  model: string;
  createdSeconds: number;
  includeUsage: boolean;
}

/** The `usage` object of OpenAI Chat Completions, counts in tokens. */
export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

/** A `chat.completion.chunk` object as streamed by OpenAI Chat Completions. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  service_tier: string;
  system_fingerprint: string;
  choices: Array<{
    index: number;
    delta: Record<string, unknown>;
    logprobs: null;
    finish_reason: 'stop' | 'tool_calls' | null;
  }>;
  usage?: ChatCompletionUsage | null;
}

/** A non-streamed `chat.completion` object as returned by OpenAI Chat Completions. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  service_tier: string;
  system_fingerprint: string;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      /** The reasoning, in the field vLLM and DeepSeek use; absent when the reply does not reason. */
      reasoning_content?: string;
      refusal: null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
      annotations: [];
    };
    logprobs: null;
    finish_reason: 'stop' | 'tool_calls';
  }>;
  usage: ChatCompletionUsage;
}

const SYSTEM_FINGERPRINT = 'fp_mock';

/** Stable completion id, so tests can assert on it: `chatcmpl-mock-<request number>`. */
function completionId(reply: ResolvedReply): string {
  return `chatcmpl-mock-${reply.requestNumber}`;
}

function finishReason(reply: ResolvedReply): 'stop' | 'tool_calls' {
  return reply.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/**
 * Converts scripted usage to the Chat Completions `usage` object.
 * Source: OpenAI Chat Completions object reference (`usage`, `*_tokens_details`).
 */
export function toChatCompletionUsage(usage: MockUsage): ChatCompletionUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/**
 * Encodes a reply as the Chat Completions stream, in the order OpenAI sends it
 * (source: OpenAI Chat Completions streaming, `chat.completion.chunk` objects):
 *
 * 1. a role chunk `delta: {role: "assistant", content: "" | null}`;
 * 2. when the reply reasons, one chunk per reasoning delta `delta: {reasoning_content}` — OpenAI
 *    itself never sends reasoning here; this is what vLLM and DeepSeek-style servers send;
 * 3. one chunk per text delta `delta: {content}`;
 * 4. per tool call, a chunk opening it `delta.tool_calls[{index, id, type: "function",
 *    function: {name, arguments: ""}}]`, then one chunk per arguments piece
 *    `delta.tool_calls[{index, function: {arguments}}]`;
 * 5. a closing chunk with an empty delta and `finish_reason` `stop` or `tool_calls`;
 * 6. when `includeUsage`, a chunk with `choices: []` and `usage` (every earlier chunk then
 *    carries `usage: null`, as OpenAI does);
 * 7. the `[DONE]` terminator.
 *
 * @returns Events whose `data` is a {@link ChatCompletionChunk} or the string `[DONE]`; no `event` name.
 */
export function encodeChatCompletionStream(reply: ResolvedReply, context: ChatCompletionContext): ServerSentEvent[] {
  const base = {
    id: completionId(reply),
    object: 'chat.completion.chunk' as const,
    created: context.createdSeconds,
    model: context.model,
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
  const chunk = (
    delta: Record<string, unknown>,
    finish: 'stop' | 'tool_calls' | null = null,
  ): ChatCompletionChunk => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(context.includeUsage ? { usage: null } : {}),
  });

  const events: ServerSentEvent[] = [];
  // OpenAI opens with an empty string content when text follows, and null when only tool calls do.
  events.push({
    data: chunk({ role: 'assistant', content: reply.hasText ? '' : null, refusal: null }),
    isDelta: false,
  });
  for (const reasoning of reply.reasoningDeltas) {
    events.push({ data: chunk({ reasoning_content: reasoning }), isDelta: true });
  }
  for (const text of reply.textDeltas) {
    events.push({ data: chunk({ content: text }), isDelta: true });
  }
  reply.toolCalls.forEach((call, index) => {
    events.push({
      data: chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
      isDelta: true,
    });
    for (const piece of call.argumentDeltas) {
      events.push({ data: chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), isDelta: true });
    }
  });
  events.push({ data: chunk({}, finishReason(reply)), isDelta: false, finishes: true });
  if (context.includeUsage) {
    const usageChunk: ChatCompletionChunk = { ...base, choices: [], usage: toChatCompletionUsage(reply.usage) };
    events.push({ data: usageChunk, isDelta: false });
  }
  events.push({ data: '[DONE]', isDelta: false });
  return events;
}

/**
 * Encodes a reply as a non-streamed `chat.completion` object (source: OpenAI Chat Completions
 * object reference). `content` is null when the reply has only tool calls; `tool_calls` is
 * present only when there are some; `reasoning_content` (vLLM / DeepSeek style) only when the
 * reply reasons.
 */
export function encodeChatCompletion(reply: ResolvedReply, context: ChatCompletionContext): ChatCompletion {
  const message: ChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: reply.hasText ? reply.textDeltas.join('') : null,
    ...(reply.hasReasoning ? { reasoning_content: reply.reasoningDeltas.join('') } : {}),
    refusal: null,
    annotations: [],
  };
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: 'function' as const,
      function: { name: call.name, arguments: call.argumentsText },
    }));
  }
  return {
    id: completionId(reply),
    object: 'chat.completion',
    created: context.createdSeconds,
    model: context.model,
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(reply) }],
    usage: toChatCompletionUsage(reply.usage),
  };
}

/**
 * The mock provider's Anthropic Messages and Gemini wire formats, scripted reasoning in all four
 * formats, mid-stream disconnects and holds released by the test — driven through the real AI SDK providers over HTTP, and
 * through raw fetch for the exact framing.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, streamText, tool, type LanguageModel, type ModelMessage } from 'ai';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { MockProviderServer, parseMockScript, resolveReply, type MockScript } from '../../src/models/mock/index.js';

const runningServers: MockProviderServer[] = [];

beforeAll(() => {
  // The Anthropic provider warns that `mock-model` is an unknown model on every call; the
  // warnings are irrelevant here and would bury real test output.
  globalThis.AI_SDK_LOG_WARNINGS = false;
});

afterEach(async () => {
  await Promise.all(runningServers.splice(0).map((server) => server.stop()));
});

async function startMock(script: MockScript): Promise<{ server: MockProviderServer; baseURL: string }> {
  const server = new MockProviderServer(script);
  runningServers.push(server);
  const { baseURL } = await server.start({ port: 0 });
  return { server, baseURL };
}

type ModelFactory = (baseURL: string) => LanguageModel;
type Api = 'chat' | 'responses' | 'anthropic' | 'google';

const anthropicModel: ModelFactory = (baseURL) => createAnthropic({ baseURL, apiKey: 'none' })('mock-model');
const googleModel: ModelFactory = (baseURL) => createGoogleGenerativeAI({ baseURL, apiKey: 'none' })('mock-model');
const responsesModel: ModelFactory = (baseURL) => createOpenAI({ baseURL, apiKey: 'none' })('mock-model');
const openAIChatModel: ModelFactory = (baseURL) => createOpenAI({ baseURL, apiKey: 'none' }).chat('mock-model');
const compatibleChatModel: ModelFactory = (baseURL) =>
  createOpenAICompatible({ name: 'local', baseURL, apiKey: 'none', includeUsage: true })('mock-model');

const readFileTool = tool({
  description: 'Read a file of the workspace.',
  inputSchema: z.object({ path: z.string() }),
});

/** streamText logs stream errors by default; these tests inspect them instead. */
function ignoreError(): void {}

/** Runs a stream to its end and returns the first error part it carried. */
async function firstStreamError(result: { fullStream: AsyncIterable<{ type: string; error?: unknown }> }): Promise<unknown> {
  let found: unknown;
  for await (const part of result.fullStream) {
    if (part.type === 'error' && found === undefined) found = part.error;
  }
  return found;
}

/** The recorded body of a model request, as a plain object. */
function bodyOf(server: MockProviderServer, index: number): Record<string, unknown> {
  const request = server.requests[index];
  if (!request) throw new Error(`no request ${index} recorded`);
  return request.body as Record<string, unknown>;
}

/** What a stream carried, in order, and the error its iteration ended with (if any). */
interface StreamOutcome {
  kinds: string[];
  textDeltas: string[];
  reasoningDeltas: string[];
  thrown: unknown;
}

/** Reads a whole `fullStream`, keeping what arrived even when the iteration throws. */
async function collect(result: { fullStream: AsyncIterable<{ type: string; text?: string }> }): Promise<StreamOutcome> {
  const outcome: StreamOutcome = { kinds: [], textDeltas: [], reasoningDeltas: [], thrown: undefined };
  try {
    for await (const part of result.fullStream) {
      outcome.kinds.push(part.type);
      // Anthropic closes a thinking block with an empty delta carrying the signature.
      if (part.type === 'reasoning-delta' && part.text !== '') outcome.reasoningDeltas.push(part.text ?? '');
      if (part.type === 'text-delta') outcome.textDeltas.push(part.text ?? '');
    }
  } catch (error) {
    outcome.thrown = error;
  }
  return outcome;
}

/** The whole text of an error and its causes, so assertions can name the root cause. */
function describeError(error: unknown): string {
  const messages: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    messages.push(current.message);
    current = current.cause;
  }
  return messages.join(' <- ');
}

/** Splits an SSE body into its messages (blocks separated by a blank line) with `lineBreak` lines. */
function sseMessages(body: string, lineBreak = '\n'): string[] {
  const separator = lineBreak + lineBreak;
  expect(body.endsWith(separator)).toBe(true);
  return body.slice(0, -separator.length).split(separator);
}

/** Parses Anthropic-style `event:` + `data:` messages, checking that each `data.type` repeats its event name. */
function namedEvents(body: string): Array<Record<string, unknown> & { type: string }> {
  return sseMessages(body).map((message, index) => {
    const match = /^event: ([^\n]+)\ndata: ([^\n]+)$/.exec(message);
    expect(match, `message ${index}: ${message}`).not.toBeNull();
    const data = JSON.parse(match?.[2] ?? '{}') as Record<string, unknown> & { type: string };
    expect(data.type).toBe(match?.[1]);
    return data;
  });
}

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Anthropic Messages and Gemini, each through its real AI SDK provider. */
const newProviders: Array<{
  label: string;
  api: Api;
  model: ModelFactory;
  /** Usage as the SDK reports it for `{inputTokens: 120, outputTokens: 30, cachedInputTokens: 20, cacheWriteInputTokens: 10}`. */
  expectedInputDetails: { noCacheTokens: number; cacheReadTokens: number; cacheWriteTokens: number | undefined };
  /** The tool result as the provider sends it back on the second request. */
  expectToolResult: (body: Record<string, unknown>) => void;
  retryableError: { status: number; wireType: string };
}> = [
  {
    label: 'Anthropic Messages (createAnthropic({ baseURL }))',
    api: 'anthropic',
    model: anthropicModel,
    // Anthropic counts cache reads and writes apart from input_tokens; the SDK adds them back.
    expectedInputDetails: { noCacheTokens: 90, cacheReadTokens: 20, cacheWriteTokens: 10 },
    expectToolResult: (body) => {
      expect(body.messages).toContainEqual({
        role: 'assistant',
        content: [
          { type: 'text', text: "I'll read the file first." },
          { type: 'tool_use', id: 'call_read_1', name: 'read_file', input: { path: 'src/sum.js' } },
        ],
      });
      expect(body.messages).toContainEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_read_1', content: 'export const sum = (a, b) => a + b;' }],
      });
    },
    retryableError: { status: 529, wireType: 'overloaded_error' },
  },
  {
    label: 'Gemini (createGoogleGenerativeAI({ baseURL }))',
    api: 'google',
    model: googleModel,
    // Gemini reports cached tokens inside the prompt count and has no cache-write count.
    expectedInputDetails: { noCacheTokens: 100, cacheReadTokens: 20, cacheWriteTokens: undefined },
    expectToolResult: (body) => {
      expect(body.contents).toContainEqual({
        role: 'model',
        parts: [
          { text: "I'll read the file first." },
          { functionCall: { id: 'call_read_1', name: 'read_file', args: { path: 'src/sum.js' } } },
        ],
      });
      expect(body.contents).toContainEqual({
        role: 'user',
        parts: [
          {
            functionResponse: {
              id: 'call_read_1',
              name: 'read_file',
              response: { name: 'read_file', content: 'export const sum = (a, b) => a + b;' },
            },
          },
        ],
      });
    },
    retryableError: { status: 503, wireType: 'UNAVAILABLE' },
  },
];

for (const provider of newProviders) {
  describe(provider.label, () => {
    it('streams the scripted deltas in order and reports input, cached and output tokens', async () => {
      const { server, baseURL } = await startMock({
        responses: [
          {
            deltas: ['Hello', ', ', 'wor', 'ld!'],
            usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 20, cacheWriteInputTokens: 10 },
          },
        ],
      });
      const result = streamText({ model: provider.model(baseURL), prompt: 'Say hello.', maxRetries: 0 });
      const received: string[] = [];
      for await (const delta of result.textStream) received.push(delta);

      expect(received).toEqual(['Hello', ', ', 'wor', 'ld!']);
      expect(await result.finishReason).toBe('stop');
      const usage = await result.usage;
      expect(usage.inputTokens).toBe(120);
      expect(usage.inputTokenDetails).toEqual(provider.expectedInputDetails);
      expect(usage.outputTokens).toBe(30);
      expect(usage.totalTokens).toBe(150);
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]?.api).toBe(provider.api);
    });

    it('round-trips a tool call: the second request carries the tool result in the provider format', async () => {
      const { server, baseURL } = await startMock({
        responses: [
          {
            text: "I'll read the file first.",
            toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' }, id: 'call_read_1' }],
          },
          { text: 'The file exports sum.' },
        ],
      });
      const model = provider.model(baseURL);
      const messages: ModelMessage[] = [{ role: 'user', content: 'What does src/sum.js export?' }];
      const first = streamText({ model, messages, tools: { read_file: readFileTool }, maxRetries: 0 });

      expect(await first.text).toBe("I'll read the file first.");
      expect(await first.finishReason).toBe('tool-calls');
      const toolCalls = await first.toolCalls;
      expect(toolCalls).toHaveLength(1);
      expect(toolCalls[0]).toMatchObject({ toolCallId: 'call_read_1', toolName: 'read_file', input: { path: 'src/sum.js' } });

      messages.push(...(await first.response).messages, {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_read_1',
            toolName: 'read_file',
            output: { type: 'text', value: 'export const sum = (a, b) => a + b;' },
          },
        ],
      });
      const second = streamText({ model, messages, tools: { read_file: readFileTool }, maxRetries: 0 });
      expect(await second.text).toBe('The file exports sum.');

      expect(server.requests.map((request) => request.api)).toEqual([provider.api, provider.api]);
      provider.expectToolResult(bodyOf(server, 1));
    });

    it('answers a non-streaming request with the complete JSON body', async () => {
      const { server, baseURL } = await startMock({
        responses: [
          {
            text: 'All tests pass.',
            toolCalls: [{ name: 'read_file', arguments: { path: 'a.js' }, id: 'call_2' }],
            usage: { inputTokens: 7, outputTokens: 4 },
          },
        ],
      });
      const result = await generateText({
        model: provider.model(baseURL),
        prompt: 'Run the tests.',
        tools: { read_file: readFileTool },
        maxRetries: 0,
      });
      expect(result.text).toBe('All tests pass.');
      expect(result.toolCalls).toMatchObject([{ toolCallId: 'call_2', toolName: 'read_file', input: { path: 'a.js' } }]);
      expect(result.finishReason).toBe('tool-calls');
      expect(result.usage.inputTokens).toBe(7);
      expect(result.usage.outputTokens).toBe(4);
      expect(server.requests[0]?.path).not.toMatch(/stream/i);
      expect(bodyOf(server, 0).stream).not.toBe(true);
    });

    it('surfaces a scripted 429 with its message and Retry-After', async () => {
      const { baseURL } = await startMock({
        responses: [{ error: { status: 429, message: 'slow down', retryAfterSeconds: 2 } }],
      });
      const error = await firstStreamError(
        streamText({ model: provider.model(baseURL), prompt: 'Hi', maxRetries: 0, onError: ignoreError }),
      );
      expect(APICallError.isInstance(error)).toBe(true);
      const apiError = error as APICallError;
      expect(apiError.statusCode).toBe(429);
      expect(apiError.message).toBe('slow down');
      expect(apiError.responseHeaders?.['retry-after']).toBe('2');
      expect(apiError.isRetryable).toBe(true);
    });

    it('surfaces a scripted server error as a retryable error in the provider error body', async () => {
      const { status, wireType } = provider.retryableError;
      const { baseURL } = await startMock({ responses: [{ error: { status, message: 'try later', type: 'overloaded_error' } }] });
      const error = await firstStreamError(
        streamText({ model: provider.model(baseURL), prompt: 'Hi', maxRetries: 0, onError: ignoreError }),
      );
      expect(APICallError.isInstance(error)).toBe(true);
      const apiError = error as APICallError;
      expect(apiError.statusCode).toBe(status);
      expect(apiError.message).toBe('try later');
      expect(apiError.isRetryable).toBe(true);
      expect(apiError.responseBody).toContain(`"${wireType}"`);
    });
  });
}

/** The four wire formats through the SDK providers that read reasoning from them. */
const reasoningClients: Array<{ label: string; api: Api; model: ModelFactory }> = [
  { label: 'OpenAI Responses (reasoning summary events)', api: 'responses', model: responsesModel },
  { label: 'Chat Completions via createOpenAICompatible (delta.reasoning_content)', api: 'chat', model: compatibleChatModel },
  { label: 'Anthropic Messages (thinking block)', api: 'anthropic', model: anthropicModel },
  { label: 'Gemini (thought parts)', api: 'google', model: googleModel },
];

describe('reasoning', () => {
  for (const client of reasoningClients) {
    it(`${client.label}: arrives as reasoning-delta parts before the text, with reasoning tokens`, async () => {
      const { server, baseURL } = await startMock({
        responses: [
          {
            reasoningDeltas: ['The test ', 'fails on ', 'line 10.'],
            deltas: ['Fixing ', 'it.'],
            usage: { inputTokens: 50, outputTokens: 20, reasoningTokens: 8 },
          },
        ],
      });
      const result = streamText({ model: client.model(baseURL), prompt: 'Why does it fail?', maxRetries: 0 });
      const outcome = await collect(result);

      expect(outcome.thrown).toBeUndefined();
      expect(outcome.reasoningDeltas).toEqual(['The test ', 'fails on ', 'line 10.']);
      expect(outcome.textDeltas).toEqual(['Fixing ', 'it.']);
      expect(outcome.kinds.lastIndexOf('reasoning-delta')).toBeLessThan(outcome.kinds.indexOf('text-delta'));
      expect(await result.reasoningText).toBe('The test fails on line 10.');
      const usage = await result.usage;
      expect(usage.outputTokens).toBe(20);
      expect(usage.outputTokenDetails.reasoningTokens).toBe(8);
      expect(server.requests[0]?.api).toBe(client.api);
    });

    it(`${client.label}: comes whole in a non-streamed answer`, async () => {
      const { baseURL } = await startMock({ responses: [{ reasoning: 'Think first.', text: 'Done.' }] });
      const result = await generateText({ model: client.model(baseURL), prompt: 'Go.', maxRetries: 0 });
      expect(result.reasoningText).toBe('Think first.');
      expect(result.text).toBe('Done.');
      // Without scripted usage the reasoning is estimated at four characters a token.
      expect(result.usage.outputTokenDetails.reasoningTokens).toBe(3);
    });
  }

  it('Anthropic: the thinking block goes back with its signature alongside the tool result', async () => {
    const { server, baseURL } = await startMock({
      responses: [
        { reasoning: 'Need the file.', toolCalls: [{ name: 'read_file', arguments: { path: 'a.js' }, id: 'call_1' }] },
        { text: 'Read it.' },
      ],
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read a.js' }];
    const model = anthropicModel(baseURL);
    const first = streamText({ model, messages, tools: { read_file: readFileTool }, maxRetries: 0 });
    const reasoning = await first.reasoning;
    const signature = reasoning[0]?.providerMetadata?.anthropic?.signature;
    expect(typeof signature).toBe('string');

    messages.push(...(await first.response).messages, {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text', value: 'x' } }],
    });
    expect(await streamText({ model, messages, tools: { read_file: readFileTool }, maxRetries: 0 }).text).toBe('Read it.');
    expect(bodyOf(server, 1).messages).toContainEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Need the file.', signature },
        { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'a.js' } },
      ],
    });
  });

  it('Gemini: the thought signature goes back on the function call', async () => {
    const { server, baseURL } = await startMock({
      responses: [
        { reasoning: 'Need the file.', toolCalls: [{ name: 'read_file', arguments: { path: 'a.js' }, id: 'call_1' }] },
        { text: 'Read it.' },
      ],
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read a.js' }];
    const model = googleModel(baseURL);
    const first = streamText({ model, messages, tools: { read_file: readFileTool }, maxRetries: 0 });
    const toolCalls = await first.toolCalls;
    const signature = toolCalls[0]?.providerMetadata?.google?.thoughtSignature;
    expect(typeof signature).toBe('string');

    messages.push(...(await first.response).messages, {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text', value: 'x' } }],
    });
    expect(await streamText({ model, messages, tools: { read_file: readFileTool }, maxRetries: 0 }).text).toBe('Read it.');
    expect(bodyOf(server, 1).contents).toContainEqual({
      role: 'model',
      parts: [
        { text: 'Need the file.', thought: true },
        { functionCall: { id: 'call_1', name: 'read_file', args: { path: 'a.js' } }, thoughtSignature: signature },
      ],
    });
  });

  it('Responses: encrypted_content arrives when included and goes back as a reasoning input item', async () => {
    const { server, baseURL } = await startMock({
      responses: [
        { reasoning: 'Need the file.', toolCalls: [{ name: 'read_file', arguments: { path: 'a.js' }, id: 'call_1' }] },
        { text: 'Read it.' },
      ],
    });
    // With store: false the SDK cannot refer to stored items, so it sends the reasoning back whole.
    const providerOptions = { openai: { include: ['reasoning.encrypted_content'], store: false } };
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read a.js' }];
    const model = responsesModel(baseURL);
    const first = streamText({ model, messages, tools: { read_file: readFileTool }, providerOptions, maxRetries: 0 });
    const reasoning = await first.reasoning;
    const encrypted = reasoning[0]?.providerMetadata?.openai?.reasoningEncryptedContent;
    expect(typeof encrypted).toBe('string');
    expect(bodyOf(server, 0).include).toEqual(['reasoning.encrypted_content']);

    messages.push(...(await first.response).messages, {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text', value: 'x' } }],
    });
    const second = streamText({ model, messages, tools: { read_file: readFileTool }, providerOptions, maxRetries: 0 });
    expect(await second.text).toBe('Read it.');
    expect(bodyOf(server, 1).input).toContainEqual({
      type: 'reasoning',
      id: 'rs_mock_1',
      encrypted_content: encrypted,
      summary: [{ type: 'summary_text', text: 'Need the file.' }],
    });
  });
});

const disconnectClients: Array<{ label: string; model: ModelFactory }> = [
  { label: 'OpenAI Responses', model: responsesModel },
  { label: 'OpenAI Chat Completions', model: openAIChatModel },
  { label: 'OpenAI-compatible Chat Completions', model: compatibleChatModel },
  { label: 'Anthropic Messages', model: anthropicModel },
  { label: 'Gemini', model: googleModel },
];

describe('mid-stream disconnect', () => {
  for (const client of disconnectClients) {
    it(`${client.label}: keeps the deltas received before the socket is destroyed, then fails`, async () => {
      const { server, baseURL } = await startMock({
        responses: [
          { deltas: ['one ', 'two ', 'three ', 'four'], disconnectAfterDeltas: 2 },
          { text: 'next' },
        ],
      });
      const model = client.model(baseURL);
      const result = streamText({ model, prompt: 'Count.', maxRetries: 0, onError: ignoreError });
      const outcome = await collect(result);

      expect(outcome.textDeltas).toEqual(['one ', 'two ']);
      expect(outcome.kinds).not.toContain('finish');
      expect(describeError(outcome.thrown)).toMatch(/terminated|other side closed/);
      await expect(result.text).rejects.toThrow();
      // The broken connection does not disturb the next request.
      expect(await streamText({ model, prompt: 'Again.', maxRetries: 0 }).text).toBe('next');
      expect(server.requests).toHaveLength(2);
    });
  }

  it('counts reasoning deltas too, so a stream can break in the middle of the reasoning', async () => {
    const { baseURL } = await startMock({
      responses: [{ reasoningDeltas: ['a ', 'b ', 'c '], text: 'never sent', disconnectAfterDeltas: 2 }],
    });
    const outcome = await collect(streamText({ model: anthropicModel(baseURL), prompt: 'x', maxRetries: 0, onError: ignoreError }));
    expect(outcome.reasoningDeltas).toEqual(['a ', 'b ']);
    expect(outcome.textDeltas).toEqual([]);
    expect(outcome.thrown).toBeDefined();
  });

  it('drops a non-streamed request unanswered', async () => {
    const { baseURL } = await startMock({ responses: [{ text: 'never sent', disconnectAfterDeltas: 0 }] });
    const failure = await generateText({ model: googleModel(baseURL), prompt: 'x', maxRetries: 0 }).catch((error: unknown) => error);
    expect(APICallError.isInstance(failure)).toBe(true);
    expect(describeError(failure)).toMatch(/other side closed/);
  });

  it('sends exactly N delta events on the wire before the connection breaks (raw fetch)', async () => {
    const { baseURL } = await startMock({ responses: [{ deltas: ['a', 'b', 'c', 'd'], disconnectAfterDeltas: 3 }] });
    const response = await post(`${baseURL}/chat/completions`, { model: 'm', stream: true, messages: [] });
    expect(response.status).toBe(200);
    let received = '';
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) received += decoder.decode(chunk, { stream: true });
    })();
    await expect(reading).rejects.toThrow(/terminated/);
    const chunks = sseMessages(received).map((message) => JSON.parse(message.slice('data: '.length)));
    expect(chunks.map((chunk) => chunk.choices[0].delta.content)).toEqual(['', 'a', 'b', 'c']);
    expect(received).not.toContain('[DONE]');
  });
});

describe('disconnectBeforeFinish (raw fetch)', () => {
  const cases = [
    { path: '/chat/completions', body: { model: 'm', stream: true, messages: [] }, whole: '"arguments":"}"', end: '"finish_reason":"tool_calls"' },
    { path: '/responses', body: { model: 'm', stream: true, input: 'x' }, whole: '"type":"response.output_item.done"', end: 'response.completed' },
    { path: '/messages', body: { model: 'm', stream: true, max_tokens: 10, messages: [] }, whole: '"type":"content_block_stop"', end: 'message_delta' },
  ];
  it.each(cases)('$path: sends the text and the whole tool call, then breaks the connection instead of ending the answer', async ({ path, body, whole, end }) => {
    const { baseURL } = await startMock({ responses: [{ text: 'looking', toolCalls: [{ name: 'list_dir', arguments: '{}', id: 'call_1' }], disconnectBeforeFinish: true }] });
    const response = await post(`${baseURL}${path}`, body);
    expect(response.status).toBe(200);
    let received = '';
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) received += decoder.decode(chunk, { stream: true });
    })();
    await expect(reading).rejects.toThrow(/terminated/);
    expect(received).toContain('looking');
    expect(received).toContain('call_1');
    expect(received).toContain(whole);
    expect(received).not.toContain(end);
  });
});

describe('wire framing of Anthropic Messages (raw fetch)', () => {
  const script: MockScript = {
    responses: [
      {
        reasoningDeltas: ['Hm', 'm.'],
        deltas: ['Rea', 'ding.'],
        toolCalls: [{ name: 'read_file', arguments: '{"path":"a.js"}', id: 'toolu_1' }],
        usage: { inputTokens: 30, outputTokens: 12, cachedInputTokens: 10, cacheWriteInputTokens: 5, reasoningTokens: 4 },
      },
    ],
  };

  it('streams named events in Anthropic order: message_start, blocks with ping, message_delta, message_stop', async () => {
    const { server, baseURL } = await startMock(script);
    const response = await post(`${baseURL}/messages`, { model: 'claude-test', stream: true, max_tokens: 100, messages: [] });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = namedEvents(await response.text());

    expect(events.map((event) => event.type)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]).toEqual({
      type: 'message_start',
      message: {
        id: 'msg_mock_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // input_tokens excludes the cache reads and writes, which Anthropic reports apart.
        usage: { input_tokens: 15, cache_creation_input_tokens: 5, cache_read_input_tokens: 10, output_tokens: 1 },
      },
    });
    expect(events[1]).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    expect(events.slice(3, 5).map((event) => event.delta)).toEqual([
      { type: 'thinking_delta', thinking: 'Hm' },
      { type: 'thinking_delta', thinking: 'm.' },
    ]);
    const reply = resolveReply(script.responses[0] ?? { text: '' }, 1, {});
    expect(events[5]).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: reply.reasoningSignature },
    });
    expect(events[7]).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } });
    expect(events.slice(8, 10).map((event) => event.delta)).toEqual([
      { type: 'text_delta', text: 'Rea' },
      { type: 'text_delta', text: 'ding.' },
    ]);
    expect(events[11]).toEqual({
      type: 'content_block_start',
      index: 2,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} },
    });
    const pieces = events.slice(12, 15).map((event) => {
      expect(event).toMatchObject({ index: 2, delta: { type: 'input_json_delta' } });
      return (event.delta as { partial_json: string }).partial_json;
    });
    expect(pieces.join('')).toBe('{"path":"a.js"}');
    expect(events.filter((event) => event.type === 'content_block_stop').map((event) => event.index)).toEqual([0, 1, 2]);
    expect(events[16]).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 12, output_tokens_details: { thinking_tokens: 4 } },
    });
    expect(server.requests[0]).toMatchObject({ api: 'anthropic', path: '/v1/messages' });
  });

  it('ends a text-only message with stop_reason end_turn and no thinking details', async () => {
    const { baseURL } = await startMock({ responses: [{ text: 'Hi.', usage: { inputTokens: 3, outputTokens: 1 } }] });
    const events = namedEvents(await (await post(`${baseURL}/messages`, { model: 'c', stream: true, messages: [] })).text());
    expect(events.map((event) => event.type)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[5]).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 1 },
    });
  });

  it('answers a non-streaming request with one message object', async () => {
    const { baseURL } = await startMock(script);
    const response = await post(`${baseURL}/messages`, { model: 'claude-test', max_tokens: 100, messages: [] });
    expect(response.headers.get('content-type')).toBe('application/json');
    const reply = resolveReply(script.responses[0] ?? { text: '' }, 1, {});
    expect(await response.json()).toEqual({
      id: 'msg_mock_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [
        { type: 'thinking', thinking: 'Hmm.', signature: reply.reasoningSignature },
        { type: 'text', text: 'Reading.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.js' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 15,
        cache_creation_input_tokens: 5,
        cache_read_input_tokens: 10,
        output_tokens: 12,
        output_tokens_details: { thinking_tokens: 4 },
      },
    });
  });

  it('answers errors with the Anthropic error body, Retry-After and the Anthropic type for the status', async () => {
    const { baseURL } = await startMock({
      responses: [
        { error: { status: 429, message: 'slow down', retryAfterSeconds: 7 } },
        // An OpenAI-only type is replaced by the Anthropic type for the status.
        { error: { status: 500, message: 'boom', type: 'server_error' } },
      ],
    });
    const limited = await post(`${baseURL}/messages`, { model: 'c', messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    const failed = await post(`${baseURL}/messages`, { model: 'c', messages: [] });
    expect(await failed.json()).toEqual({ type: 'error', error: { type: 'api_error', message: 'boom' } });

    const malformed = await fetch(`${baseURL}/messages`, { method: 'POST', body: '{"model": ' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});

describe('wire framing of Gemini (raw fetch)', () => {
  const script: MockScript = {
    responses: [
      {
        reasoningDeltas: ['Hm', 'm.'],
        deltas: ['Rea', 'ding.'],
        toolCalls: [{ name: 'read_file', arguments: { path: 'a.js' }, id: 'call_1' }],
        usage: { inputTokens: 30, outputTokens: 12, cachedInputTokens: 10, reasoningTokens: 4 },
      },
    ],
  };
  const finalUsage = {
    promptTokenCount: 30,
    candidatesTokenCount: 8,
    totalTokenCount: 42,
    cachedContentTokenCount: 10,
    thoughtsTokenCount: 4,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: 30 }],
  };

  it('streams data-only SSE with CRLF line endings, one GenerateContentResponse per delta', async () => {
    const { server, baseURL } = await startMock(script);
    const response = await post(`${baseURL}/models/gemini-test:streamGenerateContent?alt=sse`, { contents: [] });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = await response.text();
    // Every line break is CRLF, as Google's servers send.
    expect(body.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    const messages = sseMessages(body, '\r\n');
    for (const message of messages) expect(message).toMatch(/^data: [^\r\n]+$/);
    const chunks = messages.map((message) => JSON.parse(message.slice('data: '.length)));

    expect(chunks.map((chunk) => chunk.candidates[0].content.parts)).toEqual([
      [{ text: 'Hm', thought: true }],
      [{ text: 'm.', thought: true }],
      [{ text: 'Rea' }],
      [{ text: 'ding.' }],
      [
        {
          functionCall: { id: 'call_1', name: 'read_file', args: { path: 'a.js' } },
          thoughtSignature: resolveReply(script.responses[0] ?? { text: '' }, 1, {}).reasoningSignature,
        },
      ],
    ]);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ modelVersion: 'gemini-test', responseId: 'mock-response-1' });
      expect(chunk.candidates[0]).toMatchObject({ index: 0, content: { role: 'model' } });
    }
    expect(chunks.slice(0, -1).every((chunk) => !('finishReason' in chunk.candidates[0]))).toBe(true);
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP');
    expect(chunks.at(-1).usageMetadata).toEqual(finalUsage);
    // Usage runs along the stream and only grows, as Gemini reports it on every chunk.
    const totals = chunks.map((chunk) => chunk.usageMetadata.totalTokenCount as number);
    expect(totals).toEqual([...totals].sort((a, b) => a - b));
    expect(totals[0]).toBeLessThan(42);
    expect(server.requests[0]).toMatchObject({ api: 'google', path: '/v1/models/gemini-test:streamGenerateContent' });
  });

  it('answers generateContent with one response and streamGenerateContent without alt=sse with a JSON array', async () => {
    const { baseURL } = await startMock({ ...script, responses: [...script.responses, { text: 'Hi.' }] });
    const whole = await post(`${baseURL}/models/gemini-test:generateContent`, { contents: [] });
    expect(whole.headers.get('content-type')).toBe('application/json');
    expect(await whole.json()).toEqual({
      candidates: [
        {
          content: {
            parts: [
              { text: 'Hmm.', thought: true },
              { text: 'Reading.' },
              {
                functionCall: { id: 'call_1', name: 'read_file', args: { path: 'a.js' } },
                thoughtSignature: resolveReply(script.responses[0] ?? { text: '' }, 1, {}).reasoningSignature,
              },
            ],
            role: 'model',
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: finalUsage,
      modelVersion: 'gemini-test',
      responseId: 'mock-response-1',
    });

    const array = await post(`${baseURL}/models/gemini-test:streamGenerateContent`, { contents: [] });
    const chunks = (await array.json()) as Array<{ candidates: Array<{ content: { parts: unknown[] }; finishReason?: string }> }>;
    expect(chunks.map((chunk) => chunk.candidates[0]?.content.parts)).toEqual([[{ text: 'Hi.' }]]);
    expect(chunks[0]?.candidates[0]?.finishReason).toBe('STOP');
  });

  it('sends an empty reply as one chunk with an empty text part and the finish reason', async () => {
    const { baseURL } = await startMock({ responses: [{ text: '', usage: { inputTokens: 2, outputTokens: 0 } }] });
    const body = await (await post(`${baseURL}/models/gemini-test:streamGenerateContent?alt=sse`, { contents: [] })).text();
    const chunks = sseMessages(body, '\r\n').map((message) => JSON.parse(message.slice('data: '.length)));
    expect(chunks).toHaveLength(1);
    expect(chunks[0].candidates[0]).toEqual({ content: { parts: [{ text: '' }], role: 'model' }, finishReason: 'STOP', index: 0 });
  });

  it('answers errors with the Google error body, its status name and RetryInfo', async () => {
    const { baseURL } = await startMock({
      responses: [{ error: { status: 429, message: 'Resource exhausted.', retryAfterSeconds: 3 } }],
    });
    const url = `${baseURL}/models/gemini-test:streamGenerateContent?alt=sse`;
    const limited = await post(url, { contents: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toEqual({
      error: {
        code: 429,
        message: 'Resource exhausted.',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' }],
      },
    });
    const exhausted = await post(url, { contents: [] });
    expect(exhausted.status).toBe(500);
    expect(await exhausted.json()).toEqual({
      error: {
        code: 500,
        message: 'mock script has no response left for request number 2 (the script serves 1 responses)',
        status: 'INTERNAL',
      },
    });
    const unknownMethod = await post(`${baseURL}/models/gemini-test:countTokens`, { contents: [] });
    expect(unknownMethod.status).toBe(404);
  });
});

describe('wire framing of reasoning in the OpenAI formats (raw fetch)', () => {
  const script: MockScript = { responses: [{ reasoningDeltas: ['Hm', 'm.'], text: 'Ok.' }] };

  it('Responses: a reasoning item with summary events comes first; encrypted_content only when included', async () => {
    const { baseURL } = await startMock({ responses: [...script.responses, ...script.responses] });
    const plain = namedEvents(await (await post(`${baseURL}/responses`, { model: 'm', stream: true, input: 'hi' })).text());
    expect(plain.map((event) => event.type).slice(0, 9)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
    ]);
    expect(plain[2]).toMatchObject({ output_index: 0, item: { id: 'rs_mock_1', type: 'reasoning', summary: [] } });
    expect(plain[3]).toMatchObject({
      item_id: 'rs_mock_1',
      output_index: 0,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    expect(plain.slice(4, 6).map((event) => event.delta)).toEqual(['Hm', 'm.']);
    expect(plain[6]).toMatchObject({ text: 'Hmm.' });
    expect(plain[8]).toMatchObject({ item: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hmm.' }] } });
    expect(plain[9]).toMatchObject({ type: 'response.output_item.added', output_index: 1, item: { type: 'message' } });
    expect(JSON.stringify(plain)).not.toContain('encrypted_content');

    const included = namedEvents(
      await (
        await post(`${baseURL}/responses`, { model: 'm', stream: true, input: 'hi', include: ['reasoning.encrypted_content'] })
      ).text(),
    );
    const signature = resolveReply(script.responses[0] ?? { text: '' }, 2, {}).reasoningSignature;
    expect(included[2]).toMatchObject({ item: { type: 'reasoning', encrypted_content: signature } });
    expect(included[8]).toMatchObject({ item: { type: 'reasoning', encrypted_content: signature } });
    const completed = included.at(-1) as unknown as { response: { output: Array<{ type: string; encrypted_content?: string }> } };
    expect(completed.response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(completed.response.output[0]?.encrypted_content).toBe(signature);
  });

  it('Chat Completions: reasoning_content chunks after the role chunk and before the content', async () => {
    const { baseURL } = await startMock({ responses: [...script.responses, ...script.responses] });
    const streamed = await post(`${baseURL}/chat/completions`, { model: 'm', stream: true, messages: [] });
    const chunks = sseMessages(await streamed.text())
      .slice(0, -1)
      .map((message) => JSON.parse(message.slice('data: '.length)));
    expect(chunks.map((chunk) => chunk.choices[0].delta)).toEqual([
      { role: 'assistant', content: '', refusal: null },
      { reasoning_content: 'Hm' },
      { reasoning_content: 'm.' },
      { content: 'Ok.' },
      {},
    ]);

    const whole = (await (await post(`${baseURL}/chat/completions`, { model: 'm', messages: [] })).json()) as {
      choices: Array<{ message: Record<string, unknown> }>;
    };
    expect(whole.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Ok.', reasoning_content: 'Hmm.' });
  });
});

describe('script fields for reasoning, disconnects and cache writes', () => {
  it('splits reasoning into word deltas and estimates its tokens when no usage is scripted', () => {
    const reply = resolveReply({ reasoning: 'twelve chars', text: 'abcd' }, 3, {});
    expect(reply.hasReasoning).toBe(true);
    expect(reply.reasoningDeltas).toEqual(['twelve ', 'chars']);
    expect(reply.usage).toMatchObject({ outputTokens: 4, reasoningTokens: 3, cacheWriteInputTokens: 0 });
    expect(reply.disconnectAfterDeltas).toBeUndefined();
    expect(resolveReply({ text: 'x' }, 3, {}).reasoningSignature).toBe(reply.reasoningSignature);
    expect(resolveReply({ text: 'x' }, 4, {}).reasoningSignature).not.toBe(reply.reasoningSignature);
  });

  it('rejects reasoning with reasoningDeltas, error entries with reply fields, and usage parts above their totals', () => {
    expect(() => parseMockScript('{"responses":[{"text":"a","reasoning":"r","reasoningDeltas":["r"]}]}', 's.json')).toThrow(
      /s\.json: responses\[0\]\.reasoningDeltas: use either reasoning or reasoningDeltas/,
    );
    expect(() =>
      parseMockScript('responses:\n  - error: { status: 500, message: x }\n    disconnectAfterDeltas: 1\n', 's.yaml'),
    ).toThrow(/responses\[0\]\.error: an error entry cannot also have/);
    expect(() => parseMockScript('responses:\n  - reasoning: r\n', 's.yaml')).toThrow(
      /responses\[0\]: expected one of text, deltas, generatedText, toolCalls or error/,
    );
    expect(() =>
      parseMockScript(
        'responses:\n  - text: a\n    usage: { inputTokens: 5, outputTokens: 5, cachedInputTokens: 3, cacheWriteInputTokens: 3 }\n',
        's.yaml',
      ),
    ).toThrow(/responses\[0\]\.usage\.cachedInputTokens: cachedInputTokens \+ cacheWriteInputTokens cannot exceed/);
    expect(() =>
      parseMockScript('responses:\n  - text: a\n    usage: { inputTokens: 5, outputTokens: 2, reasoningTokens: 3 }\n', 's.yaml'),
    ).toThrow(/responses\[0\]\.usage\.reasoningTokens: reasoningTokens cannot exceed outputTokens/);
    expect(() => parseMockScript('responses:\n  - text: a\n    disconnectAfterDeltas: -1\n', 's.yaml')).toThrow(
      /responses\[0\]\.disconnectAfterDeltas/,
    );
  });
});

describe('holds', () => {
  const formats: { api: Api; model: ModelFactory }[] = [
    { api: 'responses', model: responsesModel },
    // The OpenAI provider drops Chat Completions reasoning; the compatible one reads it.
    { api: 'chat', model: compatibleChatModel },
    { api: 'anthropic', model: anthropicModel },
    { api: 'google', model: googleModel },
  ];

  it.each(formats)('$api: a stream waits at its hold until the gate opens, reasoning deltas counting', async ({ model }) => {
    const { server, baseURL } = await startMock({
      responses: [
        {
          reasoningDeltas: ['think ', 'more'],
          deltas: ['one ', 'two ', 'three'],
          holds: [
            { afterDeltas: 1, gate: 'reasoning' },
            { afterDeltas: 3, gate: 'text' },
          ],
        },
      ],
    });
    const log: string[] = [];
    const result = streamText({ model: model(baseURL), prompt: 'x', maxRetries: 0 });
    const read = (async () => {
      for await (const part of result.fullStream) {
        // Anthropic's signature arrives as an empty reasoning delta.
        if ((part.type === 'reasoning-delta' || part.type === 'text-delta') && part.text !== '') log.push(part.text);
      }
    })();

    await server.waitForHold('reasoning', 10_000);
    await vi.waitFor(() => expect(log).toEqual(['think ']), { timeout: 10_000 });
    // A held stream is not finished: the answer cannot have been written completely.
    expect(server.requests[0]?.answeredAt).toBeUndefined();
    log.push('<reasoning released>');
    server.release('reasoning');

    await server.waitForHold('text', 10_000);
    await vi.waitFor(() => expect(log.at(-1)).toBe('one '), { timeout: 10_000 });
    expect(server.requests[0]?.answeredAt).toBeUndefined();
    log.push('<text released>');
    server.release('text');
    await read;
    expect(log).toEqual(['think ', '<reasoning released>', 'more', 'one ', '<text released>', 'two ', 'three']);
  });

  it('does not stop at a gate opened before the stream reaches it; a hold past the last delta waits before the end; a gate opens over HTTP', async () => {
    const { server, baseURL } = await startMock({
      responses: [
        { deltas: ['a ', 'b'], holds: [{ afterDeltas: 0, gate: 'open' }, { afterDeltas: 5, gate: 'end' }] },
        { text: 'plain', holds: [{ afterDeltas: 0, gate: 'json' }] },
      ],
    });
    server.release('open');
    const result = streamText({ model: responsesModel(baseURL), prompt: 'x', maxRetries: 0 });
    const text = result.text;
    await server.waitForHold('open', 10_000);
    await server.waitForHold('end', 10_000);
    expect(server.requests[0]?.answeredAt).toBeUndefined();
    // Another process opens a gate over HTTP.
    const released = await fetch(`${baseURL.replace(/\/v1$/, '')}/mock/gates/end/release`, { method: 'POST' });
    expect([released.status, await released.json()]).toEqual([200, { released: 'end' }]);
    expect(await text).toBe('a b');

    // A non-streamed answer waits for its gates before it is sent.
    const answer = generateText({ model: responsesModel(baseURL), prompt: 'y', maxRetries: 0 });
    await server.waitForHold('json', 10_000);
    expect(server.requests[1]?.answeredAt).toBeUndefined();
    server.release('json');
    expect((await answer).text).toBe('plain');
  });

  it('ends a held stream when the server stops, and refuses holds on an error entry', async () => {
    const { server, baseURL } = await startMock({ responses: [{ deltas: ['a ', 'b'], holds: [{ afterDeltas: 1, gate: 'never' }] }] });
    const result = streamText({ model: responsesModel(baseURL), prompt: 'x', maxRetries: 0, onError: () => undefined });
    const consumed = result.consumeStream({ onError: () => undefined });
    await server.waitForHold('never', 10_000);
    const waiting = expect(server.waitForHold('other', 10_000)).rejects.toThrow('stopped');
    await server.stop();
    await consumed;
    await waiting;
    expect(() => parseMockScript('responses:\n  - error: { status: 500, message: "x" }\n    holds: [{ afterDeltas: 0, gate: g }]\n', 's.yaml')).toThrow(/streamError or holds/);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, streamText, tool, type LanguageModel, type ModelMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runMockProviderCommand } from '../../src/cli/dev-mock-provider.js';
import {
  generatedTextDeltas,
  loadMockScript,
  MockProviderServer,
  MockScriptError,
  parseMockScript,
  resolveReply,
  type MockScript,
} from '../../src/models/mock/index.js';

const runningServers: MockProviderServer[] = [];

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

/** The three ways the runtime reaches a model, all pointed at the mock. */
const clients: Array<{ label: string; api: 'chat' | 'responses'; model: ModelFactory }> = [
  {
    label: 'OpenAI Responses (createOpenAI(baseURL)(model))',
    api: 'responses',
    model: (baseURL) => createOpenAI({ baseURL, apiKey: 'none' })('mock-model'),
  },
  {
    label: 'OpenAI Chat Completions (createOpenAI(baseURL).chat(model))',
    api: 'chat',
    model: (baseURL) => createOpenAI({ baseURL, apiKey: 'none' }).chat('mock-model'),
  },
  {
    label: 'OpenAI-compatible Chat Completions (createOpenAICompatible)',
    api: 'chat',
    model: (baseURL) =>
      createOpenAICompatible({ name: 'local', baseURL, apiKey: 'none', includeUsage: true })('mock-model'),
  },
];

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

for (const client of clients) {
  describe(client.label, () => {
    it('streams the scripted deltas in order and reports the scripted usage', async () => {
      const { server, baseURL } = await startMock({
        responses: [{ deltas: ['Hello', ', ', 'wor', 'ld!'], usage: { inputTokens: 120, outputTokens: 30 } }],
      });
      const result = streamText({ model: client.model(baseURL), prompt: 'Say hello.', maxRetries: 0 });
      const received: string[] = [];
      for await (const delta of result.textStream) received.push(delta);

      expect(received).toEqual(['Hello', ', ', 'wor', 'ld!']);
      expect(await result.text).toBe('Hello, world!');
      expect(await result.finishReason).toBe('stop');
      const usage = await result.usage;
      expect(usage.inputTokens).toBe(120);
      expect(usage.outputTokens).toBe(30);
      expect(usage.totalTokens).toBe(150);
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]?.api).toBe(client.api);
      expect(bodyOf(server, 0).stream).toBe(true);
    });

    it('delivers a scripted tool call with parsed arguments and records the tool result sent back', async () => {
      const { server, baseURL } = await startMock({
        responses: [
          {
            text: "I'll read the file first.",
            toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' }, id: 'call_read_1' }],
          },
          { text: 'The file exports sum.' },
        ],
      });
      const model = client.model(baseURL);
      const messages: ModelMessage[] = [{ role: 'user', content: 'What does src/sum.js export?' }];
      const first = streamText({ model, messages, tools: { read_file: readFileTool }, maxRetries: 0 });

      expect(await first.text).toBe("I'll read the file first.");
      expect(await first.finishReason).toBe('tool-calls');
      const toolCalls = await first.toolCalls;
      expect(toolCalls).toHaveLength(1);
      expect(toolCalls[0]).toMatchObject({
        toolCallId: 'call_read_1',
        toolName: 'read_file',
        input: { path: 'src/sum.js' },
      });

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

      expect(server.requests).toHaveLength(2);
      const secondBody = bodyOf(server, 1);
      if (client.api === 'responses') {
        expect(secondBody.input).toContainEqual(
          expect.objectContaining({
            type: 'function_call_output',
            call_id: 'call_read_1',
            output: 'export const sum = (a, b) => a + b;',
          }),
        );
      } else {
        expect(secondBody.messages).toContainEqual(
          expect.objectContaining({
            role: 'tool',
            tool_call_id: 'call_read_1',
            content: 'export const sum = (a, b) => a + b;',
          }),
        );
        expect(secondBody.messages).toContainEqual(
          expect.objectContaining({
            role: 'assistant',
            tool_calls: [expect.objectContaining({ id: 'call_read_1', function: expect.objectContaining({ name: 'read_file' }) })],
          }),
        );
      }
    });

    it('answers a non-streaming request with the complete JSON body', async () => {
      const { server, baseURL } = await startMock({
        responses: [{ text: 'All tests pass.', usage: { inputTokens: 7, outputTokens: 4 } }],
      });
      const result = await generateText({ model: client.model(baseURL), prompt: 'Run the tests.', maxRetries: 0 });
      expect(result.text).toBe('All tests pass.');
      expect(result.usage.inputTokens).toBe(7);
      expect(result.usage.outputTokens).toBe(4);
      expect(bodyOf(server, 0).stream).not.toBe(true);
    });

    it('surfaces a scripted 500 as an API error carrying the message', async () => {
      const { baseURL } = await startMock({
        responses: [{ error: { status: 500, message: 'upstream failed', type: 'server_error' } }],
      });
      const error = await firstStreamError(streamText({ model: client.model(baseURL), prompt: 'Hi', maxRetries: 0, onError: ignoreError }));
      expect(APICallError.isInstance(error)).toBe(true);
      const apiError = error as APICallError;
      expect(apiError.statusCode).toBe(500);
      expect(apiError.message).toBe('upstream failed');
      expect(apiError.isRetryable).toBe(true);
    });
  });
}

describe('errors', () => {
  const responsesModel = (baseURL: string) => createOpenAI({ baseURL, apiKey: 'none' })('mock-model');

  it('sends Retry-After and the OpenAI error body with a scripted 429', async () => {
    const { baseURL } = await startMock({
      responses: [{ error: { status: 429, message: 'slow down', retryAfterSeconds: 2 } }],
    });
    const error = await firstStreamError(streamText({ model: responsesModel(baseURL), prompt: 'Hi', maxRetries: 0, onError: ignoreError }));
    expect(APICallError.isInstance(error)).toBe(true);
    const apiError = error as APICallError;
    expect(apiError.statusCode).toBe(429);
    expect(apiError.message).toBe('slow down');
    expect(apiError.responseHeaders?.['retry-after']).toBe('2');
    expect(JSON.parse(apiError.responseBody ?? '')).toEqual({
      error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    });
  });

  it('lets the SDK retry past a scripted error honoring Retry-After', async () => {
    const { server, baseURL } = await startMock({
      responses: [{ error: { status: 503, message: 'overloaded', retryAfterSeconds: 0 } }, { text: 'Recovered.' }],
    });
    const result = streamText({ model: responsesModel(baseURL), prompt: 'Hi', maxRetries: 1 });
    expect(await result.text).toBe('Recovered.');
    expect(server.requests).toHaveLength(2);
  });

  it('answers with a clear error once the script is exhausted', async () => {
    const { baseURL } = await startMock({ responses: [{ text: 'only one' }] });
    const model = createOpenAI({ baseURL, apiKey: 'none' }).chat('mock-model');
    expect(await streamText({ model, prompt: 'one', maxRetries: 0 }).text).toBe('only one');
    const error = await firstStreamError(streamText({ model, prompt: 'two', maxRetries: 0, onError: ignoreError }));
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(500);
    expect((error as APICallError).message).toMatch(/mock script has no response left for request number 2/);
  });

  it('answers unknown paths with 404 and malformed JSON with 400, both as OpenAI error bodies', async () => {
    const { server, baseURL } = await startMock({ responses: [{ text: 'unused' }] });
    const unknown = await fetch(`${baseURL}/embeddings`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/embeddings/);

    const malformed = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    expect(server.requests).toHaveLength(0);
  });

  it('lists the mock model', async () => {
    const { baseURL } = await startMock({ responses: [] });
    const response = await fetch(`${baseURL}/models`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ object: 'list', data: [{ id: 'mock-model', object: 'model' }] });
  });

  it('refuses to listen on a non-loopback host', async () => {
    const server = new MockProviderServer({ responses: [] });
    await expect(server.start({ host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });
});

/** Splits an SSE body into its messages (blocks separated by a blank line). */
function sseMessages(body: string): string[] {
  expect(body.endsWith('\n\n')).toBe(true);
  return body.slice(0, -2).split('\n\n');
}

describe('wire framing (raw fetch)', () => {
  it('frames Chat Completions as data-only SSE ending with [DONE], with split tool arguments and a usage chunk', async () => {
    const { baseURL } = await startMock({
      responses: [
        {
          text: 'Reading.',
          toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' }, id: 'call_1' }],
          usage: { inputTokens: 10, outputTokens: 5 },
        },
      ],
    });
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, stream_options: { include_usage: true }, messages: [] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = sseMessages(await response.text());
    for (const message of messages) expect(message).toMatch(/^data: [^\n]+$/);
    expect(messages.at(-1)).toBe('data: [DONE]');

    const chunks = messages.slice(0, -1).map((message) => JSON.parse(message.slice('data: '.length)));
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: 'chatcmpl-mock-1', object: 'chat.completion.chunk', model: 'gpt-test' });
      expect(typeof chunk.created).toBe('number');
    }
    expect(chunks[0].choices[0]).toEqual({
      index: 0,
      delta: { role: 'assistant', content: '', refusal: null },
      logprobs: null,
      finish_reason: null,
    });
    const argumentPieces = chunks
      .flatMap((chunk) => chunk.choices.flatMap((choice: { delta: { tool_calls?: unknown[] } }) => choice.delta.tool_calls ?? []))
      .map((call: { function: { arguments: string } }) => call.function.arguments)
      .filter((piece: string) => piece !== '');
    expect(argumentPieces.length).toBeGreaterThan(1);
    expect(argumentPieces.join('')).toBe('{"path":"src/sum.js"}');
    const opening = chunks.find((chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.id !== undefined);
    expect(opening.choices[0].delta.tool_calls[0]).toEqual({
      index: 0,
      id: 'call_1',
      type: 'function',
      function: { name: 'read_file', arguments: '' },
    });
    const finishing = chunks.at(-2);
    expect(finishing.choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  });

  it('omits the Chat Completions usage chunk when include_usage is not set', async () => {
    const { baseURL } = await startMock({ responses: [{ text: 'Hi.' }] });
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [] }),
    });
    const messages = sseMessages(await response.text());
    const chunks = messages.slice(0, -1).map((message) => JSON.parse(message.slice('data: '.length)));
    expect(chunks.every((chunk) => chunk.choices.length === 1 && !('usage' in chunk))).toBe(true);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  it('frames Responses events with event and data lines, type and sequence_number, in the documented order', async () => {
    const { baseURL } = await startMock({
      responses: [
        {
          deltas: ['Rea', 'ding.'],
          toolCalls: [{ name: 'read_file', arguments: '{"path":"a.js"}', id: 'call_9' }],
          usage: { inputTokens: 3, outputTokens: 2 },
        },
      ],
    });
    const response = await fetch(`${baseURL}/responses`, {
      method: 'POST',
      body: JSON.stringify({ model: 'gpt-test', stream: true, input: 'hi' }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = sseMessages(await response.text());
    const events = messages.map((message, index) => {
      const match = /^event: ([^\n]+)\ndata: ([^\n]+)$/.exec(message);
      expect(match, `message ${index}: ${message}`).not.toBeNull();
      const data = JSON.parse(match?.[2] ?? '{}');
      expect(data.type).toBe(match?.[1]);
      expect(data.sequence_number).toBe(index);
      return data;
    });
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0].response).toMatchObject({ id: 'resp_mock_1', status: 'in_progress', model: 'gpt-test', output: [] });
    expect(events[9].item).toMatchObject({ type: 'function_call', call_id: 'call_9', name: 'read_file', arguments: '' });
    expect(events[13].arguments).toBe('{"path":"a.js"}');
    const completed = events.at(-1).response;
    expect(completed.status).toBe('completed');
    expect(completed.usage).toEqual({
      input_tokens: 3,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 5,
    });
    expect(completed.output.map((item: { type: string }) => item.type)).toEqual(['message', 'function_call']);
    expect(completed.output[0].content[0].text).toBe('Reading.');
  });

  it('paces deltas by delayMs so streaming is observable', async () => {
    const { baseURL } = await startMock({ responses: [{ deltas: ['a', 'b', 'c'], delayMs: 120 }] });
    const result = streamText({ model: createOpenAI({ baseURL, apiKey: 'none' }).chat('m'), prompt: 'x', maxRetries: 0 });
    const arrivals: Array<{ delta: string; at: number }> = [];
    for await (const delta of result.textStream) arrivals.push({ delta, at: Date.now() });
    expect(arrivals.map((arrival) => arrival.delta)).toEqual(['a', 'b', 'c']);
    const first = arrivals[0]?.at ?? 0;
    const last = arrivals[2]?.at ?? 0;
    expect(last - first).toBeGreaterThanOrEqual(200);
  });
});

describe('client abort', () => {
  it('stops a paced stream when the client aborts and keeps serving later requests', async () => {
    const { server, baseURL } = await startMock({
      responses: [{ deltas: ['one ', 'two ', 'three ', 'four ', 'five'], delayMs: 400 }, { text: 'next' }],
    });
    const model = createOpenAI({ baseURL, apiKey: 'none' }).chat('mock-model');
    const controller = new AbortController();
    const aborted = streamText({ model, prompt: 'x', maxRetries: 0, abortSignal: controller.signal, onError: ignoreError });
    const received: string[] = [];
    const startedAt = Date.now();
    try {
      for await (const delta of aborted.textStream) {
        received.push(delta);
        controller.abort();
      }
    } catch {
      // The SDK may reject the iteration on abort; what matters is what arrived.
    }
    expect(received).toEqual(['one ']);
    // The whole stream takes 2 s (5 deltas 400 ms apart); stopped after the first, well under it.
    expect(Date.now() - startedAt).toBeLessThan(1_400);
    expect(await streamText({ model, prompt: 'y', maxRetries: 0 }).text).toBe('next');
    expect(server.requests).toHaveLength(2);
  });
});

describe('script', () => {
  it('estimates usage at four characters a token when the script gives none', () => {
    const body = { messages: [{ role: 'user', content: 'count me' }] };
    const reply = resolveReply({ text: 'twelve chars' }, 1, body);
    expect(reply.usage).toEqual({
      inputTokens: Math.ceil(JSON.stringify(body).length / 4),
      outputTokens: 3,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      reasoningTokens: 0,
    });
    expect(reply.textDeltas).toEqual(['twelve ', 'chars']);
  });

  it('names the file and key path of an invalid value', () => {
    const text = [
      'responses:',
      '  - text: one',
      '  - text: two',
      '  - toolCalls:',
      '      - name: 42',
      '        arguments: { path: a.js }',
    ].join('\n');
    expect(() => parseMockScript(text, 'script.yaml')).toThrow(MockScriptError);
    expect(() => parseMockScript(text, 'script.yaml')).toThrow(
      /^script\.yaml: responses\[2\]\.toolCalls\[0\]\.name: expected string/,
    );
  });

  it('rejects entries that mix text with deltas or an error with output, and unknown keys', () => {
    expect(() => parseMockScript('{"responses":[{"text":"a","deltas":["a"]}]}', 's.json')).toThrow(
      /s\.json: responses\[0\]\.deltas: use either text or deltas/,
    );
    expect(() =>
      parseMockScript('responses:\n  - text: a\n    error: { status: 500, message: x }\n', 's.yaml'),
    ).toThrow(/responses\[0\]\.error: an error entry cannot also have/);
    expect(() => parseMockScript('responses:\n  - txt: a\n', 's.yaml')).toThrow(/s\.yaml: responses\[0\]/);
  });

  it('loads a script file and reports unreadable and unparsable files by name', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'mock-script-'));
    try {
      const good = join(directory, 'good.yaml');
      await writeFile(good, 'responses:\n  - text: hi\n    repeat: 2\n');
      expect(await loadMockScript(good)).toEqual({ responses: [{ text: 'hi', repeat: 2 }] });

      const broken = join(directory, 'broken.json');
      await writeFile(broken, '{"responses": [');
      await expect(loadMockScript(broken)).rejects.toThrow(/^broken\.json: cannot parse/);
      // A YAML syntax error is one line naming where it is, without the library's code excerpt.
      const unclosed = join(directory, 'unclosed.yaml');
      await writeFile(unclosed, 'responses: [\n');
      await expect(loadMockScript(unclosed)).rejects.toThrow(/^unclosed\.yaml: cannot parse: Flow sequence .* at line 2, column 1:$/);
      await expect(loadMockScript(join(directory, 'missing.yaml'))).rejects.toThrow(/^missing\.yaml: cannot read/);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('serves an entry with repeat N exactly N times', async () => {
    const { server, baseURL } = await startMock({ responses: [{ text: 'again', repeat: 2 }, { text: 'done' }] });
    const model = createOpenAI({ baseURL, apiKey: 'none' })('mock-model');
    const texts: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      texts.push(await streamText({ model, prompt: `turn ${index}`, maxRetries: 0 }).text);
    }
    expect(texts).toEqual(['again', 'again', 'done']);
    await server.waitForRequests(3, 1000);
    await expect(server.waitForRequests(4, 50)).rejects.toThrow(/expected 4 model requests within 50 ms, received 3/);
  });
});

describe('runMockProviderCommand', () => {
  it('starts the server from a script file and prints the listening line', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'mock-cli-'));
    try {
      const scriptFile = join(directory, 'script.yaml');
      await writeFile(scriptFile, 'responses:\n  - text: "from the command"\n');
      const stdout = new PassThrough();
      let printed = '';
      stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      const server = await runMockProviderCommand({ scriptFile, port: 0, stdout });
      runningServers.push(server);

      const match = /^mock provider listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n$/.exec(printed);
      expect(match).not.toBeNull();
      const model = createOpenAI({ baseURL: match?.[1] ?? '', apiKey: 'none' }).chat('mock-model');
      expect(await streamText({ model, prompt: 'hi', maxRetries: 0 }).text).toBe('from the command');

      // A second one on the same port names the option to change, as serve does.
      const port = Number(new URL(match?.[1] ?? '').port);
      await expect(runMockProviderCommand({ scriptFile, port, stdout: new PassThrough() })).rejects.toThrow(`--port ${port}: cannot listen on 127.0.0.1:${port}: already in use (another server listens there; 0 picks a free port) (EADDRINUSE)`);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('fails with the key path when the script is invalid', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'mock-cli-'));
    try {
      const scriptFile = join(directory, 'bad.yaml');
      await writeFile(scriptFile, 'responses:\n  - error: { status: 200, message: nope }\n');
      await expect(runMockProviderCommand({ scriptFile, port: 0, stdout: new PassThrough() })).rejects.toThrow(
        /^bad\.yaml: responses\[0\]\.error\.status: /,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('generatedText', () => {
  it('resolves to N numbered deltas of the given length that concatenate to the reply text', () => {
    const deltas = generatedTextDeltas({ deltas: 12, deltaLength: 4 });
    expect(deltas).toHaveLength(12);
    expect(deltas.slice(0, 3)).toEqual(['xx0 ', 'xx1 ', 'xx2 ']);
    expect(deltas[11]).toBe('x11 ');
    expect(deltas.every((delta) => delta.length === 4)).toBe(true);
    const script = parseMockScript('responses:\n  - generatedText: { deltas: 12, deltaLength: 4 }\n', 's.yaml');
    const reply = resolveReply(script.responses[0]!, 1, {});
    expect(reply.hasText).toBe(true);
    expect(reply.textDeltas).toEqual(deltas);
    // The default length is 8 characters.
    expect(resolveReply(parseMockScript('responses:\n  - generatedText: { deltas: 2 }\n', 's.yaml').responses[0]!, 1, {}).textDeltas).toEqual(['xxxxxx0 ', 'xxxxxx1 ']);
  });

  it('refuses generatedText mixed with text or deltas, and counts below 1', () => {
    expect(() => parseMockScript('responses:\n  - text: a\n    generatedText: { deltas: 2 }\n', 's.yaml')).toThrow(/responses\[0\]\.generatedText: use generatedText without text or deltas/);
    expect(() => parseMockScript('responses:\n  - generatedText: { deltas: 0 }\n', 's.yaml')).toThrow(/responses\[0\]\.generatedText\.deltas/);
  });

  it('streams 10,000 deltas as 10,000 wire events, one output_text.delta each, and the AI SDK reads them all', async () => {
    const count = 10_000;
    const expected = generatedTextDeltas({ deltas: count, deltaLength: 6 });
    const { baseURL } = await startMock({ responses: [{ generatedText: { deltas: count, deltaLength: 6 } }, { generatedText: { deltas: count, deltaLength: 6 } }] });
    const response = await fetch(`${baseURL}/responses`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, input: 'hi' }) });
    const events = sseMessages(await response.text()).map((message) => JSON.parse(message.split('\ndata: ')[1] ?? '{}') as { type: string; delta?: string; sequence_number: number });
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    expect(deltas.map((event) => event.delta)).toEqual(expected);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.at(-1)?.type).toBe('response.completed');

    const result = streamText({ model: createOpenAI({ baseURL, apiKey: 'none' }).chat('mock-model'), prompt: 'x', maxRetries: 0 });
    let parts = 0;
    let text = '';
    for await (const delta of result.textStream) {
      parts += 1;
      text += delta;
    }
    expect(parts).toBe(count);
    expect(text).toBe(expected.join(''));
  });
});

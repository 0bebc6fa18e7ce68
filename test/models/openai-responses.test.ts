import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelCallError, toModelCallError } from '../../src/models/model-errors.js';
import { encodeRequestBody, responsesInput, responsesRequestBody } from '../../src/models/openai-responses/request-body.js';
import { streamResponse, type ResponsesStreamHandlers } from '../../src/models/openai-responses/response-stream.js';

/** What the next request gets: a status, headers and raw body chunks (a chunk of `null` destroys the socket). */
let nextAnswer: { status: number; headers?: Record<string, string>; chunks: (string | Buffer | null)[] };
let server: http.Server;
let baseURL: string;

function sse(...events: Record<string, unknown>[]): string[] {
  return events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
}

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      expect(JSON.parse(body)).toMatchObject({ stream: true });
      response.writeHead(nextAnswer.status, { 'content-type': nextAnswer.status === 200 ? 'text/event-stream' : 'application/json', ...nextAnswer.headers });
      const chunks = [...nextAnswer.chunks];
      // Each chunk is flushed before the next, so a `null` breaks the connection after what came before has left.
      const writeNext = () => {
        const chunk = chunks.shift();
        if (chunk === undefined) response.end();
        else if (chunk === null) response.socket?.destroy();
        else response.write(chunk, writeNext);
      };
      writeNext();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function recorder() {
  const seen: string[] = [];
  const handlers: ResponsesStreamHandlers = {
    onTextDelta: (text) => seen.push(`text ${text}`),
    onReasoningStart: (id, metadata) => seen.push(`reasoning-start ${id} ${JSON.stringify(metadata)}`),
    onReasoningDelta: (id, text) => seen.push(`reasoning ${id} ${text}`),
    onReasoningEnd: (id, metadata) => seen.push(`reasoning-end ${id} ${JSON.stringify(metadata)}`),
    onToolCall: (callId, name, input) => seen.push(`tool ${callId} ${name} ${JSON.stringify(input)}`),
    onFinish: (usage, reason) => seen.push(`finish ${reason} ${usage.inputTokens}/${usage.outputTokens}/${usage.cachedInputTokens ?? '-'}/${usage.reasoningTokens ?? '-'}`),
  };
  return { seen, handlers };
}

async function run(answer: typeof nextAnswer, apiKey: string | null = 'key') {
  nextAnswer = answer;
  const { seen, handlers } = recorder();
  const outcome = await streamResponse({ connection: { baseURL, ...(apiKey !== null ? { apiKey } : {}) }, body: { model: 'm', input: [], stream: true }, signal: new AbortController().signal, handlers }).then(
    () => undefined,
    (error: unknown) => error,
  );
  return { seen, failure: outcome as ModelCallError | undefined };
}

const completed = { type: 'response.completed', response: { usage: { input_tokens: 10, output_tokens: 4, total_tokens: 14, input_tokens_details: { cached_tokens: 3 }, output_tokens_details: { reasoning_tokens: 2 } } } };

describe('the OpenAI Responses stream client', () => {
  it('folds text, reasoning blocks, tool calls and usage from real server-sent events split anywhere', async () => {
    const events = sse(
      { type: 'response.created', response: {} },
      { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', summary_index: 0, delta: 'think' },
      { type: 'response.reasoning_summary_part.added', item_id: 'rs_1', summary_index: 1 },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', summary_index: 1, delta: 'more' },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_1', type: 'reasoning', encrypted_content: 'SECRET' } },
      { type: 'response.output_text.delta', delta: 'Hel' },
      { type: 'response.output_text.delta', delta: 'lo' },
      { type: 'response.output_item.done', output_index: 2, item: { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"command":"ls"}' } },
      completed,
    ).join('');
    // Chunks cut through events and through a multi-byte character's bytes' neighbourhood.
    const chunks = [events.slice(0, 7), events.slice(7, 150), events.slice(150, 151), events.slice(151)];
    const { seen, failure } = await run({ status: 200, chunks });
    expect(failure).toBeUndefined();
    expect(seen).toEqual([
      'reasoning-start rs_1:0 {"openai":{"itemId":"rs_1","reasoningEncryptedContent":null}}',
      'reasoning rs_1:0 think',
      'reasoning-start rs_1:1 {"openai":{"itemId":"rs_1","reasoningEncryptedContent":null}}',
      'reasoning rs_1:1 more',
      'reasoning-end rs_1:0 {"openai":{"itemId":"rs_1","reasoningEncryptedContent":"SECRET"}}',
      'reasoning-end rs_1:1 {"openai":{"itemId":"rs_1","reasoningEncryptedContent":"SECRET"}}',
      'text Hel',
      'text lo',
      'tool call_1 exec_command {"command":"ls"}',
      'finish tool-calls 10/4/3/2',
    ]);
  });

  it('maps an incomplete response to its finish reason', async () => {
    const { seen } = await run({ status: 200, chunks: sse({ type: 'response.incomplete', response: { incomplete_details: { reason: 'max_output_tokens' }, usage: { input_tokens: 1, output_tokens: 1 } } }) });
    expect(seen).toEqual(['finish length 1/1/-/-']);
  });

  it('names the event and the field of a malformed event, keeping the raw event for the log', async () => {
    const { failure } = await run({ status: 200, chunks: sse({ type: 'response.output_item.done', item: { type: 'function_call', call_id: 'c', name: 'x', arguments: { not: 'a string' } } }, completed) });
    expect(failure).toBeInstanceOf(ModelCallError);
    expect(failure?.message).toBe('the provider sent a malformed "response.output_item.done" event (field item.arguments: expected string, received object)');
    expect(failure?.kind).toBe('malformed_event');
    expect(failure?.detail).toContain('"not":"a string"');
  });

  it('reports an event that is not JSON, and one without a type', async () => {
    const notJson = await run({ status: 200, chunks: ['data: {"type":"response.output_text.delta",\n\n'] });
    expect(notJson.failure?.message).toBe('the provider sent an event that is not valid JSON ("{\\"type\\":\\"response.output_text.delta\\",")');
    const untyped = await run({ status: 200, chunks: ['event: mystery\ndata: {"delta":"x"}\n\n'] });
    expect(untyped.failure?.message).toBe('the provider sent a malformed "mystery" event (field type: expected string, received undefined)');
  });

  it('keeps the provider message and Retry-After of an HTTP error', async () => {
    const { failure } = await run({ status: 429, headers: { 'retry-after': '2' }, chunks: [JSON.stringify({ error: { message: 'slow down' } })] });
    expect(failure?.message).toBe('slow down');
    expect(failure?.httpStatus).toBe(429);
    expect(failure?.retryable).toBe(true);
    expect(failure?.retryAfterMs).toBe(2000);
    const refused = await run({ status: 401, chunks: ['not json'] });
    expect(refused.failure?.message).toBe('401 Unauthorized');
    expect(refused.failure?.retryable).toBe(false);
  });

  it('reports an error event with its code, retryable when transient', async () => {
    const { failure } = await run({ status: 200, chunks: sse({ type: 'error', code: 'server_error', message: 'try again' }) });
    expect(failure?.message).toBe('the provider reported an error mid-answer: server_error: try again');
    expect(failure?.kind).toBe('stream_error');
    expect(failure?.retryable).toBe(true);
    const failed = await run({ status: 200, chunks: sse({ type: 'response.failed', response: { error: { code: 'invalid_prompt', message: 'no' } } }) });
    expect(failed.failure?.message).toBe('the provider reported an error mid-answer: invalid_prompt: no');
    expect(failed.failure?.retryable).toBe(false);
  });

  it('treats a stream that breaks off or ends before response.completed as dropped, after delivering what came', async () => {
    const broken = await run({ status: 200, chunks: [...sse({ type: 'response.output_text.delta', delta: 'par' }), null] });
    expect(broken.seen).toEqual(['text par']);
    expect(broken.failure?.kind).toBe('dropped_stream');
    expect(broken.failure?.retryable).toBe(true);
    const short = await run({ status: 200, chunks: sse({ type: 'response.output_text.delta', delta: 'x' }) });
    expect(short.failure?.kind).toBe('dropped_stream');
    expect(short.failure?.message).toMatch(/^the connection to the provider dropped mid-answer/);
  });

  it('decodes a character whose UTF-8 bytes arrive in two separate writes', async () => {
    const bytes = Buffer.from(sse({ type: 'response.output_text.delta', delta: 'ü✓' }, completed).join(''));
    const cut = bytes.indexOf(Buffer.from('✓')) + 1;
    const { seen, failure } = await run({ status: 200, chunks: [bytes.subarray(0, cut), bytes.subarray(cut)] });
    expect(failure).toBeUndefined();
    expect(seen).toEqual(['text ü✓', 'finish stop 10/4/3/2']);
  });

  it('reports a refused connection as a retryable connection failure naming the address', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const thrown = await streamResponse({ connection: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'key' }, body: {}, signal: new AbortController().signal, handlers: recorder().handlers }).catch((error: unknown) => error);
    const failure = toModelCallError(thrown);
    expect(failure.message).toMatch(new RegExp(`^the request to http://127\\.0\\.0\\.1:${port} failed: connect ECONNREFUSED`));
    expect(failure.kind).toBe('connection');
    expect(failure.retryable).toBe(true);
  });

  it('rejects with the abort reason when aborted before the answer begins, and refuses a baseURL that is not HTTP', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const controller = new AbortController();
      const pending = streamResponse({ connection: { baseURL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: 'key' }, body: {}, signal: controller.signal, handlers: recorder().handlers });
      const reason = new Error('turn interrupted');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
    const ftp = streamResponse({ connection: { baseURL: 'ftp://example.invalid/v1', apiKey: 'key' }, body: {}, signal: new AbortController().signal, handlers: recorder().handlers });
    await expect(ftp).rejects.toThrow('unsupported scheme "ftp:" in the provider\'s baseURL ftp://example.invalid/v1/responses: use http: or https:');
  });

  it('refuses to send a request without an API key, saying where to give one', async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const { failure } = await run({ status: 200, chunks: sse(completed) }, null);
      expect(failure?.message).toMatch(/API key is missing: set apiKey in providers.yaml/);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe('the OpenAI Responses request body', () => {
  it('sends a reasoning item once with all its summary parts and its encrypted content, then calls and results', () => {
    const reasoning = (text: string, encrypted: string | null) => ({ type: 'reasoning' as const, text, providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: encrypted } } });
    const input = responsesInput('be brief', [
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', image: new Uint8Array([1, 2]), mediaType: 'image/png' }] },
      {
        role: 'assistant',
        content: [reasoning('a', null), reasoning('b', 'ENC'), { type: 'text', text: 'ok' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'exec_command', input: { command: 'ls' } }],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'exec_command', output: { type: 'error-text', value: 'exit 1' } }] },
    ], true);
    expect(input).toEqual([
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: 'data:image/png;base64,AQI=' }] },
      { type: 'reasoning', id: 'rs_1', encrypted_content: 'ENC', summary: [{ type: 'summary_text', text: 'a' }, { type: 'summary_text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
      { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{"command":"ls"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'exit 1' },
    ]);
  });

  it('leaves out reasoning another provider wrote and names a part the API cannot take', () => {
    expect(responsesInput(undefined, [{ role: 'assistant', content: [{ type: 'reasoning', text: 'foreign' }] }], false)).toEqual([]);
    expect(() => responsesInput(undefined, [{ role: 'user', content: [{ type: 'file', data: 'x', mediaType: 'application/pdf' }] }], false)).toThrow(/part of type "file"/);
  });

  it('asks for reasoning and its encrypted content only when reasoning options are given', () => {
    const tools = [{ name: 'read_file', description: 'reads', parameters: { type: 'object' } }];
    const plain = responsesRequestBody({ modelId: 'm', messages: [], tools });
    expect(plain).toEqual({ model: 'm', input: [], tools: [{ type: 'function', name: 'read_file', description: 'reads', parameters: { type: 'object' }, strict: false }], stream: true });
    const reasoning = responsesRequestBody({ modelId: 'm', messages: [], tools: [], openai: { reasoningEffort: 'high', reasoningSummary: 'auto', store: false, include: ['reasoning.encrypted_content'] } });
    expect(reasoning).toMatchObject({ reasoning: { effort: 'high', summary: 'auto' }, store: false, include: ['reasoning.encrypted_content'] });
  });

  it('encodes a body to the JSON of the body, its tools encoded once per tool and reused at later steps', () => {
    const tools = [
      { name: 'read_file', description: 'reads «a file»', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      { name: 'exec_command', description: 'runs', parameters: { type: 'object' } },
    ];
    const first = responsesRequestBody({ modelId: 'm', system: 'be brief', messages: [{ role: 'user', content: 'héllo' }], tools });
    expect(JSON.parse(encodeRequestBody(first).toString('utf8'))).toEqual(first);
    // The next step: more input, the same tool objects (entries made once, frozen).
    const second = responsesRequestBody({ modelId: 'm', messages: [{ role: 'user', content: 'héllo' }, { role: 'assistant', content: 'ok' }], tools, openai: { reasoningEffort: 'low' } });
    expect((second.tools as object[])[0]).toBe((first.tools as object[])[0]);
    expect(Object.isFrozen((second.tools as object[])[0])).toBe(true);
    expect(JSON.parse(encodeRequestBody(second).toString('utf8'))).toEqual(second);
    // Without tools, and with entries built by hand (not frozen: serialized each time).
    const bare = responsesRequestBody({ modelId: 'm', messages: [], tools: [] });
    expect(JSON.parse(encodeRequestBody(bare).toString('utf8'))).toEqual(bare);
    const byHand = { model: 'm', input: [], tools: [{ type: 'function', name: 'x', description: 'd', parameters: {}, strict: false }], stream: true };
    expect(JSON.parse(encodeRequestBody(byHand).toString('utf8'))).toEqual(byHand);
    byHand.tools[0]!.name = 'y';
    expect(JSON.parse(encodeRequestBody(byHand).toString('utf8'))).toEqual(byHand);
  });
});

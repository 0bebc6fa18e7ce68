/**
 * The agent loop against each provider kind over real HTTP, the mock speaking that
 * provider's wire format: tool call round trip, usage, reasoning replay, interruption
 * leaving a valid transcript, and a broken stream keeping what arrived.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

type Body = Record<string, unknown>;

interface ProviderCase {
  kind: 'openai' | 'openai-compatible' | 'anthropic' | 'google';
  /** The malformed event's name and the field at fault, as the error must report them. */
  malformed: { event: string; field: string };
  /** Call ids of tool calls and of tool results found in a request body, in order. */
  pairs(body: Body): { calls: string[]; results: string[] };
}

const cases: ProviderCase[] = [
  {
    kind: 'openai',
    malformed: { event: 'response.output_text.delta', field: 'delta' },
    pairs(body) {
      const input = body.input as { type?: string; call_id?: string }[];
      return {
        calls: input.filter((entry) => entry.type === 'function_call').map((entry) => entry.call_id as string),
        results: input.filter((entry) => entry.type === 'function_call_output').map((entry) => entry.call_id as string),
      };
    },
  },
  {
    kind: 'openai-compatible',
    malformed: { event: 'chat.completion.chunk', field: 'choices[0].delta.content' },
    pairs(body) {
      const messages = body.messages as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
      return {
        calls: messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.id)),
        results: messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id as string),
      };
    },
  },
  {
    kind: 'anthropic',
    malformed: { event: 'content_block_delta', field: 'delta.text' },
    pairs(body) {
      const blocks = (body.messages as { content: string | { type: string; id?: string; tool_use_id?: string }[] }[]).flatMap((message) => (typeof message.content === 'string' ? [] : message.content));
      return {
        calls: blocks.filter((block) => block.type === 'tool_use').map((block) => block.id as string),
        results: blocks.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id as string),
      };
    },
  },
  {
    kind: 'google',
    malformed: { event: 'GenerateContentResponse', field: 'candidates[0].content.parts[0].text' },
    pairs(body) {
      // Gemini pairs calls and results by function name and position, not by id.
      const parts = (body.contents as { parts: { functionCall?: { name: string }; functionResponse?: { name: string } }[] }[]).flatMap((content) => content.parts);
      return {
        calls: parts.flatMap((part) => (part.functionCall ? [part.functionCall.name] : [])),
        results: parts.flatMap((part) => (part.functionResponse ? [part.functionResponse.name] : [])),
      };
    },
  },
];

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function providersFor(kind: ProviderCase['kind']) {
  return (baseURL: string) => `providers:\n  p: { kind: ${kind}, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: p/mock-model\n`;
}

function body(index: number): Body {
  const request = harness?.environment.mock.requests[index];
  if (!request) throw new Error(`the mock received no request #${index + 1}`);
  return request.body as Body;
}

describe.each(cases)('provider kind $kind', (provider) => {
  it('runs a tool call round trip and accounts the usage', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "Running it."
    toolCalls: [{ name: exec_command, arguments: { command: "echo round-trip-output" }, id: call_rt }]
    usage: { inputTokens: 100, outputTokens: 20 }
  - text: "It printed round-trip-output."
    usage: { inputTokens: 150, outputTokens: 5 }
`,
      { providersYaml: providersFor(provider.kind) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'run the command' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status, turn?.error).toBe('completed');
    expect(turn?.usage).toMatchObject({ inputTokens: 250, outputTokens: 25, totalTokens: 275 });
    expect(harness.completedItems().map((item) => item.kind)).toEqual(['user_message', 'assistant_message', 'tool_call', 'assistant_message']);
    const second = provider.pairs(body(1));
    expect(second.calls).toHaveLength(1);
    expect(second.results).toEqual(second.calls);
    expect(JSON.stringify(body(1))).toContain('round-trip-output');
  });

  it('records reasoning and sends it back on the next request', async () => {
    harness = await startInProcessServer(
      `
responses:
  - reasoning: "REASONING-5e1: the user wants a listing"
    toolCalls: [{ name: list_dir, arguments: {} }]
  - text: "listed"
`,
      { providersYaml: providersFor(provider.kind) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'list' });
    await harness.turnsCompleted(1);
    const reasoning = harness.completedItems().find((item): item is Extract<Item, { kind: 'reasoning' }> => item.kind === 'reasoning');
    expect(reasoning?.summary).toContain('REASONING-5e1');
    // Chat Completions servers send raw reasoning (`reasoning_content`); the others a summary.
    const field = provider.kind === 'openai-compatible' ? 'reasoningRaw' : 'reasoning';
    expect(harness.events.some((event) => event.method === 'item/delta' && event.params.delta[field])).toBe(true);
    if (provider.kind === 'anthropic') {
      // Anthropic requires the thinking block back, with its signature, before the tool result.
      const blocks = (body(1).messages as { content: { type: string; signature?: string }[] | string }[]).flatMap((message) => (typeof message.content === 'string' ? [] : message.content));
      expect(blocks.find((block) => block.type === 'thinking')?.signature).toBeTruthy();
    }
  });

  it('after an interruption during a tool call, the next request pairs every call with a result', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo started > started.txt; exec sleep 30" }, id: call_cut }]
  - text: "ok"
`,
      { providersYaml: providersFor(provider.kind) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'start the long job' });
    const marker = path.join(harness.environment.workDir, 'started.txt');
    const deadline = Date.now() + 10_000;
    while (!existsSync(marker) || !readFileSync(marker, 'utf8')) {
      if (Date.now() > deadline) throw new Error('the command did not start');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await harness.client.request('session/interrupt', { conversationId });
    await harness.turnsCompleted(1);
    await harness.client.request('session/input', { conversationId, input: 'do something else' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status, turns[1]?.error).toBe('completed');
    const pairs = provider.pairs(body(1));
    expect(pairs.calls).toHaveLength(1);
    expect(pairs.results).toEqual(pairs.calls);
  });

  it('with no retries allowed, keeps the text that arrived before the stream broke, and fails the turn with the error', async () => {
    harness = await startInProcessServer(
      `
responses:
  - deltas: ["PARTIAL-1 ", "PARTIAL-2 ", "never-sent"]
    disconnectAfterDeltas: 2
`,
      { providersYaml: providersFor(provider.kind), limits: { retryPolicy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1, streamIdleTimeoutMs: 300_000 } } },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'talk' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('failed');
    const partial = harness.completedItems().find((item): item is Extract<Item, { kind: 'assistant_message' }> => item.kind === 'assistant_message');
    expect(partial).toMatchObject({ status: 'failed', text: 'PARTIAL-1 PARTIAL-2 ' });
    const failure = harness.completedItems().at(-1);
    expect(failure?.kind).toBe('model_error');
    // A dropped connection, not an HTTP error: no status, and the message says what was kept.
    expect(failure).toMatchObject({ httpStatus: null });
    const message = failure?.kind === 'model_error' ? failure.message : '';
    expect(message).toMatch(/^the connection to the provider dropped mid-answer/);
    expect(message).toContain('kept the 20 characters of text that arrived');
    expect(message).not.toMatch(/HTTP 200|Failed to process successful response/);
    expect(turn?.error).toBe(message);
  });

  it('reports an error event sent mid-answer with the provider\'s type and message', async () => {
    harness = await startInProcessServer(
      `
responses:
  - deltas: ["BEFORE-1 ", "never-sent"]
    streamError: { afterDeltas: 1, status: 400, type: invalid_request_error, message: "MID-STREAM-FAULT-7" }
`,
      { providersYaml: providersFor(provider.kind) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'talk' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('failed');
    const failure = harness.completedItems().at(-1);
    const message = failure?.kind === 'model_error' ? failure.message : '';
    expect(message).toContain('MID-STREAM-FAULT-7');
    expect(message).not.toContain('[object Object]');
    expect(message).not.toContain('\n');
    expect(harness.completedItems().find((item) => item.kind === 'assistant_message')).toMatchObject({ status: 'failed', text: 'BEFORE-1 ' });
  });

  it('reports a malformed event in one line naming the event type and the field', async () => {
    harness = await startInProcessServer(
      `
responses:
  - deltas: ["BEFORE-1 ", "BAD ", "AFTER-2"]
    malformedEventAfterDeltas: 1
`,
      { providersYaml: providersFor(provider.kind) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'talk' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('failed');
    const failure = harness.completedItems().at(-1);
    expect(failure?.kind).toBe('model_error');
    const message = failure?.kind === 'model_error' ? failure.message : '';
    expect(message).toContain(`malformed "${provider.malformed.event}" event`);
    expect(message).toContain(`field ${provider.malformed.field}: expected string, received number`);
    // The full validation report is for the server log, not the user's terminal.
    expect(message).not.toContain('\n');
    expect(message).not.toMatch(/Type validation failed|invalid_union/);
    expect(message.length).toBeLessThan(300);
    expect(turn?.error).toBe(message);
  });

  it('writes the full validation report of a malformed event to the server log', async () => {
    const logLines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    harness = await startInProcessServer(
      `
responses:
  - deltas: ["BEFORE-1 ", "BAD "]
    malformedEventAfterDeltas: 1
`,
      { providersYaml: providersFor(provider.kind), logger: pino({ level: 'warn' }, sink) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'talk' });
    await harness.turnsCompleted(1);
    const entry = logLines.map((line) => JSON.parse(line) as { msg: string; kind?: string; detail?: string }).find((line) => line.kind === 'malformed_event');
    expect(entry?.msg).toContain(`malformed "${provider.malformed.event}" event`);
    expect(entry?.detail).toMatch(/Type validation failed/);
    expect(entry?.detail).toContain('expected string, received number');
  });
});

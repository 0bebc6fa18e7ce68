/**
 * `npm run bench:model-stream`: the CPU one agent step's model answer costs the server, through
 * the AI SDK (`streamText` over `@ai-sdk/openai`'s Responses model) and through the runtime's
 * own Responses client (`src/models/openai-responses/`), on the same mock stream (a short text
 * and one tool call, as in a W20 step). The baseline, in the same run, is a bare `fetch` of
 * the same stream with its events split and `JSON.parse`d and nothing else.
 *
 * Everything runs in this process (the mock too), so each figure includes the mock's share,
 * which is the same for the three.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, streamText } from 'ai';
import { pathToFileURL } from 'node:url';
import { MockProviderServer, parseMockScript } from '../src/models/mock/index.js';
import { responsesRequestBody } from '../src/models/openai-responses/request-body.js';
import { streamResponse } from '../src/models/openai-responses/response-stream.js';
import { median } from './statistics.js';

const REQUESTS = 200;
const ROUNDS = 3;

function script(): string {
  const lines = ['responses:'];
  for (let step = 1; step <= REQUESTS * ROUNDS * 3 + 10; step++) lines.push(`  - text: "step ${step}"`, '    toolCalls:', `      - { name: exec_command, arguments: { command: "echo ${step}" } }`);
  return lines.join('\n');
}

const parameters = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };

/** CPU ms per request of `requests` sequential calls of `one`. */
async function cpuPerRequest(one: () => Promise<void>): Promise<number> {
  await one();
  const before = process.cpuUsage();
  for (let index = 0; index < REQUESTS; index++) await one();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / REQUESTS;
}

/** Runs the benchmark and prints its figures. */
export async function runModelStreamBenchmark(): Promise<void> {
  const mock = new MockProviderServer(parseMockScript(script(), 'model-stream.yaml'));
  const { baseURL } = await mock.start();
  try {
    const sdkModel = createOpenAI({ apiKey: 'bench', baseURL }).responses('mock-model');
    const sdk = async () => {
      const result = streamText({ model: sdkModel, messages: [{ role: 'user', content: 'go' }], tools: { exec_command: { description: 'run', inputSchema: jsonSchema(parameters as Parameters<typeof jsonSchema>[0]) } }, maxRetries: 0 });
      for await (const part of result.fullStream) void part;
    };
    const body = responsesRequestBody({ modelId: 'mock-model', messages: [{ role: 'user', content: 'go' }], tools: [{ name: 'exec_command', description: 'run', parameters }] });
    const noop = () => undefined;
    const own = () => streamResponse({ connection: { baseURL, apiKey: 'bench' }, body, signal: new AbortController().signal, handlers: { onTextDelta: noop, onReasoningStart: noop, onReasoningDelta: noop, onReasoningEnd: noop, onToolCall: noop, onFinish: noop } });
    const bare = async () => {
      const response = await fetch(`${baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const data = buffered.slice(0, end).split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n');
          buffered = buffered.slice(end + 2);
          if (data) JSON.parse(data);
        }
      }
    };
    const figures = { sdk: [] as number[], own: [] as number[], bare: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      figures.bare.push(await cpuPerRequest(bare));
      figures.own.push(await cpuPerRequest(own));
      figures.sdk.push(await cpuPerRequest(sdk));
    }
    const base = median(figures.bare);
    console.log(`model stream: CPU per request (one text + one tool call, ${REQUESTS} requests x ${ROUNDS} alternating rounds, median)`);
    console.log(`  bare fetch + split + JSON.parse (baseline)   ${base.toFixed(2)} ms`);
    console.log(`  runtime's own Responses client              ${median(figures.own).toFixed(2)} ms (${(median(figures.own) / base).toFixed(2)}x)`);
    console.log(`  AI SDK streamText + @ai-sdk/openai          ${median(figures.sdk).toFixed(2)} ms (${(median(figures.sdk) / base).toFixed(2)}x)`);
  } finally {
    await mock.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runModelStreamBenchmark().catch((error: unknown) => {
    console.error((error as Error).stack ?? String(error));
    process.exit(1);
  });
}

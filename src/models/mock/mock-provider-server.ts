import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeChatCompletion, encodeChatCompletionStream } from './chat-completions-stream.js';
import { encodeResponse, encodeResponsesStream } from './responses-stream.js';
import {
  expandMockScript,
  resolveReply,
  type MockError,
  type MockResponseEntry,
  type MockScript,
  type ServerSentEvent,
} from './script.js';

/** The single model the mock lists on `GET /v1/models`; requests may name any model. */
export const MOCK_MODEL_ID = 'mock-model';

/** Path prefix of every endpoint, as in OpenAI's `https://api.openai.com/v1`. */
const BASE_PATH = '/v1';

/** Hosts the mock may listen on: it answers without authentication, so it stays on loopback. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * One model request the mock received, in arrival order.
 * `api` is `chat` for `POST /v1/chat/completions` and `responses` for `POST /v1/responses`;
 * `body` is the parsed JSON body; `requestNumber` is 1-based and decides which script entry answered.
 */
export interface RecordedModelRequest {
  api: 'chat' | 'responses';
  path: string;
  body: unknown;
  headers: IncomingHttpHeaders;
  receivedAt: Date;
  requestNumber: number;
}

/** Where to listen. `port` 0 (the default) picks a free port; `host` defaults to `127.0.0.1`. */
export interface MockProviderStartOptions {
  port?: number;
  host?: string;
}

/** Where the started mock answers; `baseURL` ends with `/v1`, ready for an OpenAI client. */
export interface MockProviderAddress {
  baseURL: string;
  port: number;
}

/** The error body of the OpenAI API: `{"error": {"message", "type", "param", "code"}}`. */
interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function errorBody(message: string, type: string, code: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param: null, code } };
}

/** Defaults that mirror what OpenAI sends for common statuses when the script gives no type/code. */
function defaultErrorFields(status: number): { type: string; code: string | null } {
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A local HTTP server that answers OpenAI Chat Completions and Responses requests from a script,
 * one entry per model request in arrival order, with the real wire formats (SSE streams or JSON
 * bodies, OpenAI error bodies), so clients such as the Vercel AI SDK run unmodified against it.
 *
 * Endpoints under `/v1`: `POST /chat/completions`, `POST /responses`, `GET /models`.
 * Unknown paths answer 404, malformed JSON bodies 400, and a request past the end of the script
 * 500, each with an OpenAI error body.
 */
export class MockProviderServer {
  /** Every model request received, in order (malformed and unknown-path requests excluded). */
  readonly requests: RecordedModelRequest[] = [];
  private readonly entries: MockResponseEntry[];
  private readonly defaultDelayMs: number;
  private server: Server | undefined;
  private readonly waiters = new Set<{ count: number; resolve: () => void; reject: (error: Error) => void }>();

  /** @param script - A validated script (see `parseMockScript` / `loadMockScript`). */
  constructor(script: MockScript) {
    this.entries = expandMockScript(script);
    this.defaultDelayMs = script.delayMs ?? 0;
  }

  /**
   * Starts listening.
   *
   * @returns The base URL (`http://127.0.0.1:PORT/v1`) and the port actually bound.
   * @throws When already started, when `host` is not a loopback address, or when listening fails
   *   (e.g. the port is taken).
   */
  async start(options: MockProviderStartOptions = {}): Promise<MockProviderAddress> {
    if (this.server) throw new Error('mock provider server is already started');
    const host = options.host ?? '127.0.0.1';
    if (!LOOPBACK_HOSTS.has(host)) {
      throw new Error(`mock provider server only listens on loopback (127.0.0.1, ::1, localhost), not ${host}`);
    }
    const server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) {
          this.sendJson(response, 500, errorBody(`mock provider failed: ${(error as Error).message}`, 'server_error'));
        } else {
          response.destroy();
        }
      });
    });
    server.listen(options.port ?? 0, host);
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error))]);
    this.server = server;
    const port = (server.address() as AddressInfo).port;
    const urlHost = host.includes(':') ? `[${host}]` : host;
    return { baseURL: `http://${urlHost}:${port}${BASE_PATH}`, port };
  }

  /**
   * Stops listening, cuts open connections (streams in flight end abruptly) and rejects pending
   * {@link waitForRequests} calls. Does nothing when not started.
   */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    for (const waiter of this.waiters) waiter.reject(new Error('mock provider server stopped'));
    this.waiters.clear();
  }

  /**
   * Resolves once at least `count` model requests have been received.
   *
   * @param timeoutMs - Milliseconds to wait before rejecting.
   * @throws When the timeout passes first (the message gives the count received) or the server stops.
   */
  waitForRequests(count: number, timeoutMs: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(`expected ${count} model requests within ${timeoutMs} ms, received ${this.requests.length}`),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    const method = request.method ?? 'GET';
    if (method === 'GET' && path === `${BASE_PATH}/models`) {
      this.sendJson(response, 200, {
        object: 'list',
        data: [{ id: MOCK_MODEL_ID, object: 'model', created: 0, owned_by: 'openvaala' }],
      });
      return;
    }
    const api =
      method === 'POST' && path === `${BASE_PATH}/chat/completions`
        ? 'chat'
        : method === 'POST' && path === `${BASE_PATH}/responses`
          ? 'responses'
          : undefined;
    if (api === undefined) {
      request.resume();
      this.sendJson(response, 404, errorBody(`Unknown request URL: ${method} ${path}`, 'invalid_request_error', 'unknown_url'));
      return;
    }

    const rawBody = await readBody(request);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch (error) {
      this.sendJson(
        response,
        400,
        errorBody(`We could not parse the JSON body of your request: ${(error as Error).message}`, 'invalid_request_error'),
      );
      return;
    }
    if (!isRecord(body)) {
      this.sendJson(response, 400, errorBody('The request body must be a JSON object.', 'invalid_request_error'));
      return;
    }

    const requestNumber = this.requests.length + 1;
    this.requests.push({ api, path, body, headers: request.headers, receivedAt: new Date(), requestNumber });
    for (const waiter of this.waiters) {
      if (this.requests.length >= waiter.count) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }

    const entry = this.entries[requestNumber - 1];
    if (entry === undefined) {
      this.sendJson(
        response,
        500,
        errorBody(
          `mock script has no response left for request number ${requestNumber} ` +
            `(the script serves ${this.entries.length} responses)`,
          'server_error',
          'mock_script_exhausted',
        ),
      );
      return;
    }
    if (entry.error !== undefined) {
      this.sendScriptedError(response, entry.error);
      return;
    }

    const reply = resolveReply(entry, requestNumber, body);
    const model = typeof body.model === 'string' ? body.model : MOCK_MODEL_ID;
    const createdSeconds = Math.floor(Date.now() / 1000);
    const stream = body.stream === true;
    const delayMs = entry.delayMs ?? this.defaultDelayMs;
    if (api === 'chat') {
      const streamOptions = body.stream_options;
      const includeUsage = isRecord(streamOptions) && streamOptions.include_usage === true;
      const context = { model, createdSeconds, includeUsage };
      if (stream) await this.sendEvents(response, encodeChatCompletionStream(reply, context), delayMs);
      else this.sendJson(response, 200, encodeChatCompletion(reply, context));
    } else {
      const context = { model, createdSeconds };
      if (stream) await this.sendEvents(response, encodeResponsesStream(reply, context), delayMs);
      else this.sendJson(response, 200, encodeResponse(reply, context));
    }
  }

  private sendScriptedError(response: ServerResponse, error: MockError): void {
    const defaults = defaultErrorFields(error.status);
    const headers: Record<string, string> = {};
    if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
    this.sendJson(
      response,
      error.status,
      errorBody(error.message, error.type ?? defaults.type, error.code === undefined ? defaults.code : error.code),
      headers,
    );
  }

  private sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    response.end(text);
  }

  /**
   * Writes SSE events, pausing `delayMs` before each delta so clients can observe streaming.
   * Stops quietly when the client goes away (an aborted turn).
   */
  private async sendEvents(response: ServerResponse, events: ServerSentEvent[], delayMs: number): Promise<void> {
    const disconnected = new AbortController();
    response.on('close', () => disconnected.abort());
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    // Headers go out now: a client waiting on the response must not wait for the first delay.
    response.flushHeaders();
    try {
      for (const event of events) {
        if (event.isDelta && delayMs > 0) await sleep(delayMs, undefined, { signal: disconnected.signal });
        if (disconnected.signal.aborted) return;
        if (!response.write(formatServerSentEvent(event))) {
          await once(response, 'drain', { signal: disconnected.signal });
        }
      }
      response.end();
    } catch (error) {
      if (!disconnected.signal.aborted) throw error;
    }
  }
}

/**
 * Frames one event as SSE text (source: WHATWG HTML, server-sent events): an optional
 * `event: NAME` line, a `data: JSON` line, then a blank line. `[DONE]` is sent verbatim.
 */
export function formatServerSentEvent(event: ServerSentEvent): string {
  const data = event.data === '[DONE]' ? '[DONE]' : JSON.stringify(event.data);
  return `${event.event !== undefined ? `event: ${event.event}\n` : ''}data: ${data}\n\n`;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeError, encodeReply, encodeStreamErrorEvent, matchModelRoute, type ModelApi } from './routes.js';
import {
  expandMockScript,
  resolveReply,
  type MockError,
  type MockResponseEntry,
  type MockScript,
} from './script.js';
import { sendEvents } from './sse-sender.js';
import { jsonSyntaxProblem } from '../../printable-text.js';

export { formatServerSentEvent, malformEvent } from './sse-sender.js';

/** The single model the mock lists on `GET /v1/models`; requests may name any model. */
export const MOCK_MODEL_ID = 'mock-model';

/**
 * Path prefix of every endpoint, as in `https://api.openai.com/v1` and
 * `https://api.anthropic.com/v1`; Gemini clients take it as their base URL in place of `/v1beta`.
 */
const BASE_PATH = '/v1';

/** Hosts the mock may listen on: it answers without authentication, so it stays on loopback. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * One model request the mock received, in arrival order.
 * `api` is `chat` for `POST /v1/chat/completions`, `responses` for `POST /v1/responses`,
 * `anthropic` for `POST /v1/messages` and `google` for
 * `POST /v1/models/{model}:generateContent` / `:streamGenerateContent`; `path` is the URL path
 * without the query; `body` is the parsed JSON body; `requestNumber` is 1-based and decides which
 * script entry answered.
 */
export interface RecordedModelRequest {
  api: ModelApi;
  path: string;
  body: unknown;
  headers: IncomingHttpHeaders;
  receivedAt: Date;
  /** When the answer had been written completely (unset while streaming, or when the client left). */
  answeredAt?: Date;
  requestNumber: number;
}

/** Where to listen. `port` 0 (the default) picks a free port; `host` defaults to `127.0.0.1`. */
export interface MockProviderStartOptions {
  port?: number;
  host?: string;
}

/**
 * Where the started mock answers; `baseURL` ends with `/v1`, ready for the OpenAI, Anthropic and
 * Google clients of the AI SDK.
 */
export interface MockProviderAddress {
  baseURL: string;
  port: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A local HTTP server that answers model requests from a script, one entry per request in
 * arrival order, in the real wire formats of OpenAI Chat Completions, OpenAI Responses,
 * Anthropic Messages and Gemini `generateContent` (SSE streams or JSON bodies, each API's error
 * body), so clients such as the Vercel AI SDK run unmodified against it.
 *
 * Endpoints under `/v1`: `POST /chat/completions`, `POST /responses`, `POST /messages`,
 * `POST /models/{model}:generateContent`, `POST /models/{model}:streamGenerateContent`,
 * `GET /models`; outside it, `POST /mock/gates/{gate}/release` opens a gate (see
 * {@link release}) for a client in another process. Unknown paths answer 404 with an OpenAI error
 * body; malformed JSON bodies 400 and a request past the end of the script 500, each in the error
 * body of the request's API.
 */
export class MockProviderServer {
  /** Every model request received, in order (malformed and unknown-path requests excluded). */
  readonly requests: RecordedModelRequest[] = [];
  private readonly entries: MockResponseEntry[];
  private readonly defaultDelayMs: number;
  private server: Server | undefined;
  private readonly waiters = new Set<{ count: number; resolve: () => void; reject: (error: Error) => void }>();
  private readonly gates = new Map<string, Gate>();

  /** @param script - A validated script (see `parseMockScript` / `loadMockScript`). */
  /** Model ids `GET /v1/models` lists. */
  private readonly listedModels: string[];
  /** Number of `GET /v1/models` requests answered (model discovery). */
  modelListRequests = 0;

  constructor(script: MockScript) {
    this.entries = expandMockScript(script);
    this.defaultDelayMs = script.delayMs ?? 0;
    this.listedModels = script.models ?? [MOCK_MODEL_ID];
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
          this.sendError(response, undefined, { status: 500, message: `mock provider failed: ${(error as Error).message}` });
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
    for (const gate of this.gates.values()) {
      for (const waiter of gate.reachWaiters) waiter.reject(new Error('mock provider server stopped'));
      gate.reachWaiters.clear();
    }
  }

  /**
   * Opens the gate named `gate`: every stream held at it goes on, and a hold on it reached later
   * does not stop. A gate stays open; opening one that no script entry names is allowed (a test
   * may open it before the stream gets there).
   */
  release(gate: string): void {
    const state = this.gate(gate);
    if (state.open) return;
    state.open = true;
    state.openResolve();
  }

  /**
   * Resolves once a stream has reached a hold on `gate`: the delta events before it have been
   * written to the response and the stream waits for {@link release} (or went on at once when the
   * gate was already open). Resolves at once when that happened before the call. It says nothing
   * about what the client has read yet: wait for that on the client side.
   *
   * @param timeoutMs - Milliseconds to wait before rejecting.
   * @throws When the timeout passes first or the server stops.
   */
  waitForHold(gate: string, timeoutMs: number): Promise<void> {
    const state = this.gate(gate);
    if (state.reached) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
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
        state.reachWaiters.delete(waiter);
        reject(new Error(`no stream reached the hold on gate "${gate}" within ${timeoutMs} ms`));
      }, timeoutMs);
      state.reachWaiters.add(waiter);
    });
  }

  /** The state of gate `name`, created closed on first use. */
  private gate(name: string): Gate {
    let state = this.gates.get(name);
    if (!state) {
      let openResolve = (): void => undefined;
      const opened = new Promise<void>((resolve) => (openResolve = resolve));
      state = { open: false, opened, openResolve, reached: false, reachWaiters: new Set() };
      this.gates.set(name, state);
    }
    return state;
  }

  /**
   * Marks gate `name` reached and waits until it is open, or until `signal` aborts (the client
   * went away or the server stopped).
   */
  private async hold(name: string, signal: AbortSignal): Promise<void> {
    const state = this.gate(name);
    state.reached = true;
    for (const waiter of state.reachWaiters) waiter.resolve();
    state.reachWaiters.clear();
    if (state.open || signal.aborted) return;
    let onAbort = (): void => undefined;
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    });
    await Promise.race([state.opened, aborted]);
    signal.removeEventListener('abort', onAbort);
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
    const url = new URL(request.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '');
    const method = request.method ?? 'GET';
    if (method === 'GET' && path === `${BASE_PATH}/models`) {
      this.modelListRequests++;
      this.sendJson(response, 200, {
        object: 'list',
        data: this.listedModels.map((id) => ({ id, object: 'model', created: 0, owned_by: 'openvaala' })),
      });
      return;
    }
    const gateRelease = method === 'POST' ? /^\/mock\/gates\/([^/]+)\/release$/.exec(path) : null;
    if (gateRelease) {
      request.resume();
      const gate = decodeURIComponent(gateRelease[1]!);
      this.release(gate);
      this.sendJson(response, 200, { released: gate });
      return;
    }
    const route = matchModelRoute(method, path, url.searchParams, BASE_PATH);
    if (route === undefined) {
      request.resume();
      const message = `Unknown request URL: ${method} ${path}`;
      this.sendError(response, undefined, { status: 404, message, code: 'unknown_url' });
      return;
    }
    const api = route.api;

    const rawBody = await readBody(request);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch (error) {
      const message = `We could not parse the JSON body of your request: ${jsonSyntaxProblem(error)}`;
      this.sendError(response, api, { status: 400, message });
      return;
    }
    if (!isRecord(body)) {
      this.sendError(response, api, { status: 400, message: 'The request body must be a JSON object.' });
      return;
    }

    const requestNumber = this.requests.length + 1;
    const recorded: RecordedModelRequest = { api, path, body, headers: request.headers, receivedAt: new Date(), requestNumber };
    this.requests.push(recorded);
    response.once('finish', () => (recorded.answeredAt = new Date()));
    for (const waiter of this.waiters) {
      if (this.requests.length >= waiter.count) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }

    const entry = this.entries[requestNumber - 1];
    if (entry === undefined) {
      this.sendError(response, api, {
        status: 500,
        message:
          `mock script has no response left for request number ${requestNumber} ` +
          `(the script serves ${this.entries.length} responses)`,
        type: 'server_error',
        code: 'mock_script_exhausted',
      });
      return;
    }
    if (entry.error !== undefined) {
      this.sendError(response, api, entry.error);
      return;
    }

    const reply = resolveReply(entry, requestNumber, body);
    const encoded = encodeReply(route, reply, body, MOCK_MODEL_ID, Math.floor(Date.now() / 1000));
    if (encoded.kind === 'stream') {
      const delayMs = entry.delayMs ?? this.defaultDelayMs;
      await sendEvents(response, encoded.events, {
        delayMs,
        lineBreak: encoded.lineBreak,
        disconnectAfterDeltas: reply.disconnectAfterDeltas,
        disconnectBeforeFinish: reply.disconnectBeforeFinish,
        malformedEventAfterDeltas: reply.malformedEventAfterDeltas,
        holds: reply.holds,
        ...(reply.streamError ? { streamError: { afterDeltas: reply.streamError.afterDeltas, event: encodeStreamErrorEvent(api, reply.streamError) } } : {}),
      }, (gate, signal) => this.hold(gate, signal));
      return;
    }
    if (reply.holds.length > 0) {
      const gone = new AbortController();
      response.once('close', () => gone.abort());
      for (const { gate } of reply.holds) await this.hold(gate, gone.signal);
      if (gone.signal.aborted) return;
    }
    if (reply.disconnectAfterDeltas !== undefined || reply.disconnectBeforeFinish) {
      // A JSON answer has no deltas to send first: the client sees the connection drop unanswered.
      response.destroy();
    } else {
      this.sendJson(response, 200, encoded.body);
    }
  }

  /** Sends `error` with its status in the error body of `api` (OpenAI's when the API is unknown). */
  private sendError(response: ServerResponse, api: ModelApi | undefined, error: MockError): void {
    const { body, headers } = encodeError(api, error);
    this.sendJson(response, error.status, body, headers);
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
}

/** One named gate of {@link MockProviderServer}: closed until released, and whether a stream reached it. */
interface Gate {
  open: boolean;
  opened: Promise<void>;
  openResolve: () => void;
  reached: boolean;
  reachWaiters: Set<{ resolve: () => void; reject: (error: Error) => void }>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

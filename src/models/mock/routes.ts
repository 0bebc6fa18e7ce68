import { anthropicErrorBody, encodeAnthropicMessage, encodeAnthropicStream } from './anthropic-stream.js';
import { encodeChatCompletion, encodeChatCompletionStream } from './chat-completions-stream.js';
import { encodeGoogleResponse, encodeGoogleStream, googleErrorBody } from './google-stream.js';
import { openAIErrorBody } from './openai-error.js';
import { encodeResponse, encodeResponsesStream } from './responses-stream.js';
import type { MockError, ResolvedReply, ServerSentEvent } from './script.js';

/**
 * The wire format a model request arrived in: `chat` (OpenAI Chat Completions), `responses`
 * (OpenAI Responses), `anthropic` (Anthropic Messages) or `google` (Gemini `generateContent`).
 */
export type ModelApi = 'chat' | 'responses' | 'anthropic' | 'google';

/**
 * A matched model endpoint. For Gemini the URL also names the model and decides streaming:
 * `:streamGenerateContent?alt=sse` streams SSE, `:streamGenerateContent` without `alt=sse`
 * answers a JSON array of chunks, `:generateContent` one JSON object. For the other APIs
 * `googleModel` and `googleStreaming` are undefined and the body's `stream` decides.
 */
export interface ModelRoute {
  api: ModelApi;
  googleModel?: string;
  googleStreaming?: 'sse' | 'json-array' | 'none';
}

/**
 * A reply ready to send: an SSE stream (`lineBreak` ends each line: Gemini frames with CRLF,
 * the others with LF) or a JSON body.
 */
export type EncodedReply =
  | { kind: 'stream'; events: ServerSentEvent[]; lineBreak: '\n' | '\r\n' }
  | { kind: 'json'; body: unknown };

/** An error ready to send: the API's error body and extra headers (`retry-after`). */
export interface EncodedError {
  body: unknown;
  headers: Record<string, string>;
}

/** `models/{model}:{method}` as Gemini's REST API spells a model method. */
const GOOGLE_METHOD_PATH = /^\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/**
 * Finds the model endpoint a request is for (sources: OpenAI API reference, Anthropic Messages
 * API, Gemini API reference): under `basePath`, `POST /chat/completions`, `POST /responses`,
 * `POST /messages`, `POST /models/{model}:generateContent` and
 * `POST /models/{model}:streamGenerateContent`.
 *
 * @param path - The URL path without query or trailing slash.
 * @param query - The URL query (Gemini's `alt=sse`).
 * @returns The route, or undefined when the method and path name no model endpoint.
 */
export function matchModelRoute(method: string, path: string, query: URLSearchParams, basePath: string): ModelRoute | undefined {
  if (method !== 'POST' || !path.startsWith(`${basePath}/`)) return undefined;
  const endpoint = path.slice(basePath.length);
  if (endpoint === '/chat/completions') return { api: 'chat' };
  if (endpoint === '/responses') return { api: 'responses' };
  if (endpoint === '/messages') return { api: 'anthropic' };
  const google = GOOGLE_METHOD_PATH.exec(endpoint);
  if (google?.[1] !== undefined) {
    const streaming = google[2] === 'generateContent' ? 'none' : query.get('alt') === 'sse' ? 'sse' : 'json-array';
    return { api: 'google', googleModel: decodeURIComponent(google[1]), googleStreaming: streaming };
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Encodes a reply in the wire format of its route, streaming when the request asked for it.
 *
 * @param body - The parsed request body: `model`, `stream`, and per API `stream_options.include_usage`
 *   (Chat Completions) or `include` (Responses: `reasoning.encrypted_content`).
 * @param fallbackModel - Model name echoed back when the body names none.
 * @param createdSeconds - Creation time for the OpenAI objects, Unix seconds.
 */
export function encodeReply(
  route: ModelRoute,
  reply: ResolvedReply,
  body: Record<string, unknown>,
  fallbackModel: string,
  createdSeconds: number,
): EncodedReply {
  const model = typeof body.model === 'string' ? body.model : fallbackModel;
  const stream = body.stream === true;
  switch (route.api) {
    case 'chat': {
      const streamOptions = body.stream_options;
      const includeUsage = isRecord(streamOptions) && streamOptions.include_usage === true;
      const context = { model, createdSeconds, includeUsage };
      return stream
        ? { kind: 'stream', events: encodeChatCompletionStream(reply, context), lineBreak: '\n' }
        : { kind: 'json', body: encodeChatCompletion(reply, context) };
    }
    case 'responses': {
      const includeEncryptedReasoning = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
      const context = { model, createdSeconds, includeEncryptedReasoning };
      return stream
        ? { kind: 'stream', events: encodeResponsesStream(reply, context), lineBreak: '\n' }
        : { kind: 'json', body: encodeResponse(reply, context) };
    }
    case 'anthropic': {
      const context = { model };
      return stream
        ? { kind: 'stream', events: encodeAnthropicStream(reply, context), lineBreak: '\n' }
        : { kind: 'json', body: encodeAnthropicMessage(reply, context) };
    }
    case 'google': {
      const context = { model: route.googleModel ?? model };
      if (route.googleStreaming === 'sse') {
        // Google's servers end SSE lines with CRLF; sending the same catches LF-only parsers.
        return { kind: 'stream', events: encodeGoogleStream(reply, context), lineBreak: '\r\n' };
      }
      if (route.googleStreaming === 'json-array') {
        return { kind: 'json', body: encodeGoogleStream(reply, context).map((event) => event.data) };
      }
      return { kind: 'json', body: encodeGoogleResponse(reply, context) };
    }
  }
}

/**
 * The error event a stream of `api` carries when the provider fails after `200 OK` (sources:
 * OpenAI Responses streaming `error` event, Anthropic Messages streaming `error` event): the
 * Responses `{type: "error", code, message, param, sequence_number}`, Anthropic's error body
 * as an `error` event, and for Chat Completions and Gemini a data chunk holding their error body.
 */
export function encodeStreamErrorEvent(api: ModelApi, error: MockError): ServerSentEvent {
  switch (api) {
    case 'responses':
      return { event: 'error', data: { type: 'error', code: error.code ?? error.type ?? openAIErrorBody(error).error.type, message: error.message, param: null, sequence_number: 0 }, isDelta: false };
    case 'anthropic':
      return { event: 'error', data: anthropicErrorBody(error), isDelta: false };
    case 'chat':
      return { data: openAIErrorBody(error), isDelta: false };
    case 'google':
      return { data: googleErrorBody(error), isDelta: false };
  }
}

/**
 * Encodes an error in the error body of `api` (OpenAI's when the API is unknown, e.g. for an
 * unknown path), with a `retry-after` header (whole seconds) when `retryAfterSeconds` is set.
 */
export function encodeError(api: ModelApi | undefined, error: MockError): EncodedError {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  const body =
    api === 'anthropic' ? anthropicErrorBody(error) : api === 'google' ? googleErrorBody(error) : openAIErrorBody(error);
  return { body, headers };
}

/**
 * What a failed model call means, in one line a person can act on (SPEC §6: provider errors
 * keep the provider's message). Four kinds are told apart: an HTTP error from the provider, a
 * connection that failed before an answer, an answer whose stream broke off mid-way, and an
 * answer with an event the provider's wire format does not allow.
 */
// The error classes come from the SDK's small provider package, not from `ai`, so loading this
// module does not load the SDK's stream machinery.
import { APICallError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { formatKeyPath } from '../key-path.js';

/**
 * Why a model call failed (`stream_error`: the provider sent an error event after `200 OK`;
 * `context_overflow`: the request cannot be made small enough to send).
 */
export type ModelFailureKind = 'http' | 'connection' | 'dropped_stream' | 'malformed_event' | 'stream_error' | 'context_overflow' | 'other';

/** A model call that failed, with what the provider said. */
export class ModelCallError extends Error {
  /**
   * @param message one line for the person running the turn
   * @param httpStatus the provider's HTTP error status; null when there was none (connection failures, a stream that broke off after `200 OK`)
   * @param retryable whether the same request may succeed later
   * @param retryAfterMs delay the provider asked for (`Retry-After`), ms
   * @param retries retries made before giving up
   * @param kind what went wrong
   * @param detail everything known (full validation report, raw event), for the server log only
   */
  constructor(
    message: string,
    readonly httpStatus: number | null,
    readonly retryable: boolean,
    readonly retryAfterMs: number | undefined,
    public retries = 0,
    readonly kind: ModelFailureKind = 'other',
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

function providerMessage(responseBody: string | undefined, fallback: string): string {
  if (responseBody) {
    try {
      const body = JSON.parse(responseBody) as { error?: { message?: unknown } | string; message?: unknown };
      if (typeof body.error === 'string') return body.error;
      if (body.error && typeof body.error.message === 'string') return body.error.message;
      if (typeof body.message === 'string') return body.message;
    } catch {
      // Not JSON: the fallback (the SDK's message, or the HTTP status line) is the best there is.
    }
  }
  return fallback;
}

/**
 * The failure of an HTTP error answer from a provider: the provider's own message (from a JSON
 * body `{error: {message}}`, `{error: "…"}` or `{message}`), retryable for 408, 409, 429 and
 * 5xx, with the delay of `Retry-After` (RFC 9110 §10.2.3).
 * @param status the HTTP status (≥ 300)
 * @param responseBody the answer's body, if read
 * @param retryAfter the `Retry-After` header, if any
 * @param fallback the message when the body carries none (e.g. the status line)
 */
export function httpFailure(status: number, responseBody: string | undefined, retryAfter: string | undefined, fallback: string): ModelCallError {
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  return new ModelCallError(providerMessage(responseBody, fallback), status, retryable, parseRetryAfter(retryAfter), 0, 'http');
}

/**
 * The failure of an answer that began (HTTP 2xx) and broke off: retryable, kind `dropped_stream`.
 * @param cause what the HTTP client reported (its message chain is quoted)
 * @param detail everything known, for the server log
 */
export function droppedStream(cause: unknown, detail: string): ModelCallError {
  const reason = describeCause(cause);
  return new ModelCallError(`the connection to the provider dropped mid-answer${reason ? ` (${reason})` : ''}`, null, true, undefined, 0, 'dropped_stream', detail);
}

/**
 * The failure of an event that is not JSON, quoting its first 80 characters.
 * @param text the event's data
 * @param detail the parser's message, for the server log
 */
export function unparsableEvent(text: string, detail: string): ModelCallError {
  const excerpt = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return new ModelCallError(`the provider sent an event that is not valid JSON (${JSON.stringify(excerpt)})`, null, false, undefined, 0, 'malformed_event', detail);
}

/**
 * The failure of an event whose field does not match the API.
 * @param eventType the event's `type`
 * @param fieldPath where in the event, e.g. `item.arguments`
 * @param problem what is wrong, e.g. `expected string, received number`
 * @param detail the raw event (JSON), quoted in the detail for the server log
 */
export function malformedEventField(eventType: string, fieldPath: string, problem: string, detail: string): ModelCallError {
  const what = `field ${fieldPath}: ${problem}`;
  return new ModelCallError(`the provider sent a malformed "${eventType}" event (${what})`, null, false, undefined, 0, 'malformed_event', `Type validation failed for event "${eventType}": ${what}. Value: ${detail}`);
}

/** Parses a `Retry-After` header (seconds or HTTP date, RFC 9110 §10.2.3) into ms. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

interface SchemaIssue {
  code?: string;
  path?: PropertyKey[];
  message?: string;
  errors?: SchemaIssue[][];
}

/**
 * The issue that says what is wrong with the event. A union of event shapes (the Responses
 * API's events, Gemini's part kinds) reports every branch; the branch whose `type` matched is
 * the one that explains the fault, so branches failing on `type` (or on a field that is simply
 * absent) are passed over.
 */
function decisiveIssue(issues: SchemaIssue[], prefix: PropertyKey[] = []): SchemaIssue & { path: PropertyKey[] } | undefined {
  const first = issues[0];
  if (!first) return undefined;
  const path = [...prefix, ...(first.path ?? [])];
  if (first.code === 'invalid_union' && first.errors && first.errors.length > 0) {
    const discriminatorMissed = (branch: SchemaIssue[]) => branch.some((issue) => issue.path?.length === 1 && issue.path[0] === 'type' && issue.code === 'invalid_value');
    const absentOnly = (branch: SchemaIssue[]) => branch.every((issue) => /received undefined/.test(issue.message ?? ''));
    const branch = first.errors.find((candidate) => !discriminatorMissed(candidate) && !absentOnly(candidate)) ?? first.errors.find((candidate) => !discriminatorMissed(candidate)) ?? first.errors[0] ?? [];
    return decisiveIssue(branch, path) ?? { ...first, path };
  }
  return { ...first, path };
}

function formatPath(path: PropertyKey[]): string {
  return formatKeyPath(path) || '(the event itself)';
}

/** What an event calls itself: the Responses and Anthropic `type`, the Chat Completions `object`, else Gemini's response chunk. */
function eventName(value: unknown): string {
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.type === 'string') return record.type;
    if (typeof record.object === 'string') return record.object;
    if ('candidates' in record || 'usageMetadata' in record) return 'GenerateContentResponse';
  }
  return 'unnamed';
}

function malformedEvent(error: TypeValidationError): ModelCallError {
  const issues = (error.cause as { issues?: SchemaIssue[] } | undefined)?.issues ?? [];
  const issue = decisiveIssue(issues);
  const what = issue ? `field ${formatPath(issue.path)}: ${(issue.message ?? 'invalid').replace(/^Invalid input: /, '')}` : 'it does not match the API';
  const detail = `${error.message}`;
  return new ModelCallError(`the provider sent a malformed "${eventName(error.value)}" event (${what})`, null, false, undefined, 0, 'malformed_event', detail);
}

/**
 * Converts whatever the SDK threw into a ModelCallError that says what went wrong and whether
 * a retry may help: the provider's own message for HTTP errors; for a stream broken off after
 * `200 OK`, a dropped connection (retryable, `httpStatus` null); for an event that fails the
 * wire format's schema, its type and the field at fault (full report in `detail`).
 */
export function toModelCallError(error: unknown): ModelCallError {
  if (error instanceof ModelCallError) return error;
  const cause = (error as { cause?: unknown })?.cause;
  if (TypeValidationError.isInstance(error)) return malformedEvent(error);
  if (TypeValidationError.isInstance(cause)) return malformedEvent(cause);
  const parseError = JSONParseError.isInstance(error) ? error : JSONParseError.isInstance(cause) ? cause : undefined;
  if (parseError) return unparsableEvent(parseError.text, parseError.message);
  const apiError = APICallError.isInstance(error) ? error : APICallError.isInstance(cause) ? cause : undefined;
  if (apiError) {
    const status = apiError.statusCode ?? null;
    // The answer had begun (HTTP 2xx) and broke off: the connection dropped, it is not an HTTP error.
    if (status !== null && status < 300) return droppedStream(apiError.cause, apiError.message);
    const retryAfter = apiError.responseHeaders?.['retry-after'];
    if (status !== null) return httpFailure(status, apiError.responseBody, retryAfter, apiError.message);
    return new ModelCallError(providerMessage(apiError.responseBody, apiError.message), null, apiError.isRetryable, parseRetryAfter(retryAfter), 0, 'connection');
  }
  const streamError = providerErrorEvent(error);
  if (streamError) return streamError;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException)?.code ?? (cause as NodeJS.ErrnoException)?.code;
  // `fetch` (the SDK's providers) says "fetch failed" with the system error as its cause; the runtime's own
  // Responses client keeps the system error's code on its error (`RequestFailedError`).
  const connectionFailure = CONNECTION_ERROR_CODES.includes(code ?? '') || /fetch failed|socket|terminated/i.test(message);
  return new ModelCallError(message, null, connectionFailure, undefined, 0, connectionFailure ? 'connection' : 'other');
}

/** System error codes of a request that got no answer: the connection failed, a retry may help. */
const CONNECTION_ERROR_CODES = ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED'];

/** Error types and codes of the four APIs that say the provider is busy or failed, not the request. */
const TRANSIENT_ERROR = /overloaded|rate_limit|server_error|api_error|internal|unavailable|resource_exhausted/i;

/**
 * An error event sent inside a successful stream, as the SDK hands it over: the event's error
 * object (Anthropic `{type, message}`, OpenAI `{type|code, message}`, Gemini `{code, message, status}`).
 */
function providerErrorEvent(error: unknown): ModelCallError | undefined {
  if (error instanceof Error || typeof error !== 'object' || error === null) return undefined;
  const record = error as Record<string, unknown>;
  const nested = typeof record.error === 'object' && record.error !== null ? (record.error as Record<string, unknown>) : record;
  if (typeof nested.message !== 'string') return undefined;
  const name = [nested.type, nested.code, nested.status].find((value) => typeof value === 'string' && value !== 'error') as string | undefined;
  return new ModelCallError(
    `the provider reported an error mid-answer: ${name ? `${name}: ` : ''}${nested.message}`,
    null,
    name !== undefined && TRANSIENT_ERROR.test(name),
    undefined,
    0,
    'stream_error',
    JSON.stringify(error),
  );
}

/** The innermost readable reason of a network failure (`terminated: other side closed`). */
function describeCause(cause: unknown): string {
  const parts: string[] = [];
  for (let current = cause, depth = 0; current instanceof Error && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    if (current.message && !parts.includes(current.message)) parts.push(current.message);
  }
  return parts.join(': ');
}

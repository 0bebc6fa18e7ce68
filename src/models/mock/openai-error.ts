import type { MockError } from './script.js';

/**
 * The error body of the OpenAI API, shared by Chat Completions and Responses:
 * `{"error": {"message", "type", "param", "code"}}` (source: OpenAI API reference, error codes).
 */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Defaults that mirror what OpenAI sends for common statuses when the script gives no type/code. */
function defaultErrorFields(status: number): { type: string; code: string | null } {
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

/**
 * Encodes an error as OpenAI's error body. A missing `type` or `code` gets what OpenAI sends for
 * the status (429: `requests` / `rate_limit_exceeded`, 5xx: `server_error`, otherwise
 * `invalid_request_error`); `code: null` is kept as null.
 */
export function openAIErrorBody(error: MockError): OpenAIErrorBody {
  const defaults = defaultErrorFields(error.status);
  return {
    error: {
      message: error.message,
      type: error.type ?? defaults.type,
      param: null,
      code: error.code === undefined ? defaults.code : error.code,
    },
  };
}

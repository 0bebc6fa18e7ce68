import { APICallError, JSONParseError, TypeValidationError } from 'ai';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter, toModelCallError } from '../../src/runtime/model-call.js';

function apiError(statusCode: number, body: string, headers: Record<string, string> = {}) {
  return new APICallError({ message: 'sdk message', url: 'http://127.0.0.1/v1/responses', requestBodyValues: {}, statusCode, responseBody: body, responseHeaders: headers });
}

describe('model call failures', () => {
  it('keeps the provider message and classifies retryable statuses', () => {
    const failure = toModelCallError(apiError(503, JSON.stringify({ error: { message: 'overloaded, try later' } }), { 'retry-after': '3' }));
    expect(failure.message).toBe('overloaded, try later');
    expect(failure.httpStatus).toBe(503);
    expect(failure.retryable).toBe(true);
    expect(failure.retryAfterMs).toBe(3000);
    const refused = toModelCallError(apiError(401, JSON.stringify({ error: { message: 'bad key' } })));
    expect(refused.retryable).toBe(false);
    expect(refused.message).toBe('bad key');
    expect(toModelCallError(apiError(429, 'not json')).retryable).toBe(true);
    expect(toModelCallError(apiError(429, 'not json')).message).toBe('sdk message');
  });

  it('parses Retry-After as seconds or as an HTTP date (RFC 9110)', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  it('treats connection failures as retryable', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(toModelCallError(reset).retryable).toBe(true);
    expect(toModelCallError(new Error('something else')).retryable).toBe(false);
  });

  it('names a malformed event and its field in one line, keeping the full report as detail', () => {
    const schema = z.union([z.object({ type: z.literal('a.delta'), delta: z.string() }), z.object({ type: z.literal('b.done'), text: z.string() })]);
    const value = { type: 'a.delta', delta: 42 };
    const failure = toModelCallError(new TypeValidationError({ value, cause: schema.safeParse(value).error }));
    expect(failure.message).toBe('the provider sent a malformed "a.delta" event (field delta: expected string, received number)');
    expect(failure.kind).toBe('malformed_event');
    expect(failure.retryable).toBe(false);
    expect(failure.detail).toContain('invalid_union');
  });

  it('reports an event that is not JSON with an excerpt of it', () => {
    const failure = toModelCallError(new JSONParseError({ text: '{"type":"content_block_delta",', cause: new SyntaxError('Unexpected end of JSON input') }));
    expect(failure.message).toBe('the provider sent an event that is not valid JSON ("{\\"type\\":\\"content_block_delta\\",")');
    expect(failure.kind).toBe('malformed_event');
  });

  it('reports an error event inside a successful stream by its type and message, never as [object Object]', () => {
    const overloaded = toModelCallError({ type: 'overloaded_error', message: 'Overloaded' });
    expect(overloaded.message).toBe('the provider reported an error mid-answer: overloaded_error: Overloaded');
    expect(overloaded.retryable).toBe(true);
    const refused = toModelCallError({ error: { message: 'context too long', type: 'invalid_request_error', code: null } });
    expect(refused.message).toBe('the provider reported an error mid-answer: invalid_request_error: context too long');
    expect(refused.retryable).toBe(false);
    expect(toModelCallError({ code: 500, message: 'boom', status: 'INTERNAL' }).message).toBe('the provider reported an error mid-answer: INTERNAL: boom');
  });
});

/**
 * HTTP helpers of the platform's sign-in routes (SPEC §9, docs/platform.md): JSON bodies,
 * cookies, and the CSRF rule every state-changing request obeys. A browser request that may
 * change state must (1) come from an allowed `Origin` (checked by the HTTP server for every
 * non-GET request, and here again), (2) be declared `application/json` (a page of another site
 * cannot send that without a CORS preflight, which is never granted), and (3) carry in the
 * `X-CSRF-Token` header the value of the CSRF cookie (double-submit, OWASP CSRF Prevention
 * Cheat Sheet): the page reads the value from `GET .../platform/state`, which other sites
 * cannot read.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { originAllowed } from '../http-server.js';
import { cookieValues } from './web-sessions.js';

/** Name of the request header carrying the CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';
/** Largest JSON body a sign-in route reads, bytes. */
export const MAX_SIGN_IN_BODY_BYTES = 8192;

/** Answers with JSON, never cached. */
export function answerJson(response: ServerResponse, status: number, body: object, headers: Record<string, string | string[]> = {}): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  response.end(JSON.stringify(body));
}

/** An HTTP refusal: status and the message of the JSON `error` field. */
export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpRefusal';
  }
}

/**
 * Checks the CSRF rule above.
 * @throws HttpRefusal 403 (origin, CSRF token) or 415 (content type), naming what was wrong
 */
export function checkStateChangingRequest(request: IncomingMessage, allowedOrigins: string[], csrfCookieName: string): void {
  if (!originAllowed(request, allowedOrigins)) throw new HttpRefusal(403, `origin ${String(request.headers.origin).slice(0, 200)} may not use this server`);
  const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') throw new HttpRefusal(415, `Content-Type must be application/json, got ${JSON.stringify((request.headers['content-type'] ?? '').slice(0, 100))}`);
  checkCsrfToken(request, csrfCookieName);
}

/**
 * Checks the double-submit part of the CSRF rule above: the `X-CSRF-Token` header must equal the
 * CSRF cookie. For state-changing requests whose body is not JSON (uploads), with the Origin check.
 * @throws HttpRefusal 403 naming what was wrong
 */
export function checkCsrfToken(request: IncomingMessage, csrfCookieName: string): void {
  const header = request.headers[CSRF_HEADER];
  const given = Array.isArray(header) ? header[0] : header;
  const expected = cookieValues(request, csrfCookieName).filter((value) => value !== '');
  if (given === undefined || given === '') throw new HttpRefusal(403, `missing ${CSRF_HEADER} header: send the csrfToken of GET /web/v1/api/platform/state`);
  const givenBytes = Buffer.from(given);
  if (!expected.some((value) => Buffer.from(value).length === givenBytes.length && timingSafeEqual(Buffer.from(value), givenBytes))) {
    throw new HttpRefusal(403, `${CSRF_HEADER} does not match this browser's CSRF cookie: reload the page`);
  }
}

/**
 * Reads a JSON object body of at most {@link MAX_SIGN_IN_BODY_BYTES}.
 * @throws HttpRefusal 413 when longer, 400 when not a JSON object
 */
export async function readJsonObject(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > MAX_SIGN_IN_BODY_BYTES) {
      request.resume();
      throw new HttpRefusal(413, `the body is over ${MAX_SIGN_IN_BODY_BYTES} bytes`, { connection: 'close' });
    }
    chunks.push(chunk);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpRefusal(400, 'body: not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new HttpRefusal(400, 'body: must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** A string field of a body. @throws HttpRefusal 400 naming `body.<field>` */
export function stringField(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '') throw new HttpRefusal(400, `body.${field}: missing or not a non-empty string`);
  return value;
}

/**
 * A `Set-Cookie` value (RFC 6265bis §4.1): Path=/, SameSite=Lax (the OpenID Connect callback
 * arrives as a top-level navigation from the identity provider, which Strict would strip),
 * HttpOnly unless `readableByPage`, `Secure` over https. `maxAgeSeconds` 0 deletes it.
 */
export function platformCookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

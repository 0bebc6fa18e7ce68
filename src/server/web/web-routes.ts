/**
 * The web UI's HTTP surface (docs/web.md): `/` redirects to `WEB_PATH`; the sign-in page and
 * its script; `POST /web/v1/api/session` exchanges a one-time sign-in code for a session
 * cookie (`DELETE` signs out, `GET` says whether the cookie is a live session);
 * `POST /web/v1/api/sign-in-link` makes a new sign-in link for a client holding the server
 * token (`openvaala open`); every other path under `WEB_PATH` is a file of the built UI.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { originAllowed, presentedToken } from '../http-server.js';
import { sameSecret } from '../server-token.js';
import { setSecurityHeaders } from './security-headers.js';
import { serveWebFile, WEB_PATH } from './static-files.js';
import { cookieValues, reachedOverHttps, sessionCookie, WEB_SESSION_TTL_MS, type WebSessions } from './web-sessions.js';
import { handlePlatformRequest, PLATFORM_API_PATH, PLATFORM_STATE_PATH, platformRoutes, sessionSecrets, type PlatformRouteOptions } from './platform-routes.js';
import type { HttpRouteEntry } from '../http-routes.js';

/** Path of the sign-in page; the link carries the code in its fragment: `#token=<code>`. */
export const SIGN_IN_PATH = `${WEB_PATH}sign-in`;
/** Path of the code-for-cookie exchange. */
export const SESSION_PATH = `${WEB_PATH}api/session`;
/** Path where a token holder gets a new sign-in link. */
export const SIGN_IN_LINK_PATH = `${WEB_PATH}api/sign-in-link`;
/** Path of the sign-in page's script. */
export const SIGN_IN_SCRIPT_PATH = `${WEB_PATH}sign-in.js`;
/** Largest JSON body the exchange reads, bytes (a code is 43 characters). */
const MAX_EXCHANGE_BODY_BYTES = 4096;

/** The sign-in page's two files, read once (they ship with the package). */
const SIGN_IN_FILES = {
  html: readFileSync(new URL('./sign-in/sign-in.html', import.meta.url)),
  script: readFileSync(new URL('./sign-in/sign-in.js', import.meta.url)),
};

/** What the web routes need from the server. */
export interface WebRouteOptions {
  /** Folder of the built web UI (`dist/www` of the package unless configured). */
  webRoot: string;
  sessions: WebSessions;
  /** The server token (for `SIGN_IN_LINK_PATH`). */
  token: string;
  /** Extra allowed `Origin` values (read on every request: a reload refills it). */
  allowedOrigins: string[];
  /** Name of the session cookie (it includes the port). */
  cookieName: string;
  /** A new sign-in link (absolute URL) and its expiry, ms since the epoch. */
  signInLink: () => { url: string; expiresAt: number };
  /** Platform mode: its sign-in routes (docs/platform.md). Absent: a single-user server. */
  platform?: PlatformRouteOptions;
}

function answerJson(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  response.end(JSON.stringify(body));
}

function sendStatic(request: IncomingMessage, response: ServerResponse, body: Buffer, contentType: string): void {
  setSecurityHeaders(request, response);
  response.writeHead(200, { 'content-type': contentType, 'content-length': body.byteLength, 'cache-control': 'no-cache' });
  response.end(request.method === 'HEAD' ? undefined : body);
}

/** Whether the request carries the cookie of a live session. */
export function hasWebSession(request: IncomingMessage, options: Pick<WebRouteOptions, 'sessions' | 'cookieName'>): boolean {
  return cookieValues(request, options.cookieName).some((sessionId) => sessionId !== '' && options.sessions.isSession(sessionId));
}

/** Reads a request body up to `limit` bytes; resolves undefined when it is longer. */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= limit) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function refuseMethod(response: ServerResponse, path: string, allowed: string): void {
  answerJson(response, 405, { error: `${path} takes ${allowed.replace(', ', ' or ')} only` }, { allow: allowed });
}

/**
 * `SESSION_PATH`. POST (JSON `{ code }`): 200 `{ signedIn: true, expiresAt }` with the cookie;
 * 403 for a foreign `Origin`; 415 when the body is not declared `application/json` (a page of
 * another site cannot send that without a CORS preflight, which is never granted); 400 for a
 * body that is not `{ code: string }`; 401 for a code unknown, used or expired. DELETE: 200,
 * the session ends and the cookie is cleared. GET: `{ signedIn }`.
 */
async function handleSession(request: IncomingMessage, response: ServerResponse, options: WebRouteOptions): Promise<void> {
  const secure = reachedOverHttps(request);
  if (request.method === 'GET') {
    let signedIn = hasWebSession(request, options);
    // Platform mode: a platform user's session counts too, and the page learns it is a platform.
    if (!signedIn && options.platform) {
      for (const secret of sessionSecrets(request, options.platform)) if (await options.platform.platform.callerOfSession(secret)) signedIn = true;
    }
    return answerJson(response, 200, { signedIn, ...(options.platform ? { platform: true } : {}) });
  }
  if (request.method === 'DELETE') {
    for (const sessionId of cookieValues(request, options.cookieName)) options.sessions.endSession(sessionId);
    return answerJson(response, 200, { signedIn: false }, { 'set-cookie': sessionCookie(options.cookieName, '', 0, secure) });
  }
  if (request.method !== 'POST') return refuseMethod(response, SESSION_PATH, 'POST, DELETE, GET');
  const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') {
    request.resume();
    return answerJson(response, 415, { error: `Content-Type must be application/json, got ${JSON.stringify((request.headers['content-type'] ?? '').slice(0, 100))}` });
  }
  const body = await readBody(request, MAX_EXCHANGE_BODY_BYTES);
  if (body === undefined) return answerJson(response, 413, { error: `the body is over ${MAX_EXCHANGE_BODY_BYTES} bytes` }, { connection: 'close' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return answerJson(response, 400, { error: 'body: not valid JSON' });
  }
  const code = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || code === '') return answerJson(response, 400, { error: 'body.code: missing or not a non-empty string (the code from the sign-in link)' });
  const result = options.sessions.exchange(code);
  if (!result.ok) return answerJson(response, 401, { error: result.reason });
  answerJson(response, 200, { signedIn: true, expiresAt: result.expiresAt }, { 'set-cookie': sessionCookie(options.cookieName, result.sessionId, Math.floor(WEB_SESSION_TTL_MS / 1000), secure) });
}

/**
 * `SIGN_IN_LINK_PATH`: POST with `Authorization: Bearer <server token>` → 200 `{ url, expiresAt }`;
 * 401 without the token or with a wrong one (a browser session is not enough: only the local
 * user who can read the token file may mint links).
 */
function handleSignInLink(request: IncomingMessage, response: ServerResponse, options: WebRouteOptions): void {
  request.resume();
  if (request.method !== 'POST') return refuseMethod(response, SIGN_IN_LINK_PATH, 'POST');
  const token = presentedToken(request);
  if (token === undefined) return answerJson(response, 401, { error: 'missing token: send "Authorization: Bearer <token>"' });
  if (!sameSecret(token, options.token)) return answerJson(response, 401, { error: 'wrong token' });
  answerJson(response, 200, options.signInLink());
}

/**
 * The routes {@link handleWebRequest} answers: the redirects, the sign-in page, its script and
 * exchanges, the platform's sign-in routes (a server without platform mode answers only
 * `GET …/platform/state`, with `{ platform: false }`), and the files of the built UI.
 */
export function webRoutes(options: Pick<WebRouteOptions, 'platform'>): HttpRouteEntry[] {
  return [
    { methods: ['GET', 'HEAD'], path: '/' },
    { methods: ['GET', 'HEAD'], path: WEB_PATH.slice(0, -1) },
    { methods: ['GET', 'POST', 'DELETE'], path: SESSION_PATH },
    { methods: ['POST'], path: SIGN_IN_LINK_PATH },
    { methods: ['GET', 'HEAD'], path: SIGN_IN_PATH },
    { methods: ['GET', 'HEAD'], path: SIGN_IN_SCRIPT_PATH },
    ...(options.platform ? platformRoutes() : [{ methods: ['GET'], path: PLATFORM_STATE_PATH }]),
    { methods: ['GET', 'HEAD'], path: `${WEB_PATH}{file}` },
  ];
}

/**
 * Handles `/` (redirect) and every path under `/web/`. Requests that change state from a
 * foreign `Origin` are refused before this runs (by the HTTP server), and again here for the
 * exchange so the rule holds wherever this is mounted.
 */
export function handleWebRequest(request: IncomingMessage, response: ServerResponse, pathname: string, options: WebRouteOptions): void {
  if (pathname === '/' || pathname === WEB_PATH.slice(0, -1)) {
    request.resume();
    if (request.method !== 'GET' && request.method !== 'HEAD') return refuseMethod(response, pathname, 'GET, HEAD');
    response.writeHead(302, { location: WEB_PATH, 'cache-control': 'no-store' });
    response.end();
    return;
  }
  if (pathname === SESSION_PATH || pathname === SIGN_IN_LINK_PATH) {
    if (!originAllowed(request, options.allowedOrigins)) {
      request.resume();
      return answerJson(response, 403, { error: `origin ${String(request.headers.origin).slice(0, 200)} may not use this server` });
    }
    if (pathname === SIGN_IN_LINK_PATH) return handleSignInLink(request, response, options);
    handleSession(request, response, options).catch(() => response.destroy());
    return;
  }
  if (options.platform && pathname.startsWith(PLATFORM_API_PATH)) {
    const platform = options.platform;
    handlePlatformRequest(request, response, pathname, platform).catch((error: unknown) => {
      platform.logger.error({ path: pathname, error: (error as Error).stack ?? String(error) }, 'platform sign-in request failed');
      if (!response.headersSent) answerJson(response, 500, { error: 'sign-in failed inside the server; see its log' });
      else response.destroy();
    });
    return;
  }
  if (pathname === PLATFORM_STATE_PATH && request.method === 'GET') {
    // Without platform mode the sign-in page learns so here (and shows that its link lacks a code).
    request.resume();
    return answerJson(response, 200, { platform: false });
  }
  if (pathname.startsWith(`${WEB_PATH}api/`)) {
    request.resume();
    return answerJson(response, 404, { error: `no such web API path: ${pathname.slice(0, 200)}` });
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    request.resume();
    return refuseMethod(response, pathname.slice(0, 200), 'GET, HEAD');
  }
  if (pathname === SIGN_IN_PATH) return sendStatic(request, response, SIGN_IN_FILES.html, 'text/html; charset=utf-8');
  if (pathname === SIGN_IN_SCRIPT_PATH) return sendStatic(request, response, SIGN_IN_FILES.script, 'text/javascript; charset=utf-8');
  if (!pathname.startsWith(WEB_PATH)) {
    return answerJson(response, 404, { error: `no such path: ${pathname.slice(0, 200)}; the web UI is at ${WEB_PATH}` });
  }
  serveWebFile(request, response, pathname, options.webRoot);
}

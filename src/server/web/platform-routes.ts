/**
 * The platform's sign-in over HTTP (SPEC §9, docs/platform.md "Signing in"), under
 * `/web/v1/api/platform/`:
 *
 * - `GET state`: `{ platform, claimed, user?, oidc, csrfToken }`; sets the CSRF cookie.
 * - `POST claim` `{ email, password, displayName? }`: first administrator, only with no users.
 * - `POST sign-in` `{ email, password }`; `POST sign-out`.
 * - `POST invitation` `{ code, password, displayName? }`: accepts an invitation.
 * - `POST pairing` `{ code }`: signs this browser in as the user who made the pairing link.
 * - `GET oidc/<name>/start` → the identity provider; `GET oidc/<name>/callback` ← from it.
 *
 * Every POST obeys the CSRF rule of `platform-http.ts`; claim, sign-in, invitation and pairing
 * count against the sign-in rate limit of the client address (`clientAddress`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Platform } from '../../platform/platform.js';
import { PlatformConflictError, PlatformInputError, PlatformNotFoundError } from '../../platform/platform-errors.js';
import { newSecret } from '../../platform/platform-secrets.js';
import { clientAddress } from '../../platform/sign-in/client-address.js';
import { OidcSignInError, type OidcSignIn } from '../../platform/sign-in/oidc.js';
import { checkEmail, summarizeUser, type UserRecord } from '../../platform/users/user-store.js';
import type { HttpRouteEntry } from '../http-routes.js';
import { WEB_PATH } from './static-files.js';
import { answerJson, checkStateChangingRequest, HttpRefusal, platformCookie, readJsonObject, stringField } from './platform-http.js';
import { cookieValues, reachedOverHttps } from './web-sessions.js';

/** Path prefix of the platform's sign-in routes. */
export const PLATFORM_API_PATH = `${WEB_PATH}api/platform/`;
/** Path of the sign-in state (answered `{ platform: false }` by a server without platform mode). */
export const PLATFORM_STATE_PATH = `${PLATFORM_API_PATH}state`;

/** The POST routes under {@link PLATFORM_API_PATH}. */
const POST_ROUTES: readonly string[] = ['claim', 'sign-in', 'sign-out', 'invitation', 'pairing'];
/** The OpenID Connect routes under {@link PLATFORM_API_PATH}: `oidc/<issuer name>/<step>`. */
const OIDC_ROUTE = /^oidc\/([A-Za-z0-9_-]{1,40})\/(start|callback)$/;

/** The routes {@link handlePlatformRequest} answers (`{name}`: an OpenID Connect issuer's name). */
export function platformRoutes(): HttpRouteEntry[] {
  return [
    { methods: ['GET'], path: PLATFORM_STATE_PATH },
    ...POST_ROUTES.map((route) => ({ methods: ['POST'], path: `${PLATFORM_API_PATH}${route}` })),
    { methods: ['GET'], path: `${PLATFORM_API_PATH}oidc/{name}/start` },
    { methods: ['GET'], path: `${PLATFORM_API_PATH}oidc/{name}/callback` },
  ];
}

/** What the routes need from the server. */
export interface PlatformRouteOptions {
  platform: Platform;
  oidc: OidcSignIn;
  /** Extra allowed `Origin` values. */
  allowedOrigins: string[];
  /** Cookie names; they hold the port (cookies are not separated by port, RFC 6265 §8.5). */
  cookies: { session: string; csrf: string; oidcState: string };
  /** Where failures no browser can be told about go. */
  logger: { error(details: object, message: string): void };
}

/** Names of the platform cookies of a server listening on `port`. */
export function platformCookieNames(port: number): PlatformRouteOptions['cookies'] {
  return { session: `openvaala_user_${port}`, csrf: `openvaala_csrf_${port}`, oidcState: `openvaala_oidc_${port}` };
}

/** The caller secret of a request's platform session cookie(s), each one to try. */
export function sessionSecrets(request: IncomingMessage, options: Pick<PlatformRouteOptions, 'cookies'>): string[] {
  return cookieValues(request, options.cookies.session).filter((value) => value !== '');
}

function secureCookies(request: IncomingMessage, options: PlatformRouteOptions): boolean {
  return reachedOverHttps(request) || (options.platform.settings.publicUrl ?? '').startsWith('https://');
}

/** Starts a session for `user` and answers with its cookie. */
async function signInAnswer(request: IncomingMessage, response: ServerResponse, options: PlatformRouteOptions, user: UserRecord, method: string): Promise<void> {
  const { session, secret } = await options.platform.sessions.create(user.id, { userAgent: String(request.headers['user-agent'] ?? ''), address: clientAddress(request, options.platform.trustedProxies), method });
  const maxAge = Math.floor((session.expiresAt - Date.now()) / 1000);
  answerJson(response, 200, { signedIn: true, user: summarizeUser(user), expiresAt: session.expiresAt }, { 'set-cookie': platformCookie(options.cookies.session, secret, maxAge, secureCookies(request, options)) });
}

/** Counts a sign-in attempt. @throws HttpRefusal 429 past the limit */
function countAttempt(request: IncomingMessage, options: PlatformRouteOptions): void {
  const decision = options.platform.rateLimit.attempt(clientAddress(request, options.platform.trustedProxies));
  if (!decision.allowed) throw new HttpRefusal(429, `too many sign-in attempts from this address; try again in ${decision.retryAfterSeconds} s`, { 'retry-after': String(decision.retryAfterSeconds) });
}

async function handlePost(route: string, request: IncomingMessage, response: ServerResponse, options: PlatformRouteOptions): Promise<void> {
  const { platform } = options;
  checkStateChangingRequest(request, options.allowedOrigins, options.cookies.csrf);
  if (route === 'sign-out') {
    request.resume();
    for (const secret of sessionSecrets(request, options)) {
      const ended = await platform.sessions.endBySecret(secret);
      if (ended) platform.endAccess({ webSessionIds: [ended.id], reason: 'signed out' });
    }
    return answerJson(response, 200, { signedIn: false }, { 'set-cookie': platformCookie(options.cookies.session, '', 0, secureCookies(request, options)) });
  }
  if (!POST_ROUTES.includes(route)) throw new HttpRefusal(404, `no such platform route: POST ${route.slice(0, 100)}`);
  countAttempt(request, options);
  const body = await readJsonObject(request);
  if (route === 'claim') return signInAnswer(request, response, options, await platform.users.claim({ email: body.email, password: body.password, displayName: body.displayName }), 'claim');
  if (route === 'sign-in') {
    const email = checkEmail(body.email, 'body.email');
    const password = stringField(body, 'password');
    const user = await platform.users.verifyCredentials(email, password);
    if (!user) throw new HttpRefusal(401, 'wrong email or password');
    return signInAnswer(request, response, options, user, 'password');
  }
  if (route === 'invitation') {
    const code = stringField(body, 'code');
    const password = stringField(body, 'password');
    const user = await platform.invitations.accept(code, (invitation) => platform.users.create({ email: invitation.email, role: invitation.role, password, displayName: body.displayName }));
    return signInAnswer(request, response, options, user, 'invitation');
  }
  const userId = platform.pairing.take(stringField(body, 'code'));
  const user = userId === undefined ? undefined : await platform.users.get(userId);
  if (!user) throw new HttpRefusal(401, 'the pairing link is unknown, already used or expired; make a new one in settings');
  return signInAnswer(request, response, options, user, 'pairing');
}

/** The user an OpenID Connect identity signs in as: linked before, same verified email, or invited. */
async function userOfIdentity(platform: Platform, identity: { identity: string; email: string; name?: string }): Promise<UserRecord> {
  const linked = await platform.users.findByIdentity(identity.identity);
  if (linked) return linked;
  const byEmail = await platform.users.findByEmail(identity.email);
  if (byEmail) return platform.users.linkIdentity(byEmail.id, identity.identity);
  const invited = await platform.invitations.acceptForEmail(identity.email, (invitation) => platform.users.create({ email: identity.email, role: invitation.role, displayName: identity.name, identity: identity.identity }));
  if (invited) return invited;
  throw new OidcSignInError(`${identity.email} has no account here; ask an administrator for an invitation`);
}

/** Sends the browser back to the sign-in page with a message in the fragment (never sent to a server). */
function backToSignIn(response: ServerResponse, message: string, headers: Record<string, string | string[]> = {}): void {
  response.writeHead(303, { location: `${WEB_PATH}sign-in#error=${encodeURIComponent(message)}`, 'cache-control': 'no-store', ...headers });
  response.end();
}

async function handleOidc(name: string, step: string, request: IncomingMessage, response: ServerResponse, options: PlatformRouteOptions): Promise<void> {
  request.resume();
  const secure = secureCookies(request, options);
  const base = options.platform.linkBase;
  const redirectUri = `${base}${PLATFORM_API_PATH}oidc/${encodeURIComponent(name)}/callback`;
  try {
    if (step === 'start') {
      const { url, state } = await options.oidc.start(name, redirectUri);
      response.writeHead(303, { location: url, 'cache-control': 'no-store', 'set-cookie': platformCookie(options.cookies.oidcState, state, 600, secure) });
      response.end();
      return;
    }
    const clearState = platformCookie(options.cookies.oidcState, '', 0, secure);
    const state = cookieValues(request, options.cookies.oidcState).find((value) => value !== '');
    if (!state) return backToSignIn(response, 'this browser did not start the sign-in (its cookie is missing); start it again', { 'set-cookie': clearState });
    const identity = await options.oidc.finish(name, new URL(request.url ?? '/', base), state);
    const user = await userOfIdentity(options.platform, identity);
    const { session, secret } = await options.platform.sessions.create(user.id, { userAgent: String(request.headers['user-agent'] ?? ''), address: clientAddress(request, options.platform.trustedProxies), method: `oidc:${name}` });
    response.writeHead(303, { location: WEB_PATH, 'cache-control': 'no-store', 'set-cookie': [clearState, platformCookie(options.cookies.session, secret, Math.floor((session.expiresAt - Date.now()) / 1000), secure)] });
    response.end();
  } catch (error) {
    if (error instanceof OidcSignInError || error instanceof PlatformConflictError || error instanceof PlatformInputError) return backToSignIn(response, error.message);
    throw error;
  }
}

async function handleState(request: IncomingMessage, response: ServerResponse, options: PlatformRouteOptions): Promise<void> {
  request.resume();
  let user: UserRecord | undefined;
  for (const secret of sessionSecrets(request, options)) {
    const caller = await options.platform.callerOfSession(secret);
    if (caller && caller.kind === 'user') user = await options.platform.users.get(caller.userId);
    if (user) break;
  }
  // One CSRF value per browser, kept while it stays; HttpOnly: the page reads it from this answer.
  const existing = cookieValues(request, options.cookies.csrf).find((value) => value !== '');
  const csrfToken = existing ?? newSecret();
  const headers: Record<string, string> = existing ? {} : { 'set-cookie': platformCookie(options.cookies.csrf, csrfToken, 400 * 24 * 3600, secureCookies(request, options)) };
  answerJson(response, 200, { platform: true, claimed: await options.platform.users.hasUsers(), ...(user ? { user: summarizeUser(user) } : {}), oidc: options.oidc.list(), csrfToken }, headers);
}

/**
 * Handles a request under {@link PLATFORM_API_PATH}. Errors become JSON answers naming what
 * was wrong; nothing unforeseen escapes (the caller logs and answers 500).
 */
export async function handlePlatformRequest(request: IncomingMessage, response: ServerResponse, pathname: string, options: PlatformRouteOptions): Promise<void> {
  const route = pathname.slice(PLATFORM_API_PATH.length);
  try {
    const oidc = OIDC_ROUTE.exec(route);
    if (request.method === 'GET' && oidc) return await handleOidc(oidc[1] as string, oidc[2] as string, request, response, options);
    if (request.method === 'GET' && route === 'state') return await handleState(request, response, options);
    if (request.method === 'POST') return await handlePost(route, request, response, options);
    request.resume();
    throw new HttpRefusal(404, `no such platform route: ${String(request.method)} ${route.slice(0, 100)}`);
  } catch (error) {
    if (error instanceof HttpRefusal) return answerJson(response, error.status, { error: error.message }, error.headers);
    if (error instanceof PlatformInputError) return answerJson(response, 400, { error: error.field.startsWith('body.') ? error.message : `body.${error.message}` });
    if (error instanceof PlatformConflictError) return answerJson(response, 409, { error: error.message, reason: error.reason });
    if (error instanceof PlatformNotFoundError) return answerJson(response, 404, { error: error.message });
    throw error;
  }
}

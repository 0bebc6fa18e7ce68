/**
 * Sign-in of the web UI over real HTTP and WebSocket (docs/web.md): a one-time code from the
 * server is exchanged once for an HttpOnly session cookie; the cookie authenticates the
 * protocol WebSocket and uploads; foreign origins, wrong content types, used codes and
 * malformed bodies are refused with a message saying why; the server token mints links.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { initializeOverWebSocket, rawRequest, type RawAnswer } from '../helpers/http-exchange.js';
import { writeWebFixture } from '../helpers/web-fixture.js';

let environment: TestEnvironment;
let server: RunningServer;
let origin: string;
let cookieName: string;

beforeAll(async () => {
  environment = await createTestEnvironment('responses: []\n');
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent'), webRoot: writeWebFixture(path.join(environment.root, 'www')) });
  origin = server.url;
  cookieName = `openvaala_session_${server.port}`;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await environment?.dispose();
});

/** The code in a sign-in link's fragment. */
function codeOf(link: string): string {
  const match = /\/web\/v1\/sign-in#token=([A-Za-z0-9_-]{43})$/.exec(link);
  if (!match) throw new Error(`not a sign-in link: ${link}`);
  return match[1] as string;
}

function exchange(body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return rawRequest(server.url, '/web/v1/api/session', { method: 'POST', headers: { 'content-type': 'application/json', origin, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** Signs in with a fresh code; returns the `Cookie` header value. */
async function signIn(): Promise<string> {
  const answer = await exchange({ code: codeOf(server.signInLink().url) });
  expect(answer.status).toBe(200);
  const cookie = String(answer.headers['set-cookie']?.[0]);
  return cookie.split(';')[0] as string;
}

describe('sign-in page', () => {
  it('is a static page with an external script and the strict policy', async () => {
    const page = await rawRequest(server.url, '/web/v1/sign-in');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<script src="/web/v1/sign-in.js" defer></script>');
    // No inline script: every <script> element has a src and no content.
    expect(page.body.match(/<script[^>]*>[^<]+<\/script>/g)).toBeNull();
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self';");
    const script = await rawRequest(server.url, '/web/v1/sign-in.js');
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain("location.replace('/web/v1/')");
    expect(script.body).toContain('history.replaceState');
  });
});

describe('code exchange', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie once per code', async () => {
    const link = server.signInLink();
    expect(link.url.startsWith(`${server.url}/web/v1/sign-in#token=`)).toBe(true);
    expect(link.expiresAt - Date.now()).toBeGreaterThan(4 * 60_000);
    expect(link.expiresAt - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    const code = codeOf(link.url);
    expect(code).not.toBe(server.token);
    const answer = await exchange({ code });
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    const cookie = String(answer.headers['set-cookie']?.[0]);
    expect(cookie).toMatch(new RegExp(`^${cookieName}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict; Max-Age=604800$`));
    expect(cookie).not.toContain(code);
    const again = await exchange({ code });
    expect(again.status).toBe(401);
    expect(JSON.parse(again.body)).toEqual({ error: 'the sign-in code is unknown, already used or expired; run `openvaala open` for a new link' });
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it('marks the cookie Secure behind https', async () => {
    const answer = await exchange({ code: codeOf(server.signInLink().url) }, { 'x-forwarded-proto': 'https' });
    expect(String(answer.headers['set-cookie']?.[0])).toMatch(/; Secure$/);
  });

  it('refuses foreign origins, other content types and malformed bodies', async () => {
    const code = codeOf(server.signInLink().url);
    const foreign = await exchange({ code }, { origin: 'http://127.0.0.1:1' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error).toBe('origin http://127.0.0.1:1 may not use this server');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const answer = await exchange({ code }, { 'content-type': type });
      expect(answer.status, type).toBe(415);
      expect(JSON.parse(answer.body).error, type).toBe(`Content-Type must be application/json, got ${JSON.stringify(type)}`);
    }
    expect(JSON.parse((await exchange('{not json')).body)).toEqual({ error: 'body: not valid JSON' });
    for (const body of [{}, { code: 7 }, { code: '' }, [code]]) {
      const answer = await exchange(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(answer.body).error).toMatch(/^body\.code: missing or not a non-empty string/);
    }
    expect((await exchange({ code: 'x'.repeat(5000) })).status).toBe(413);
    expect((await exchange({ code: 'A'.repeat(43) })).status).toBe(401);
    // None of the refusals used the code up.
    expect((await exchange({ code })).status).toBe(200);
  });

  it('says whether the cookie is a live session, and signs out', async () => {
    const cookie = await signIn();
    const status = await rawRequest(server.url, '/web/v1/api/session', { headers: { cookie } });
    expect(JSON.parse(status.body)).toEqual({ signedIn: true });
    const out = await rawRequest(server.url, '/web/v1/api/session', { method: 'DELETE', headers: { cookie, origin } });
    expect(out.status).toBe(200);
    expect(String(out.headers['set-cookie']?.[0])).toBe(`${cookieName}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    expect(JSON.parse((await rawRequest(server.url, '/web/v1/api/session', { headers: { cookie } })).body)).toEqual({ signedIn: false });
    expect((await initializeOverWebSocket(server.url, { cookie, origin })).kind).toBe('error');
  });
});

describe('cookie authentication', () => {
  it('authenticates the protocol WebSocket of the own origin', async () => {
    const cookie = await signIn();
    const outcome = await initializeOverWebSocket(server.url, { cookie, origin });
    expect(outcome.kind).toBe('initialized');
    // A stale cookie of the same name sent beside the live one does not hide it.
    const both = await initializeOverWebSocket(server.url, { cookie: `${cookieName}=${'A'.repeat(43)}; ${cookie}`, origin });
    expect(both.kind).toBe('initialized');
  });

  it('refuses the WebSocket from a foreign origin even with the cookie', async () => {
    const cookie = await signIn();
    const outcome = await initializeOverWebSocket(server.url, { cookie, origin: 'http://127.0.0.1:1' });
    expect(outcome).toEqual({ kind: 'refused', status: 403, body: JSON.stringify({ error: 'origin http://127.0.0.1:1 may not use this server' }) });
  });

  it('leaves a connection without cookie or token unauthenticated', async () => {
    for (const cookie of [undefined, `${cookieName}=${'A'.repeat(43)}`, `openvaala_session_1=${'A'.repeat(43)}`]) {
      const outcome = await initializeOverWebSocket(server.url, { origin, ...(cookie ? { cookie } : {}) });
      expect(outcome, String(cookie)).toMatchObject({ kind: 'error', code: -32001, closeCode: 1008 });
    }
  });

  it('authenticates uploads', async () => {
    const cookie = await signIn();
    const { conversation } = await (async () => {
      const { RuntimeClient } = await import('../../src/client/runtime-client.js');
      const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'test' });
      try {
        return await client.request('conversation/create', { cwd: environment.workDir });
      } finally {
        await client.close();
      }
    })();
    const target = `/api/v1/uploads?conversationId=${conversation.id}&name=notes.txt`;
    const accepted = await rawRequest(server.url, target, { method: 'POST', headers: { cookie, origin }, body: 'hello' });
    expect(accepted.status).toBe(201);
    const refused = await rawRequest(server.url, target, { method: 'POST', headers: { origin }, body: 'hello' });
    expect(refused.status).toBe(401);
    const foreign = await rawRequest(server.url, target, { method: 'POST', headers: { cookie, origin: 'http://localhost:1' }, body: 'hello' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error).toBe('origin http://localhost:1 may not use this server');
  });

  it('refuses state-changing requests from a foreign origin on any path', async () => {
    for (const target of ['/healthz', '/web/v1/', '/nowhere']) {
      const answer = await rawRequest(server.url, target, { method: 'POST', headers: { origin: 'https://evil.example' }, body: '{}' });
      expect(answer.status, target).toBe(403);
      expect(JSON.parse(answer.body).error).toBe('origin https://evil.example may not use this server');
    }
  });
});

describe('sign-in links for token holders', () => {
  it('makes a new link with the server token only', async () => {
    const made = await rawRequest(server.url, '/web/v1/api/sign-in-link', { method: 'POST', headers: { authorization: `Bearer ${server.token}` } });
    expect(made.status).toBe(200);
    const link = JSON.parse(made.body) as { url: string; expiresAt: number };
    expect((await exchange({ code: codeOf(link.url) })).status).toBe(200);
    const cookie = await signIn();
    const withCookie = await rawRequest(server.url, '/web/v1/api/sign-in-link', { method: 'POST', headers: { cookie, origin } });
    expect(withCookie.status).toBe(401);
    expect(JSON.parse(withCookie.body).error).toBe('missing token: send "Authorization: Bearer <token>"');
    expect((await rawRequest(server.url, '/web/v1/api/sign-in-link', { method: 'POST', headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await rawRequest(server.url, '/web/v1/api/sign-in-link', { headers: { authorization: `Bearer ${server.token}` } })).status).toBe(405);
  });
});

/**
 * Sign-in with OpenID Connect end to end (docs/platform.md, "Signing in"): a real OpenID
 * Provider (`oidc-provider`, its development login and consent pages) on loopback, the
 * platform-mode server configured with it in `server.yaml` (client secret as `env:NAME`), and
 * Chromium clicking through the sign-in page, the provider's pages and back. An invited
 * address becomes a user; an address the provider has not verified, or one nobody invited, is
 * refused with the reason on the sign-in page. Password sign-in through the page is checked too.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { writeWebFixture } from '../helpers/web-fixture.js';
import { launchChromium, type TestBrowser } from '../www/browser.js';
import { RpcSocket } from './platform-client.js';

const CLIENT_SECRET = 'a client secret long enough for HS256 signing of tokens';
let environment: TestEnvironment;
let server: RunningServer;
let issuerServer: Server;
let issuer: string;
let browser: TestBrowser;

beforeAll(async () => {
  // The provider's handler is bound once the runtime server's callback address is known.
  const bound: { handler?: (request: IncomingMessage, response: ServerResponse) => void } = {};
  issuerServer = createServer((request, response) => (bound.handler ? bound.handler(request, response) : response.writeHead(503).end()));
  await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
  environment = await createTestEnvironment('responses: []\n');
  writeFileSync(
    path.join(environment.paths.configDir, 'server.yaml'),
    `platform:\n  enabled: true\n  oidc:\n    - name: test-idp\n      label: Test Identity\n      issuer: ${issuer}\n      clientId: openvaala\n      clientSecret: env:OPENVAALA_TEST_OIDC_SECRET\n`,
  );
  process.env.OPENVAALA_TEST_OIDC_SECRET = CLIENT_SECRET;
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent'), webRoot: writeWebFixture(path.join(environment.root, 'www')) });
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'openvaala', client_secret: CLIENT_SECRET, redirect_uris: [`${server.url}/web/v1/api/platform/oidc/test-idp/callback`], grant_types: ['authorization_code'], response_types: ['code'] }],
    // The login typed on the provider's page is the account: `<login>@example.com`, verified unless the login says otherwise.
    findAccount: (_context: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id, email: `${id}@example.com`, email_verified: !id.startsWith('unverified'), name: `Person ${id}` }) }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['a cookie signing key for the test provider'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
  });
  bound.handler = provider.callback();
  const admin = await server.platform?.users.claim({ email: 'ada@example.com', password: 'correct horse battery' });
  await server.platform?.invitations.create('carol@example.com', 'member', String(admin?.id));
  browser = await launchChromium();
  // Nothing leaves this machine (the provider's page asks for web fonts).
  await browser.context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((resolve) => issuerServer?.close(resolve));
  await environment?.dispose();
  delete process.env.OPENVAALA_TEST_OIDC_SECRET;
});

/** Clicks the issuer's button on the sign-in page and signs in on the provider's pages as `login`. */
async function signInThroughProvider(page: Page, login: string): Promise<void> {
  await page.goto(`${server.url}/web/v1/sign-in`);
  await page.getByRole('link', { name: 'Sign in with Test Identity' }).click();
  await page.waitForURL((url) => url.href.startsWith(issuer));
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  // The consent page shows on a first sign-in of this account to this client.
  const consent = page.getByRole('button', { name: 'Continue' });
  await page.waitForURL((url) => url.href.startsWith(server.url) || url.href.startsWith(issuer));
  if (new URL(page.url()).origin === issuer && (await consent.count()) > 0) await consent.click();
  await page.waitForURL((url) => url.href.startsWith(server.url));
}

/** The `Cookie` header of the browser's cookies for the server. */
async function cookieHeader(): Promise<string> {
  return (await browser.context.cookies(server.url)).map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
}

describe('OpenID Connect sign-in in Chromium', () => {
  it('signs an invited address in: the user is created with its verified email and the app connects', async () => {
    const page = await browser.newPage();
    await signInThroughProvider(page, 'carol');
    await page.waitForURL(`${server.url}/web/v1/`);
    await expect.poll(() => page.evaluate<string | undefined>('window.__openvaala?.state')).toBe('initialized');
    const session = (await browser.context.cookies(server.url)).find((cookie) => cookie.name === `openvaala_user_${server.port}`);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    const socket = await RpcSocket.open(server.url, { cookie: await cookieHeader(), origin: server.url });
    expect(await socket.result('account/get')).toMatchObject({ caller: 'user', user: { email: 'carol@example.com', role: 'member', displayName: 'Person carol', hasPassword: false } });
    const { sessions } = (await socket.result('account/sessions/list')) as { sessions: { method: string }[] };
    expect(sessions.map((entry) => entry.method)).toEqual(['oidc:test-idp']);
    socket.close();
    await page.close();
  });

  it('refuses an address the provider has not verified, and one nobody invited, saying why', async () => {
    await browser.context.clearCookies();
    const page = await browser.newPage();
    await signInThroughProvider(page, 'unverified-dan');
    await page.waitForURL(`${server.url}/web/v1/sign-in`);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('the identity provider has not verified unverified-dan@example.com; verify the address there first');
    await browser.context.clearCookies();
    await signInThroughProvider(page, 'mallory');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('mallory@example.com has no account here; ask an administrator for an invitation');
    expect((await server.platform?.users.list())?.map((user) => user.email)).toEqual(['ada@example.com', 'carol@example.com']);
    await page.close();
  });

  it('signs in with email and password on the sign-in page', async () => {
    await browser.context.clearCookies();
    const page = await browser.newPage();
    await page.goto(`${server.url}/web/v1/sign-in`);
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.getByLabel('Email').fill('ada@example.com');
    await form.getByLabel('Password').fill('wrong password');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('wrong email or password');
    await form.getByLabel('Password').fill('correct horse battery');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/web/v1/`);
    await expect.poll(() => page.evaluate<string | undefined>('window.__openvaala?.state')).toBe('initialized');
    await page.close();
  });
});

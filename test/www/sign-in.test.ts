/**
 * Sign-in of the web UI in a real Chromium against a real `openvaala serve` (docs/web.md):
 * the printed link signs in and lands on /web/v1/ with an HttpOnly cookie, leaving the code
 * neither in the address nor in the session history; the page's WebSocket then initializes
 * without any token; a code works once; a page without the exchange cannot connect; a page of
 * another origin (another port of 127.0.0.1, so the same site and the cookie goes along)
 * cannot open the WebSocket nor use the exchange.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startWebServer, type TestBrowser, type WebServer } from './browser.js';
import { rawRequest } from '../helpers/http-exchange.js';

// Code run inside the page is given as strings where it names browser globals: the project's
// TypeScript setup has Node's types, not the DOM's.

let server: WebServer;
let browser: TestBrowser;

beforeAll(async () => {
  server = await startWebServer();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** What a page's WebSocket to the server did after sending `initialize` without a token. */
type SocketOutcome = { state: 'initialized'; serverName: string } | { state: 'refused'; code: number; closeCode: number } | { state: 'failed'; opened: boolean; closeCode: number };

/** Opens the protocol WebSocket from inside `page` and sends `initialize` (no token). */
function initializeFromPage(page: Page, serverUrl: string): Promise<SocketOutcome> {
  return page.evaluate(
    (url) =>
      new Promise<SocketOutcome>((resolve) => {
        const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/api/v1/openvaala`);
        let opened = false;
        let refusedCode: number | undefined;
        socket.onopen = () => {
          opened = true;
          socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'browser-test' }, protocolVersion: 2 } }));
        };
        socket.onmessage = (event) => {
          const message = JSON.parse(String(event.data)) as { id?: number; result?: { serverInfo: { name: string } }; error?: { code: number } };
          if (message.id !== 1) return;
          if (message.result) {
            resolve({ state: 'initialized', serverName: message.result.serverInfo.name });
            socket.close();
          } else refusedCode = message.error?.code;
        };
        socket.onclose = (event) => resolve(refusedCode !== undefined ? { state: 'refused', code: refusedCode, closeCode: event.code } : { state: 'failed', opened, closeCode: event.code });
      }),
    serverUrl,
  );
}

describe('sign-in in Chromium', () => {
  it('signs in with the printed link and leaves the code nowhere in the page', async () => {
    const page = await browser.newPage();
    const code = server.signInLink.split('#token=')[1] as string;
    const entriesBefore = await page.evaluate<number>('history.length');
    await page.goto(server.signInLink);
    await page.waitForURL(`${server.url}/web/v1/`);
    await page.locator('#app').waitFor();
    await browser.screenshot(page, 'sign-in-landed');
    expect(page.url()).toBe(`${server.url}/web/v1/`);
    expect(await page.evaluate<string>('location.href')).not.toContain(code);
    // The link's entry was replaced twice (replaceState, location.replace): the whole sign-in
    // added one entry, and no entry of the session history holds the code.
    expect(await page.evaluate<number>('history.length')).toBe(entriesBefore + 1);
    const devtools = await browser.context.newCDPSession(page);
    const { entries } = (await devtools.send('Page.getNavigationHistory')) as { entries: { url: string }[] };
    expect(entries.map((entry) => entry.url)).toEqual([...(entriesBefore === 1 ? ['about:blank'] : []), `${server.url}/web/v1/`]);
    await devtools.detach();
    await page.goBack();
    expect(page.url()).not.toContain(code);
    await page.goForward();
    expect(page.url()).toBe(`${server.url}/web/v1/`);
    // The cookie is HttpOnly: the browser has it, page scripts cannot see it.
    const cookies = await browser.context.cookies(server.url);
    const session = cookies.find((cookie) => cookie.name === `openvaala_session_${server.port}`);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false });
    expect(session?.value).not.toContain(code);
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    // The page's own script connected, authenticated by the cookie alone; its inline script was blocked.
    await page.waitForFunction("window.__openvaala?.state === 'initialized'");
    expect(await page.evaluate<unknown>('window.__inlineRan')).toBeUndefined();
    expect(await initializeFromPage(page, server.url)).toEqual({ state: 'initialized', serverName: 'openvaala' });
    await page.close();
  });

  it('does not accept a code twice', async () => {
    const second = await launchChromium();
    try {
      const page = await second.newPage();
      await page.goto(server.signInLink);
      await page.getByText('Sign-in failed').waitFor();
      await second.screenshot(page, 'sign-in-code-used');
      expect(await page.locator('#status').textContent()).toBe('Sign-in failed: the sign-in code is unknown, already used or expired; run `openvaala open` for a new link.');
      expect(page.url()).toBe(`${server.url}/web/v1/sign-in`);
      expect(await second.context.cookies(server.url)).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('keeps a page without the exchange from connecting', async () => {
    const fresh = await launchChromium();
    try {
      const page = await fresh.newPage();
      await page.goto(`${server.url}/web/v1/`);
      const outcome = await initializeFromPage(page, server.url);
      expect(outcome).toEqual({ state: 'refused', code: -32001, closeCode: 1008 });
    } finally {
      await fresh.close();
    }
  });
});

describe('a page of another origin', () => {
  let attacker: Server;
  let attackerUrl: string;

  beforeAll(async () => {
    // Another port of 127.0.0.1: the same site as the server, so SameSite does not hold the cookie back.
    attacker = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html><body><p id="attacker">attacker page</p></body></html>');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    attacker.closeAllConnections();
    await new Promise<void>((resolve) => attacker.close(() => resolve()));
  });

  it('cannot open the WebSocket even though the browser holds the session cookie', async () => {
    // The browser of the first test is signed in; the attacker's tab shares its cookies.
    expect((await browser.context.cookies(server.url)).length).toBe(1);
    const page = await browser.newPage();
    await page.goto(attackerUrl);
    const outcome = await initializeFromPage(page, server.url);
    expect(outcome).toMatchObject({ state: 'failed', opened: false });
    await browser.screenshot(page, 'attacker-page');
    await page.close();
  });

  it('cannot use the code exchange', async () => {
    const link = await rawRequest(server.url, '/web/v1/api/sign-in-link', { method: 'POST', headers: { authorization: `Bearer ${server.serve.info.token}` } });
    const code = (JSON.parse(link.body) as { url: string }).url.split('#token=')[1] as string;
    const page = await browser.newPage();
    await page.goto(attackerUrl);
    const attempts = await page.evaluate(
      async ({ url, code }) => {
        const results: string[] = [];
        // A JSON request needs a CORS preflight, which the server never grants.
        try {
          const response = await fetch(`${url}/web/v1/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }), credentials: 'include' });
          results.push(`json: ${response.status}`);
        } catch (error) {
          results.push(`json: ${(error as Error).name}`);
        }
        // A "simple" request goes out without a preflight; the server refuses it by its Origin.
        try {
          const response = await fetch(`${url}/web/v1/api/session`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ code }), credentials: 'include' });
          results.push(`simple: ${response.type}`);
        } catch (error) {
          results.push(`simple: ${(error as Error).name}`);
        }
        return results;
      },
      { url: server.url, code },
    );
    expect(attempts).toEqual(['json: TypeError', 'simple: opaque']);
    await page.close();
    // The code was not used up by either attempt: its owner can still sign in with it.
    const owner = await rawRequest(server.url, '/web/v1/api/session', { method: 'POST', headers: { 'content-type': 'application/json', origin: server.url }, body: JSON.stringify({ code }) });
    expect(owner.status).toBe(200);
  });

  it('is refused by the server with 403 naming the origin', async () => {
    const answer = await rawRequest(server.url, '/web/v1/api/session', { method: 'POST', headers: { 'content-type': 'application/json', origin: attackerUrl }, body: '{"code":"x"}' });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({ error: `origin ${attackerUrl} may not use this server` });
  });
});

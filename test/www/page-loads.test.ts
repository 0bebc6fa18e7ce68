/**
 * Every page the server serves to a browser loads without a failed request or a console error
 * in a real Chromium against a real `openvaala serve` with the built web UI: the sign-in page
 * (single-user and platform mode), and the web UI itself once signed in. A page that names an
 * icon, manifest or script the server does not have (or one the browser looks for by itself,
 * `/favicon.ico` when no icon is declared) fails here.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startWebServer, type TestBrowser, type WebServer } from './browser.js';
import { createTestEnvironment, startServe } from '../helpers/environment.js';

const webRoot = path.resolve(import.meta.dirname, '..', '..', 'dist', 'www');

/** Failed requests (HTTP status 400 and above, or no answer) and console errors of a page. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
  });
  page.on('requestfailed', (request) => {
    // Requests the page itself gives up when it moves on (an aborted fetch) are not failures of the server.
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed ${request.method()} ${request.url()}: ${request.failure()?.errorText ?? ''}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

/** Opens `url` in a new page, waits until it has loaded, settled and had time to fetch its icon, and returns the problems seen. */
async function problemsLoading(browser: TestBrowser, url: string, settled?: (page: Page) => Promise<void>): Promise<string[]> {
  const page = await browser.newPage();
  const problems = watchProblems(page);
  try {
    await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
    await settled?.(page);
    await page.waitForTimeout(1500);
    return problems;
  } finally {
    await page.close();
  }
}

describe('pages the server serves to a browser', { timeout: 90_000 }, () => {
  let server: WebServer;
  let browser: TestBrowser;

  beforeAll(async () => {
    if (!existsSync(path.join(webRoot, 'index.html'))) throw new Error('dist/www/index.html is missing: run `npm run build` first');
    server = await startWebServer({ webRoot });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('the sign-in page without a code', async () => {
    expect(await problemsLoading(browser, `${server.url}/web/v1/sign-in`, (page) => page.getByText(/sign-in link/i).first().waitFor({ timeout: 20_000 }))).toEqual([]);
  });

  it('the sign-in link and the web UI it lands on', async () => {
    expect(await problemsLoading(browser, server.signInLink, (page) => page.waitForURL(`${server.url}/web/v1/`))).toEqual([]);
  });

  it('the web UI, signed in', async () => {
    expect(await problemsLoading(browser, `${server.url}/web/v1/`)).toEqual([]);
  });

  it('the sign-in page of platform mode', async () => {
    const environment = await createTestEnvironment('responses: []\n');
    const serve = await startServe(environment, ['--host', '127.0.0.1', '--platform', '--web-root', webRoot]);
    try {
      expect(await problemsLoading(browser, `${serve.info.url}/web/v1/sign-in`, (page) => page.locator('form').first().waitFor({ timeout: 20_000 }))).toEqual([]);
    } finally {
      await serve.stop();
      await environment.dispose();
    }
  });
});

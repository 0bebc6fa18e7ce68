/**
 * What the browser tests of the web UI share: a real `openvaala serve` (mock provider,
 * loopback, free port) whose printed one-time sign-in link a Chromium page opens, and small
 * page helpers (axe-core check, screenshots, the page's state as seen by its own client).
 * Page code is passed as strings: these tests are type-checked without the DOM library.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { ARTIFACTS_DIR, CHROMIUM_PATH, SIGN_IN_LINK } from './browser.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';

const repositoryRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Chromium's flags for the tests: headless, no sandbox (containers), nothing that calls out. */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A running server with the UI, and the browser that uses it. */
export interface WebSession {
  environment: TestEnvironment;
  serve: ServeProcess;
  browser: Browser;
  context: BrowserContext;
  /** `http://127.0.0.1:<port>/web/v1/`. */
  webUrl: string;
  /** A protocol client of the test (token from the server's info file). */
  client: RuntimeClient;
  /** Opens a new page (tab) of the signed-in context at the given hash route. */
  open(hash?: string): Promise<Page>;
  /** Signs the context in with the link the server printed last (or a new one after a restart). */
  signIn(): Promise<void>;
  /** Stops the server and starts it again on the same port (same data); the client reconnects. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Options of a web session. */
export interface WebSessionOptions {
  script: string;
  viewport: { width: number; height: number };
  /** The system theme the page sees (default dark). */
  colorScheme?: 'dark' | 'light';
  /** Extra files of the configuration directory (e.g. `agents.yaml`). */
  configFiles?: Record<string, string>;
  /** Rewrites `providers.yaml` from the mock's base URL. */
  providersYaml?: (baseURL: string) => string;
}

function printedSignInLink(output: string): string | undefined {
  const links = output.match(new RegExp(SIGN_IN_LINK.source, 'g'));
  return links?.[links.length - 1];
}

/**
 * Builds nothing: the UI must be built (`npm run build`, which `npm test` runs first).
 * @throws Error when dist/www is missing
 */
export async function startWebSession(options: WebSessionOptions): Promise<WebSession> {
  if (!existsSync(path.join(repositoryRoot, 'dist', 'www', 'index.html'))) throw new Error('dist/www/index.html is missing: run `npm run build` first');
  const environment = await createTestEnvironment(options.script, options.providersYaml);
  for (const [name, text] of Object.entries(options.configFiles ?? {})) writeFileSync(path.join(environment.paths.configDir, name), text);
  let serve = await startServe(environment);
  const port = new URL(serve.info.url).port;
  let client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'web-test' });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS });
  const context = await browser.newContext({ viewport: options.viewport, colorScheme: options.colorScheme ?? 'dark' });
  const webUrl = `${serve.info.url}/web/v1/`;
  const session: WebSession = {
    environment,
    get serve() {
      return serve;
    },
    browser,
    context,
    webUrl,
    get client() {
      return client;
    },
    async open(hash = '#/') {
      const page = await context.newPage();
      await page.goto(`${webUrl}${hash}`);
      await page.locator('[data-status="open"]').waitFor({ timeout: 15_000 });
      return page;
    },
    async signIn() {
      let link: string | undefined;
      await until(() => (link = printedSignInLink(serve.output())) !== undefined, 10_000, 'the printed sign-in link');
      const page = await context.newPage();
      await page.goto(link as string);
      await page.waitForURL(/\/web\/v1\/(#.*)?$/, { timeout: 15_000 });
      await page.close();
    },
    async restart() {
      await client.close();
      await serve.stop();
      serve = await startServe(environment, ['--port', port]);
      client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'web-test' });
    },
    async stop() {
      await client.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await serve.stop();
      await environment.dispose();
    },
  };
  await session.signIn();
  return session;
}

/** The serious and critical axe-core violations of the page as it is now (empty when none). */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  const source = readFileSync(path.join(repositoryRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  // Evaluated through the debugging protocol, which the page's CSP does not govern.
  const found = await page.evaluate(`${source}
    ;axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => violation.id + ': ' + violation.nodes.map((node) => node.target.join(' ')).join(', ')))`);
  return found as string[];
}

/** Saves a screenshot under test/artifacts/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}.png`) });
}

/** The ids, in order, of the stored items the page holds of a conversation's root session. */
export async function pageItemIds(page: Page, conversationId: string): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const state = window.openvaala.conversations.get(${JSON.stringify(conversationId)});
    return state ? state.itemsOf(state.conversation.rootSessionId).map((stored) => stored.item.id) : [];
  })()`)) as string[];
}

/** The conversation id of the page's route. @throws Error when the page shows none */
export function conversationIdOf(page: Page): string {
  const match = /#\/c\/(conv_[0-9A-Za-z]+)/.exec(page.url());
  if (!match) throw new Error(`the page shows no conversation: ${page.url()}`);
  return match[1] as string;
}

/**
 * Browser tests of the web UI: Debian's Chromium driven through `playwright-core` (no
 * downloaded browser), each launch with a fresh profile, and a real `openvaala serve` process
 * on 127.0.0.1 with the mock provider whose printed sign-in link the tests open. Screenshots go
 * to `test/artifacts/` (not committed).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';
import { requireExecutable } from '../helpers/required-commands.js';
import { writeWebFixture } from '../helpers/web-fixture.js';

/** The Chromium of the Debian package. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Where screenshots are written (listed in .gitignore). */
export const ARTIFACTS_DIR = path.resolve(import.meta.dirname, '..', 'artifacts');
/**
 * Flags for a quiet, reproducible headless browser: no sandbox (tests may run as root or in a
 * container), no GPU, no QUIC, and none of the background traffic to Google services.
 */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A browser with its own profile. */
export interface TestBrowser {
  /** The browser's one context: its cookies, storage and pages. */
  context: BrowserContext;
  /** Opens a new tab. */
  newPage(): Promise<Page>;
  /** Saves a screenshot of `page` as `test/artifacts/<name>.png`; returns the path. */
  screenshot(page: Page, name: string): Promise<string>;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/**
 * Launches Chromium with a fresh user-data directory.
 * @throws Error naming the Debian package when /usr/bin/chromium is missing
 */
export async function launchChromium(): Promise<TestBrowser> {
  requireExecutable('chromium', 'chromium');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'openvaala-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 } });
  return {
    context,
    newPage: () => context.newPage(),
    async screenshot(page, name) {
      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      const file = path.join(ARTIFACTS_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A running `openvaala serve` for browser tests. */
export interface WebServer {
  environment: TestEnvironment;
  serve: ServeProcess;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** The sign-in link `serve` printed. */
  signInLink: string;
  /** Everything the server printed so far. */
  output(): string;
  /** Stops the server (SIGTERM) and removes its environment. */
  stop(): Promise<void>;
}

/** A sign-in link as `serve` and `open` print it. */
export const SIGN_IN_LINK = /http:\/\/127\.0\.0\.1:\d+\/web\/v1\/sign-in#token=[A-Za-z0-9_-]{43}/;

/**
 * Starts `openvaala serve` on 127.0.0.1 (a free port) with the mock provider and waits for
 * the sign-in link it prints.
 * @param options.webRoot folder served at /web/v1/; default: a fixture page written into the test's temp directory
 */
export async function startWebServer(options: { webRoot?: string; script?: string } = {}): Promise<WebServer> {
  const environment = await createTestEnvironment(options.script ?? 'responses:\n  - text: "hello from the mock"\n');
  const webRoot = options.webRoot ?? writeWebFixture(path.join(environment.root, 'www'));
  let serve: ServeProcess;
  try {
    serve = await startServe(environment, ['--host', '127.0.0.1', '--web-root', webRoot]);
    await until(() => SIGN_IN_LINK.test(serve.output()), 10_000, 'the sign-in link on the output of openvaala serve');
  } catch (error) {
    await environment.dispose();
    throw error;
  }
  const url = serve.info.url;
  return {
    environment,
    serve,
    url,
    port: Number(new URL(url).port),
    signInLink: (SIGN_IN_LINK.exec(serve.output()) as RegExpExecArray)[0],
    output: () => serve.output(),
    async stop() {
      await serve.stop();
      await environment.dispose();
    },
  };
}

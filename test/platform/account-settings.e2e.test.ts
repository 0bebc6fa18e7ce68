/**
 * The built web UI in platform mode, in Chromium (docs/platform.md): a browser that is not
 * signed in is sent to the sign-in page, signs in with email and password, and in settings sees
 * its sessions, creates a read-only API token (shown once) that then works over the WebSocket
 * and cannot write, and revokes it, which closes the token's connection at once. Its one theme
 * control applies to this browser and keeps the pick as the user's own setting on the server.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { PACKAGE_ROOT } from '../../src/package-info.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { launchChromium, type TestBrowser } from '../www/browser.js';
import { RpcSocket } from './platform-client.js';

const WEB_ROOT = path.join(PACKAGE_ROOT, 'dist', 'www');
let environment: TestEnvironment;
let server: RunningServer;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(path.join(WEB_ROOT, 'index.html'))) throw new Error(`${WEB_ROOT} has no built web UI: run \`npm run build\` first`);
  environment = await createTestEnvironment('responses: []\n');
  writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), 'platform:\n  enabled: true\n');
  server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent'), webRoot: WEB_ROOT });
  await server.platform?.users.claim({ email: 'ada@example.com', password: 'correct horse battery', displayName: 'Ada' });
  browser = await launchChromium();
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await environment?.dispose();
});

describe('account settings in the web UI', { timeout: 60_000 }, () => {
  it('sends a browser that is not signed in to the sign-in page, where a password signs it in', async () => {
    await page.goto(`${server.url}/web/v1/`);
    await page.waitForURL(`${server.url}/web/v1/sign-in`);
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.getByLabel('Email').fill('ada@example.com');
    await form.getByLabel('Password').fill('correct horse battery');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/web/v1/`);
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(await page.getByRole('region', { name: 'Account' }).innerText()).toContain('Signed in as Ada (ada@example.com), admin.');
    await expect.poll(() => page.getByRole('list', { name: 'Sessions' }).innerText()).toContain('This browser');
  });

  it('creates a read-only token shown once, which reads but cannot write, and revokes it', async () => {
    const form = page.getByRole('form', { name: 'New API token' });
    await form.getByLabel('Token name').fill('ci reader');
    await form.getByLabel('Scope').selectOption('read-only');
    await form.getByRole('button', { name: 'Create token' }).click();
    const shown = page.locator('code.new-token');
    await shown.waitFor();
    const token = await shown.innerText();
    expect(token).toMatch(/^ov_[A-Za-z0-9_-]{43}$/);
    await expect.poll(() => page.getByRole('list', { name: 'API tokens' }).innerText()).toContain('ci reader (read-only)');
    const script = await RpcSocket.open(server.url, { authorization: `Bearer ${token}` });
    expect(await script.result('account/get')).toMatchObject({ caller: 'api-token', scope: { kind: 'read-only' } });
    expect((await script.failure('conversation/create', {})).message).toContain('read-only');
    await page.getByRole('button', { name: 'Revoke token ci reader' }).click();
    await expect.poll(() => script.closed?.code).toBe(1008);
    await expect.poll(() => page.getByRole('list', { name: 'API tokens' }).innerText()).toBe('');
    await browser.screenshot(page, 'platform-account-settings');
  });

  it('has one theme control, which applies to this browser and is kept as a setting of the user', async () => {
    const theme = page.getByRole('combobox', { name: 'Theme' });
    expect(await theme.count()).toBe(1);
    await theme.selectOption('light');
    await expect.poll(() => page.locator('html').getAttribute('data-theme')).toBe('light');
    const stored = () => page.evaluate(async () => (await (globalThis as unknown as { openvaala: { client: { request(method: string, params: object): Promise<{ settings: { theme?: string } }> } } }).openvaala.client.request('settings/get', {})).settings.theme);
    await expect.poll(stored).toBe('light');
    await theme.selectOption('dark');
    await expect.poll(stored).toBe('dark');
    expect(await page.locator('html').getAttribute('data-theme')).toBe('dark');
  });
});

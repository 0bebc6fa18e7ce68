/**
 * The browser drawer in Chromium against a real `openvaala serve` with the agent's browser
 * enabled: an agent turn (mock model, scripted tool calls) opens a page the test serves on
 * 127.0.0.1 through the MCP server `browser` and reads its title; the drawer then shows that
 * page (a loaded screenshot, its URL and title), and the user takes over through its address bar
 * and stops the browser.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { ARTIFACTS_DIR } from './browser.js';
import { startWebSession, type WebSession } from './web-session.js';

const TITLE = 'Lighthouse opening hours';
const SECOND_TITLE = 'Ferry timetable';

describe('browser drawer', { timeout: 120_000 }, () => {
  let web: WebSession;
  let pageServer: Server;
  let pageUrl: string;

  beforeAll(async () => {
    pageServer = createServer((request, response) => {
      const title = request.url?.startsWith('/ferry') ? SECOND_TITLE : TITLE;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      // The ferry page is one big link back to the lighthouse page, for a click on the screenshot.
      const body = title === SECOND_TITLE ? '<a href="/lighthouse" style="display:block;height:300px;font-size:48px">Back to the lighthouse</a>' : `<h1 style="font-size:48px">${title}</h1>`;
      response.end(`<!doctype html><title>${title}</title><body style="margin:0">${body}</body>`);
    });
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/lighthouse`;
    const script = [
      'responses:',
      '  - toolCalls:',
      `      - { name: mcp__browser__navigate_page, arguments: { type: url, url: "${pageUrl}" }, id: call_open }`,
      '  - toolCalls:',
      '      - { name: mcp__browser__evaluate_script, arguments: { function: "() => document.title" }, id: call_title }',
      `  - text: "The page is titled ${TITLE}."`,
    ].join('\n');
    web = await startWebSession({ script, viewport: { width: 1280, height: 900 }, configFiles: { 'server.yaml': 'browser:\n  enabled: true\n' } });
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
    pageServer?.closeAllConnections();
    await new Promise((resolve) => pageServer?.close(resolve));
  });

  it('shows the page the agent opened, and lets the user take over', async () => {
    const { conversation } = await web.client.request('conversation/create', { cwd: web.environment.workDir, title: 'Browsing' });
    await web.client.request('session/input', { conversationId: conversation.id, input: 'What is the title of the lighthouse page?' });
    const toolCalls = async () => (await web.client.request('items/list', { conversationId: conversation.id })).items.flatMap(({ item }) => (item.kind === 'tool_call' ? [item] : []));
    await expect.poll(async () => (await toolCalls()).length, { timeout: 60_000, interval: 200 }).toBe(2);
    const [opened, read] = await toolCalls();
    expect(opened?.isError, opened?.output).toBe(false);
    expect(read?.output).toContain(TITLE);

    const page = await web.open(`#/c/${conversation.id}`);
    await page.getByRole('log', { name: 'Transcript' }).getByText(`The page is titled ${TITLE}.`).waitFor();
    await page.getByRole('button', { name: 'Browser' }).click();
    const drawer = page.getByRole('complementary', { name: 'browser drawer' });
    await drawer.getByLabel('Page').getByText(TITLE).waitFor();
    await drawer.getByLabel('Page').getByText(pageUrl).waitFor();
    const screen = drawer.getByRole('img', { name: `Page shown by the browser: ${TITLE}` });
    await screen.waitFor();
    await expect.poll(() => screen.evaluate((element) => {
          const image = element as unknown as { complete: boolean; naturalWidth: number; naturalHeight: number };
          return image.complete && image.naturalWidth > 0 && image.naturalHeight > 0;
        })).toBe(true);
    expect((await screen.boundingBox())?.width).toBeGreaterThan(100);
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, 'browser-drawer.png') });

    // Take over: open another page through the address bar.
    const address = drawer.getByRole('textbox', { name: 'Address' });
    await address.fill(pageUrl.replace('/lighthouse', '/ferry'));
    await drawer.getByRole('button', { name: 'Go' }).click();
    await drawer.getByLabel('Page').getByText(SECOND_TITLE).waitFor();
    // Click through the screenshot: the point clicked on the image is clicked on the page, following the link.
    await drawer.getByRole('img', { name: `Page shown by the browser: ${SECOND_TITLE}` }).click({ position: { x: 30, y: 20 } });
    await drawer.getByLabel('Page').getByText(TITLE).waitFor();

    // A URL of another scheme is refused with the server's reason.
    await address.fill('file:///etc/passwd');
    await drawer.getByRole('button', { name: 'Go' }).click();
    await drawer.getByRole('alert').getByText(/params\.action\.url: expected an http:\/\/ or https:\/\/ URL/).waitFor();

    await drawer.getByRole('button', { name: 'Stop' }).click();
    await drawer.getByText('The browser is stopped.', { exact: false }).waitFor();
    expect((await web.client.request('browser/state', { conversationId: conversation.id })).running).toBe(false);
    await page.close();
  });
});

/**
 * Web UI paint benchmark: the first meaningful paint of a 5,000-item conversation in Chromium
 * next to the same page with 50 items. "Meaningful" is the newest item of the transcript on
 * the screen: measured in the page from navigation start until the frame after the last
 * stored item's element appears (the replay of every item over the WebSocket included). The
 * browser's first contentful paint is printed alongside.
 *
 * The items are written straight into the conversation's log (no model calls): per turn a
 * user message, reasoning, a Markdown answer with a code block, a command with output, and a
 * closing answer. The server runs in this process with the built UI (`npm run build` first;
 * `npm run bench:web-paint` does both). Target: the 5,000-item page within 3x of the 50-item
 * page (windowed rendering keeps the mounted rows the same; what grows is the replay).
 *
 * Usage: `node dist/bench/web-paint.js [rounds]` (default 5).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { RuntimeClient } from '../src/client/runtime-client.js';
import { createLogger } from '../src/logger.js';
import { MockProviderServer, parseMockScript } from '../src/models/mock/index.js';
import type { Item } from '../src/protocol/index.js';
import { startRuntimeServer } from '../src/server/runtime-server.js';
import { createConversationWithItems } from './conversation-items.js';

const LARGE = 5000;
const SMALL = 50;
/** More items than the first read of a conversation holds (200 newest). */
const TAIL_CHECK = 201;
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const packageRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-web-paint-'));
  const paths = { configDir: path.join(root, 'config'), dataDir: path.join(root, 'data'), stateDir: path.join(root, 'state') };
  mkdirSync(paths.configDir, { recursive: true });
  mkdirSync(path.join(root, 'work'));
  const mock = new MockProviderServer(parseMockScript('responses:\n  - text: "Ready."\n  - text: "Ready."\n', 'bench.yaml'));
  const { baseURL } = await mock.start({ port: 0 });
  writeFileSync(path.join(paths.configDir, 'providers.yaml'), `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`);
  const start = () => startRuntimeServer({ paths, port: 0, logger: createLogger('silent'), webRoot: path.join(packageRoot, 'dist', 'www') });
  let server = await start();
  let client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'web-paint' });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
  try {
    const conversations: Array<{ count: number; id: string; lastItemId: string }> = [];
    for (const count of [SMALL, LARGE]) {
      const { conversationId, items } = await createConversationWithItems(client, server, path.join(root, 'work'), count);
      conversations.push({ count, id: conversationId, lastItemId: (items[items.length - 1] as Item).id });
    }
    // A fresh server reads the logs as a client's server would find them after any restart.
    await client.close();
    await server.stop();
    server = await start();
    client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'web-paint' });
    for (const conversation of conversations) {
      const started = performance.now();
      const synced = new Promise<void>((resolve) => {
        const stop = client.onNotification((event) => {
          if (event.method === 'conversation/synced' && event.params.conversationId === conversation.id) {
            stop();
            resolve();
          }
        });
      });
      await client.request('conversation/subscribe', { conversationId: conversation.id });
      await synced;
      console.log(`${String(conversation.count).padStart(5)} items: replay to a Node client ${(performance.now() - started).toFixed(0)} ms`);
      await client.request('conversation/unsubscribe', { conversationId: conversation.id });
    }
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const signIn = await context.newPage();
    await signIn.goto(server.signInLink().url);
    await signIn.waitForURL(/\/web\/v1\/(#.*)?$/);
    await signIn.close();
    const results = new Map<number, { paint: number[]; contentful: number[]; mounted: number }>();
    for (let round = 0; round < rounds; round++) {
      for (const conversation of conversations) {
        const page = await context.newPage();
        // Registered before the page's own scripts run (through the debugging protocol, outside the CSP).
        await page.addInitScript(`window.__meaningfulPaint = new Promise((resolve) => {
          const found = () => document.querySelector('[data-item-id="${conversation.lastItemId}"]');
          const observer = new MutationObserver(() => {
            if (!found()) return;
            observer.disconnect();
            requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())));
          });
          document.addEventListener('DOMContentLoaded', () => observer.observe(document.body, { childList: true, subtree: true }));
        });`);
        await page.goto(`${server.url}/web/v1/#/c/${conversation.id}`);
        const paint = (await Promise.race([
          page.evaluate('window.__meaningfulPaint'),
          page.waitForTimeout(60_000).then(async () => {
            throw new Error(`the newest item of the ${conversation.count}-item conversation was not painted within 60 s (status ${String(await page.evaluate('document.querySelector("[data-status]")?.dataset.status'))}, ${String(await page.evaluate('document.querySelectorAll("article").length'))} items shown, ${String(await page.evaluate('document.querySelector("main")?.innerText.slice(0, 300)'))})`);
          }),
        ])) as number;
        const contentful = (await page.evaluate(`performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? 0`)) as number;
        const mounted = (await page.evaluate(`document.querySelectorAll('.transcript article[data-item-id]').length`)) as number;
        if (round === 0 && conversation.count === LARGE) {
          // Scrolling back reads earlier items from the server (a check, not a figure).
          for (let step = 0; step < 3; step++) await page.getByRole('button', { name: /Show earlier/ }).click();
          await page.waitForFunction(`document.querySelectorAll('.transcript article[data-item-id]').length > ${TAIL_CHECK}`);
        }
        const entry = results.get(conversation.count) ?? { paint: [], contentful: [], mounted };
        entry.paint.push(paint);
        entry.contentful.push(contentful);
        results.set(conversation.count, entry);
        await page.close();
      }
    }
    const small = results.get(SMALL) as { paint: number[]; contentful: number[]; mounted: number };
    const large = results.get(LARGE) as { paint: number[]; contentful: number[]; mounted: number };
    for (const [count, entry] of [[SMALL, small], [LARGE, large]] as const) {
      console.log(`${String(count).padStart(5)} items: first meaningful paint median ${median(entry.paint).toFixed(0).padStart(6)} ms (min ${Math.min(...entry.paint).toFixed(0)}, max ${Math.max(...entry.paint).toFixed(0)}), first contentful paint ${median(entry.contentful).toFixed(0)} ms, ${entry.mounted} items mounted, ${rounds} rounds`);
    }
    console.log(`ratio ${LARGE} / ${SMALL} items: ${(median(large.paint) / median(small.paint)).toFixed(2)}x (target within 3x)`);
  } finally {
    await browser.close();
    await client.close();
    await server.stop();
    await mock.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

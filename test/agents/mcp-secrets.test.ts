/**
 * The `env` and `headers` values of a conversation's own MCP servers (`conversation/create`
 * `mcpServers`) never reach clients: over a real WebSocket against a real server and the mock
 * provider, every result and notification that carries the conversation shows literal values
 * as `"***"` and `env:NAME` references as written, while the runtime still starts the server
 * with the real values.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, Conversation } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { GROWING_SERVER, toolCalls } from '../mcp/mcp-helpers.js';

let harness: InProcessServer | undefined;
let other: RuntimeClient | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
  await harness?.stop();
  harness = undefined;
  delete process.env.OPENVAALA_TEST_MISSING_FILE;
});

const LITERAL_HEADER = 'Bearer LITERAL-HEADER-SECRET';

describe('a conversation\'s own MCP servers, as clients see them', () => {
  it('shows literal env and headers values as "***" in every result and notification, keeps env:NAME, and runs with the real values', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: mcp__own__echo, arguments: { text: "hello" } }]
  - text: "done"
`);
    // The growing server appends its pid to PID_FILE: the file appears only if the real value reached it.
    const pidFile = path.join(harness.environment.workDir, 'LITERAL-ENV-SECRET.pids');
    process.env.OPENVAALA_TEST_MISSING_FILE = path.join(harness.environment.workDir, 'never-created');
    const mcpServers = {
      own: { transport: 'stdio', command: process.execPath, args: [GROWING_SERVER], env: { PID_FILE: pidFile, FAIL_IF_EXISTS: 'env:OPENVAALA_TEST_MISSING_FILE' } },
      remote: { transport: 'http', url: 'http://127.0.0.1:9/mcp', enabled: false, headers: { Authorization: LITERAL_HEADER, 'X-Token': 'env:OPENVAALA_TEST_TOKEN' } },
    };
    const redacted = {
      own: { ...mcpServers.own, env: { PID_FILE: '***', FAIL_IF_EXISTS: 'env:OPENVAALA_TEST_MISSING_FILE' } },
      remote: { ...mcpServers.remote, headers: { Authorization: '***', 'X-Token': 'env:OPENVAALA_TEST_TOKEN' } },
    };
    const seen: { method: string; conversation: Conversation }[] = [];
    const saw = (method: string, conversation: Conversation) => seen.push({ method, conversation });

    const created = await harness.client.request('conversation/create', { cwd: harness.environment.workDir, mcpServers });
    saw('conversation/create', created.conversation);
    const conversationId = created.conversation.id;
    saw('conversation/subscribe', (await harness.client.request('conversation/subscribe', { conversationId })).conversation);

    // A second client, subscribed too, gets the conversation/updated notification.
    other = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'other' });
    const otherEvents: AnyNotification[] = [];
    other.onNotification((event) => otherEvents.push(event));
    saw('conversation/subscribe (second client)', (await other.request('conversation/subscribe', { conversationId })).conversation);

    await harness.client.request('session/input', { conversationId, input: 'go' });
    const turns = await harness.turnsCompleted(1);
    expect(turns[0]?.status, turns[0]?.error).toBe('completed');
    expect(toolCalls(harness.completedItems()).map((call) => [call.toolName, call.output, call.isError])).toEqual([['mcp__own__echo', 'echo: hello', false]]);
    // The runtime started the server with the literal value and the referenced one.
    expect(existsSync(pidFile)).toBe(true);

    saw('conversation/update', (await harness.client.request('conversation/update', { conversationId, title: 'renamed' })).conversation);
    saw('conversation/get', (await harness.client.request('conversation/get', { conversationId })).conversation);
    const updated = await harness.waitFor((event) => event.method === 'conversation/updated');
    if (updated.method === 'conversation/updated') saw('conversation/updated', updated.params.conversation);
    const deadline = Date.now() + 5000;
    while (!otherEvents.some((event) => event.method === 'conversation/updated') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const otherUpdated = otherEvents.find((event) => event.method === 'conversation/updated');
    if (otherUpdated?.method === 'conversation/updated') saw('conversation/updated (second client)', otherUpdated.params.conversation);

    expect(seen.map((entry) => entry.method)).toEqual([
      'conversation/create',
      'conversation/subscribe',
      'conversation/subscribe (second client)',
      'conversation/update',
      'conversation/get',
      'conversation/updated',
      'conversation/updated (second client)',
    ]);
    for (const entry of seen) expect({ method: entry.method, mcpServers: entry.conversation.mcpServers }).toEqual({ method: entry.method, mcpServers: redacted });

    // Nothing any client received carries a literal value: not the list, not any event.
    const listed = await harness.client.request('conversation/list', {});
    const everything = JSON.stringify([listed, harness.events, otherEvents, seen]);
    expect(everything).not.toContain('LITERAL-ENV-SECRET');
    expect(everything).not.toContain('LITERAL-HEADER-SECRET');

    // The server keeps the real values with the conversation.
    const metadata = readFileSync(path.join(harness.environment.paths.dataDir, 'conversations', conversationId, 'metadata.jsonl'), 'utf8');
    expect(metadata).toContain(LITERAL_HEADER);
    expect(metadata).toContain(pidFile);
  });
});

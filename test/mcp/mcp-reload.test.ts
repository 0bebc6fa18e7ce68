/**
 * A reloaded `mcp.yaml` applies to conversations already open from their next turn: a server
 * added is offered, a server removed is stopped.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { processGone, until } from '../helpers/processes.js';
import { GROWING_SERVER, offeredTools, toolCalls, yamlString } from './mcp-helpers.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('mcp.yaml reloaded while a conversation is open', () => {
  it('offers an added server from the next turn, and stops a removed one', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "no MCP tools yet"
  - toolCalls: [{ name: mcp__added__echo, arguments: { text: "hello" } }]
  - text: "echoed"
  - text: "gone again"
`);
    const { environment } = harness;
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'first' });
    await harness.turnsCompleted(1);
    expect([...offeredTools(environment.mock.requests[0]?.body).keys()].some((name) => name.startsWith('mcp__'))).toBe(false);

    const pidFile = path.join(environment.root, 'pids');
    writeFileSync(
      path.join(environment.paths.configDir, 'mcp.yaml'),
      `servers:\n  added:\n    transport: stdio\n    command: ${yamlString(process.execPath)}\n    args: [${yamlString(GROWING_SERVER)}]\n    env: { PID_FILE: ${yamlString(pidFile)} }\n`,
    );
    const status = await harness.client.request('config/reload', {});
    expect(status.ok).toBe(true);
    expect(status.notes?.join('\n')).toContain('mcp.yaml: conversations already open switch to the new MCP servers at their next turn');

    await harness.client.request('session/input', { conversationId, input: 'echo hello' });
    await harness.turnsCompleted(2);
    expect(offeredTools(environment.mock.requests[1]?.body).has('mcp__added__echo')).toBe(true);
    expect(toolCalls(harness.completedItems()).at(-1)).toMatchObject({ status: 'completed', output: 'echo: hello' });
    const pid = Number(readFileSync(pidFile, 'utf8').trim().split('\n')[0]);

    writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), 'servers: {}\n');
    expect((await harness.client.request('config/reload', {})).ok).toBe(true);
    await harness.client.request('session/input', { conversationId, input: 'and now?' });
    await harness.turnsCompleted(3);
    expect(offeredTools(environment.mock.requests[3]?.body).has('mcp__added__echo')).toBe(false);
    await until(() => processGone(pid), 10_000, 'the removed MCP server to stop');
  });
});

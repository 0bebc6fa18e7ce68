/**
 * MCP servers that fail, through a real runtime server: a command that does not exist, a server
 * that exits at once (tried again on the next turn), a server that dies between turns (started
 * again), and servers stopped when the conversation shuts down.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { GROWING_SERVER, offeredTools, toolCalls, writeConfig, yamlString } from './mcp-helpers.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** The pids the fixture server wrote, one per start. */
function startedPids(pidFile: string): number[] {
  return existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `mcp.yaml` running the fixture server as `name`, with its pid file and failure marker. */
function fixtureServer(name: string, root: string): string {
  return `
servers:
  ${name}:
    transport: stdio
    command: ${yamlString(process.execPath)}
    args: [${yamlString(GROWING_SERVER)}]
    env: { PID_FILE: ${yamlString(path.join(root, 'pids'))}, FAIL_IF_EXISTS: ${yamlString(path.join(root, 'locked'))} }
`;
}

describe('an MCP server that cannot start', () => {
  it('whose command does not exist: the turn completes and the tool error names the server and the reason', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__missing__search, arguments: { query: "x" } }]
  - text: "The search server is not available."
`,
      { beforeStart: writeConfig({ mcp: 'servers:\n  missing: { transport: stdio, command: openvaala-no-such-mcp-server }\n' }) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'search' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    const [call] = toolCalls(harness.completedItems());
    expect(call).toMatchObject({ status: 'failed', isError: true });
    expect(call?.output).toBe(
      'mcp__missing__search: MCP server "missing" is not available: command "openvaala-no-such-mcp-server" was not found (it is tried again at the start of the next turn)',
    );
    expect(JSON.stringify(harness.environment.mock.requests[1]?.body)).toContain('command \\"openvaala-no-such-mcp-server\\" was not found');
  });

  it('that exits at once: its stderr is the reason, and the next turn tries again', async () => {
    let root = '';
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__flaky__echo, arguments: { text: "first" } }]
  - text: "flaky is down"
  - toolCalls: [{ name: mcp__flaky__echo, arguments: { text: "again" } }]
  - text: "flaky is up"
`,
      {
        beforeStart: (environment) => {
          root = environment.root;
          writeFileSync(path.join(root, 'locked'), '');
          writeConfig({ mcp: fixtureServer('flaky', root) })(environment);
        },
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'echo first' });
    const [first] = await harness.turnsCompleted(1);
    expect(first?.status).toBe('completed');
    const [failed] = toolCalls(harness.completedItems());
    expect(failed).toMatchObject({ status: 'failed', isError: true });
    expect(failed?.output).toBe(
      'mcp__flaky__echo: MCP server "flaky" is not available: the server exited before completing the MCP handshake; its stderr ended with: cannot open the tool database: it is locked (it is tried again at the start of the next turn)',
    );
    expect(startedPids(path.join(root, 'pids'))).toHaveLength(1);
    expect(offeredTools(harness.environment.mock.requests[0]?.body).has('mcp__flaky__echo')).toBe(false);

    rmSync(path.join(root, 'locked'));
    await harness.client.request('session/input', { conversationId, input: 'echo again' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    expect(toolCalls(harness.completedItems())[1]).toMatchObject({ status: 'completed', output: 'echo: again' });
    expect(startedPids(path.join(root, 'pids'))).toHaveLength(2);
    expect(offeredTools(harness.environment.mock.requests[2]?.body).has('mcp__flaky__echo')).toBe(true);
  });
});

describe('a running MCP server', () => {
  it('that died is started again on the next turn; all are stopped when the server shuts down', async () => {
    let root = '';
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__tools__crash, arguments: {} }]
  - text: "it crashed"
  - toolCalls: [{ name: mcp__tools__echo, arguments: { text: "back" } }]
  - text: "it is back"
`,
      {
        beforeStart: (environment) => {
          root = environment.root;
          writeConfig({ mcp: fixtureServer('tools', root) })(environment);
        },
      },
    );
    const pidFile = path.join(root, 'pids');
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'crash' });
    await harness.turnsCompleted(1);
    const [firstPid] = startedPids(pidFile);
    await waitUntil(() => !isAlive(firstPid!), 'the crashed server is gone');

    await harness.client.request('session/input', { conversationId, input: 'echo' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    expect(toolCalls(harness.completedItems())[1]).toMatchObject({ status: 'completed', output: 'echo: back' });
    const pids = startedPids(pidFile);
    expect(pids).toHaveLength(2);
    expect(isAlive(pids[1]!)).toBe(true);

    await harness.stop();
    harness = undefined;
    await waitUntil(() => !isAlive(pids[1]!), 'the server is stopped after shutdown');
  });
});

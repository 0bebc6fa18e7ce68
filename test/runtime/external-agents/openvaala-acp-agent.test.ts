/**
 * `openvaala acp` itself as the `kind: acp` agent of another OpenVaala server. Server A (in
 * this process, 127.0.0.1) runs the turns of agent `nested` through `node bin/openvaala acp`,
 * whose own XDG directories point it at server B (`openvaala serve`, a child process), whose
 * mock model runs a command that B's approval policy asks about. B's approval travels to the
 * ACP agent, which asks A as `session/request_permission`, which asks A's client as
 * `approval/request`; the answer goes back the same way, B runs the command, and A stores the
 * turn as its own items.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, type ServerRequestParams } from '../../../src/client/runtime-client.js';
import type { Item } from '../../../src/protocol/index.js';
import { CLI_EXECUTABLE } from '../../../src/package-info.js';
import { createTestEnvironment, startServe, stopBackgroundServer, type ServeProcess, type TestEnvironment } from '../../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { processGone, until } from '../../helpers/processes.js';

let inner: TestEnvironment | undefined;
let serverB: ServeProcess | undefined;
let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await harness?.stop();
  harness = undefined;
  await serverB?.stop();
  serverB = undefined;
  // In case `openvaala acp` started a server of its own in B's directories.
  if (inner) await stopBackgroundServer(inner);
  await inner?.dispose();
  inner = undefined;
});

/**
 * The pids of this process's children running `openvaala acp` (server A runs in this process,
 * so the agent processes it starts are its children), read from `/proc`.
 */
function nestedAcpPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent pid is the second field after the command name, which is in parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (parent === process.pid && argv.includes(CLI_EXECUTABLE) && argv.includes('acp')) pids.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return pids;
}

describe('openvaala acp as the agent of another OpenVaala server', { timeout: 120_000 }, () => {
  it('completes a turn with a command and an approval relayed from the inner server, stored as items of the outer one', async () => {
    // Server B: its model runs a command, then answers, holding after the first delta so the
    // test can look at the processes while the turn is still running.
    inner = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo nested-hello" } }]
  - deltas: ["Ran it ", "inside."]
    holds: [{ afterDeltas: 1, gate: answer }]
`);
    writeFileSync(path.join(inner.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: ask } }\n');
    serverB = await startServe(inner);

    // Server A: agent `nested` is `openvaala acp` with B's XDG directories.
    const env = { XDG_CONFIG_HOME: inner.env.XDG_CONFIG_HOME!, XDG_DATA_HOME: inner.env.XDG_DATA_HOME!, XDG_STATE_HOME: inner.env.XDG_STATE_HOME!, OPENVAALA_LOG_LEVEL: 'warn' };
    const agents = [
      'agents:',
      '  nested:',
      '    kind: acp',
      `    command: ${JSON.stringify([process.execPath, CLI_EXECUTABLE, 'acp'])}`,
      `    env: ${JSON.stringify(env)}`,
      '',
    ].join('\n');
    harness = await startInProcessServer('responses: []\n', { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agents) });
    const outer = harness;

    const reviewer = await RuntimeClient.connect({ url: outer.server.url, token: outer.server.token, clientName: 'reviewer', capabilities: { approvals: true } });
    clients.push(reviewer);
    const asked: ServerRequestParams<'approval/request'>[] = [];
    reviewer.handleServerRequest('approval/request', async (request) => {
      asked.push(request);
      return { decision: 'allow_once' };
    });
    const { conversation } = await reviewer.request('conversation/create', { cwd: outer.environment.workDir, agent: 'nested' });
    await outer.client.request('conversation/subscribe', { conversationId: conversation.id });
    await reviewer.request('conversation/subscribe', { conversationId: conversation.id });
    const { turnId } = await reviewer.request('session/input', { conversationId: conversation.id, input: 'run the greeting' });

    // The command was asked about and allowed, and B's model is streaming its answer.
    await inner.mock.waitForHold('answer', 60_000);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.details).toMatchObject({ kind: 'command', command: 'echo nested-hello' });
    // The answer B's model got carries the command's output.
    expect(JSON.stringify(inner.mock.requests[1]?.body)).toContain('nested-hello');
    // One `openvaala acp` runs for the conversation, and it did not start a server of its own.
    const acpPids = nestedAcpPids();
    expect(acpPids).toHaveLength(1);
    const innerServerFile = readFileSync(path.join(inner.paths.stateDir, 'runtime-server.yaml'), 'utf8');
    expect(innerServerFile).toMatch(new RegExp(`^pid: ${serverB.child.pid}$`, 'm'));
    inner.mock.release('answer');

    const [turn] = await outer.turnsCompleted(1, 60_000);
    expect(turn).toMatchObject({ id: turnId, status: 'completed', stopReason: 'end_turn', model: 'acp/nested' });

    // A's log holds the turn as its own items: message, approval, the command with its output, the answer.
    const { items: stored } = await outer.client.request('items/list', { conversationId: conversation.id });
    const items = stored.map((entry) => entry.item).filter((item) => item.turnId === turnId);
    expect(items.find((item) => item.kind === 'user_message')).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(items.find((item) => item.kind === 'user_message'))).toContain('run the greeting');
    const call = items.find((item) => item.kind === 'tool_call') as Extract<Item, { kind: 'tool_call' }> | undefined;
    expect(call).toMatchObject({
      toolName: 'exec_command',
      status: 'completed',
      output: 'nested-hello\n',
      exitCode: 0,
      isError: false,
      details: { kind: 'command', command: 'echo nested-hello', cwd: outer.environment.workDir, exitCode: 0, output: 'nested-hello\n' },
    });
    expect(call!.id).toBe(asked[0]!.itemId);
    expect(items.find((item) => item.kind === 'approval')).toMatchObject({ callId: call!.callId, decision: 'allow_once', decidedBy: 'client:reviewer' });
    expect(items.find((item) => item.kind === 'assistant_message')).toMatchObject({ status: 'completed', text: 'Ran it inside.', model: 'acp/nested' });
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'approval', 'tool_call', 'assistant_message']);

    // On B, the same turn is B's own conversation, whose approval the ACP agent decided for A's client.
    const observer = await RuntimeClient.connect({ url: serverB.info.url, token: serverB.info.token, clientName: 'observer' });
    clients.push(observer);
    const { conversations } = await observer.request('conversation/list', {});
    expect(conversations).toHaveLength(1);
    const { items: innerStored } = await observer.request('items/list', { conversationId: conversations[0]!.id });
    expect(innerStored.map((entry) => entry.item).find((item) => item.kind === 'approval')).toMatchObject({ decision: 'allow_once', decidedBy: 'client:openvaala-acp' });

    // Stopping A stops the nested `openvaala acp`; stopping B ends it too.
    const serverPid = serverB.child.pid!;
    harness = undefined;
    await outer.stop();
    await until(() => acpPids.every(processGone), 10_000, 'the nested openvaala acp to exit');
    const stopping = serverB;
    serverB = undefined;
    await stopping.stop();
    await until(() => processGone(serverPid), 10_000, 'server B to exit');
  });
});

/**
 * The life of an external agent process (here the test's ACP agent), against a real server on
 * 127.0.0.1: a crash during a turn fails that turn with the exit and the agent's stderr, and the
 * next turn starts a new process; a process idle for `idleTimeoutMs` is stopped and started
 * again by the next turn; deleting the conversation and stopping the server stop it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { startWithAcpAgent } from './acp-harness.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function start(idleTimeoutMs?: number): Promise<InProcessServer> {
  return startWithAcpAgent(idleTimeoutMs !== undefined ? `    idleTimeoutMs: ${idleTimeoutMs}\n` : '');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs a `pid` turn and returns the agent process's pid it answered with. */
async function agentPid(conversationId: string, turnsBefore: number): Promise<number> {
  await harness!.client.request('session/input', { conversationId, input: 'pid' });
  const turns = await harness!.turnsCompleted(turnsBefore + 1);
  expect(turns.at(-1)?.status).toBe('completed');
  const answer = harness!.completedItems().findLast((item) => item.kind === 'assistant_message');
  const pid = Number(/^pid (\d+)$/.exec(answer?.kind === 'assistant_message' ? answer.text : '')?.[1]);
  expect(pid).toBeGreaterThan(0);
  return pid;
}

describe('external agent processes', () => {
  it('fails the turn when the process crashes, with its exit and stderr, and starts a new one for the next turn', async () => {
    harness = await start();
    const conversationId = await harness.conversation();
    const first = await agentPid(conversationId, 0);
    await harness.client.request('session/input', { conversationId, input: 'crash' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]).toMatchObject({ status: 'failed', stopReason: 'model_error' });
    expect(turns[1]?.error).toMatch(/the agent process of "tester" exited with code 3; its last output on stderr: crashing on purpose/);
    // What the agent said before it crashed is kept, marked failed.
    expect(harness.completedItems().findLast((item) => item.kind === 'assistant_message')).toMatchObject({ text: 'about to crash', status: 'failed' });
    const second = await agentPid(conversationId, 2);
    expect(second).not.toBe(first);
    expect(isAlive(first)).toBe(false);
  });

  it('stops a process idle for idleTimeoutMs; the next turn starts it again', async () => {
    harness = await start(300);
    const conversationId = await harness.conversation();
    const first = await agentPid(conversationId, 0);
    await until(() => !isAlive(first), 'the idle agent process to stop');
    const second = await agentPid(conversationId, 1);
    expect(second).not.toBe(first);
  });

  it('stops the process when the conversation is deleted', async () => {
    harness = await start();
    const conversationId = await harness.conversation();
    const pid = await agentPid(conversationId, 0);
    expect(isAlive(pid)).toBe(true);
    await harness.client.request('conversation/delete', { conversationId });
    await until(() => !isAlive(pid), 'the agent process to stop');
  });

  it('stops the process when the server stops', async () => {
    harness = await start();
    const conversationId = await harness.conversation();
    const pid = await agentPid(conversationId, 0);
    const stopping = harness;
    harness = undefined;
    await stopping.stop();
    expect(isAlive(pid)).toBe(false);
  });

  it('fails the turn with the reason when the command cannot be started', async () => {
    const agents = 'agents:\n  missing:\n    default: true\n    kind: acp\n    command: [/nonexistent/acp-agent, --stdio]\n';
    harness = await startInProcessServer('responses: []\n', { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agents) });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'hello' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn).toMatchObject({ status: 'failed', stopReason: 'model_error' });
    expect(turn?.error).toMatch(/^the agent process of "missing" could not start "\/nonexistent\/acp-agent": spawn \/nonexistent\/acp-agent ENOENT/);
  });
});

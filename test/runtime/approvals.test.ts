/**
 * Approvals (SPEC §5–§6): a policy rule that asks sends `approval/request` to every attached
 * client; the first answer wins, the others are told `approval/resolved`; a denial's message
 * reaches the model; a waiting call is visible and is asked again of a client that arrives.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, ApprovalRequest } from '../../src/protocol/index.js';
import { writeApprovalPolicy } from '../helpers/approval-policy.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';

const POLICY = writeApprovalPolicy([
  '{ tool: exec_command, match: { command: "touch *" }, decision: ask }',
  '{ tool: exec_command, match: { command: ["rm -rf*"] }, decision: deny }',
  '{ tool: exec_command, match: { command: "echo *" }, decision: ask }',
]);

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await harness?.stop();
  harness = undefined;
});

async function start(script: string): Promise<InProcessServer> {
  harness = await startInProcessServer(script, { beforeStart: POLICY });
  return harness;
}

async function connect(name: string): Promise<{ client: RuntimeClient; events: AnyNotification[] }> {
  const client = await RuntimeClient.connect({ url: harness!.server.url, token: harness!.server.token, clientName: name });
  clients.push(client);
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  return { client, events };
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('approvals', () => {
  it('asks every attached client; the first answer wins and the other is told', async () => {
    const { workDir } = (await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch approved.txt" } }]
  - text: "created"
`)).environment;
    const conversationId = await harness!.conversation();
    const fast = await connect('fast');
    const slow = await connect('slow');
    const askedOf: string[] = [];
    fast.client.handleServerRequest('approval/request', async (request) => {
      askedOf.push(`fast:${request.toolName}`);
      await delay(50);
      return { decision: 'allow_once' };
    });
    slow.client.handleServerRequest('approval/request', async () => {
      askedOf.push('slow');
      // Answers only once the server has taken the fast client's answer, however loaded the machine.
      await until(() => slow.events.some((event) => event.method === 'approval/resolved'), 10_000, 'the approval to be resolved');
      return { decision: 'deny', message: 'too late to matter' };
    });
    await fast.client.request('conversation/subscribe', { conversationId });
    await slow.client.request('conversation/subscribe', { conversationId });
    await harness!.client.request('session/input', { conversationId, input: 'make the file' });
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(askedOf.sort()).toEqual(['fast:exec_command', 'slow']);
    expect(existsSync(path.join(workDir, 'approved.txt'))).toBe(true);
    const approval = harness!.completedItems().find((item) => item.kind === 'approval');
    expect(approval).toMatchObject({ decision: 'allow_once', decidedBy: 'client:fast', toolName: 'exec_command' });
    await delay(500);
    const resolved = slow.events.find((event) => event.method === 'approval/resolved');
    expect(resolved?.params).toMatchObject({ decision: 'allow_once', decidedBy: 'client:fast' });
  });

  it('returns a denial and its message to the model, and denies by policy without asking', async () => {
    const { workDir } = (await start(`
responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: "touch refused.txt" } }
      - { name: exec_command, arguments: { command: "rm -rf /tmp/nothing-here" } }
  - text: "understood"
`)).environment;
    const conversationId = await harness!.conversation();
    const reviewer = await connect('reviewer');
    reviewer.client.handleServerRequest('approval/request', async () => ({ decision: 'deny', message: 'not in this folder' }));
    await reviewer.client.request('conversation/subscribe', { conversationId });
    await harness!.client.request('session/input', { conversationId, input: 'clean up' });
    await harness!.turnsCompleted(1);
    expect(existsSync(path.join(workDir, 'refused.txt'))).toBe(false);
    const calls = harness!.completedItems().filter((item) => item.kind === 'tool_call');
    expect(calls.map((call) => call.status)).toEqual(['failed', 'failed']);
    const next = JSON.stringify(harness!.environment.mock.requests[1]?.body);
    expect(next).toContain('the user denied this call: not in this folder');
    expect(next).toContain('denied by the approval policy (rule 2 of agent \\"default\\")');
    expect(harness!.completedItems().filter((item) => item.kind === 'approval')).toHaveLength(1);
  });

  it('tells the model that a client denied by its own rule, not the user, when the answer is automatic', async () => {
    await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch unattended.txt" } }]
  - text: "understood"
`);
    const conversationId = await harness!.conversation();
    const robot = await connect('night-runner');
    await robot.client.request('conversation/subscribe', { conversationId });
    await harness!.client.request('session/input', { conversationId, input: 'make it' });
    const requested = await harness!.waitFor((event) => event.method === 'approval/requested');
    const approvalId = (requested as Extract<AnyNotification, { method: 'approval/requested' }>).params.approval.approvalId;
    await robot.client.request('approval/respond', { conversationId, approvalId, decision: 'deny', automatic: true, message: 'nobody watches this run' });
    await harness!.turnsCompleted(1);
    const next = JSON.stringify(harness!.environment.mock.requests[1]?.body);
    expect(next).toContain('night-runner denied this call without asking the user: nobody watches this run');
    expect(next).not.toContain('the user denied');
    expect(harness!.completedItems().find((item) => item.kind === 'approval')).toMatchObject({ decision: 'deny', decidedBy: 'client:night-runner', automatic: true });
  });

  it('waits with no client attached, shows the call as pending, and asks a client that subscribes later', async () => {
    const { workDir } = (await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch later.txt" } }]
  - text: "done"
`)).environment;
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'make it' });
    const pending = await harness!.waitFor((event) => event.method === 'session/updated' && event.params.session.pendingApprovals.length === 1);
    const waiting = (pending as Extract<AnyNotification, { method: 'session/updated' }>).params.session.pendingApprovals[0] as ApprovalRequest;
    expect(waiting.toolName).toBe('exec_command');
    await delay(300);
    expect(existsSync(path.join(workDir, 'later.txt'))).toBe(false);

    const late = await connect('late');
    late.client.handleServerRequest('approval/request', async (request) => {
      expect(request.approvalId).toBe(waiting.approvalId);
      return { decision: 'allow_session' };
    });
    await late.client.request('conversation/subscribe', { conversationId });
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(existsSync(path.join(workDir, 'later.txt'))).toBe(true);
    const cleared = harness!.events.filter((event) => event.method === 'session/updated').at(-1);
    expect((cleared as Extract<AnyNotification, { method: 'session/updated' }>).params.session.pendingApprovals).toEqual([]);
    // approval/respond on an answered request is refused without effect.
    const again = await late.client.request('approval/respond', { conversationId, approvalId: waiting.approvalId, decision: 'deny' });
    expect(again.accepted).toBe(false);
  });

  it('gives up waiting when the turn is interrupted', async () => {
    await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch never.txt" } }]
  - text: "next"
`);
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'make it' });
    await harness!.waitFor((event) => event.method === 'approval/requested');
    await harness!.client.request('session/interrupt', { conversationId });
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn?.status).toBe('interrupted');
    const call = harness!.completedItems().find((item) => item.kind === 'tool_call');
    expect(call).toMatchObject({ status: 'interrupted', isError: true });
    expect(harness!.events.some((event) => event.method === 'approval/resolved' && event.params.decidedBy === 'interruption')).toBe(true);
  });

  it('allow_prefix allows later commands starting with the proposed words, and asks again for anything chained', async () => {
    const { workDir } = (await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch first.txt" } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "touch second.txt third.txt" } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "touch fourth.txt; touch chained.txt" } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "echo hi" } }]
  - text: "done"
`)).environment;
    const conversationId = await harness!.conversation();
    const reviewer = await connect('reviewer');
    const asked: ApprovalRequest[] = [];
    reviewer.client.handleServerRequest('approval/request', async (request) => {
      asked.push(request);
      if (request.toolName === 'exec_command' && (request.arguments as { command: string }).command === 'touch first.txt') return { decision: 'allow_prefix' };
      return { decision: 'deny', message: 'no' };
    });
    await reviewer.client.request('conversation/subscribe', { conversationId });
    await harness!.client.request('session/input', { conversationId, input: 'make files' });
    await harness!.turnsCompleted(1);
    expect(asked[0]?.proposedPrefix).toEqual(['touch']);
    // The second call ran without asking; the chained line and the other program were asked.
    expect(asked.map((request) => (request.arguments as { command: string }).command)).toEqual(['touch first.txt', 'touch fourth.txt; touch chained.txt', 'echo hi']);
    expect(existsSync(path.join(workDir, 'second.txt'))).toBe(true);
    expect(existsSync(path.join(workDir, 'chained.txt'))).toBe(false);
    expect(harness!.completedItems().find((item) => item.kind === 'approval')).toMatchObject({ decision: 'allow_prefix', prefix: ['touch'] });
  });

  it('refuses allow_prefix with a prefix that is not the command\'s own, and keeps the call waiting', async () => {
    const { workDir } = (await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch here.txt" } }]
  - text: "done"
`)).environment;
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'make it' });
    const requested = await harness!.waitFor((event) => event.method === 'approval/requested');
    const approvalId = (requested as Extract<AnyNotification, { method: 'approval/requested' }>).params.approval.approvalId;
    await expect(harness!.client.request('approval/respond', { conversationId, approvalId, decision: 'allow_prefix', prefix: ['rm'] })).rejects.toThrow(/does not match the words of the command/);
    const answer = await harness!.client.request('approval/respond', { conversationId, approvalId, decision: 'allow_prefix', prefix: ['touch', 'here.txt'] });
    expect(answer.accepted).toBe(true);
    await harness!.turnsCompleted(1);
    expect(existsSync(path.join(workDir, 'here.txt'))).toBe(true);
  });
});

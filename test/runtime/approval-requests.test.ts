/**
 * Approval requests with everything a client shows (protocol version 2): the tool_call item's
 * id, the call's details and the server's options; `deny_interrupt`; who decided; client
 * capabilities deciding who gets `approval/request` and `item/delta`; and no growth of the
 * server's table of unanswered server-to-client requests.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { API_PATH } from '../../src/server/http-server.js';
import { RuntimeClient, RuntimeClientError, type ServerRequestParams } from '../../src/client/runtime-client.js';
import type { AnyNotification, ApprovalRequest, ClientCapabilities } from '../../src/protocol/index.js';
import { writeApprovalPolicy } from '../helpers/approval-policy.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

const POLICY = writeApprovalPolicy(['{ tool: exec_command, match: { command: "touch *" }, decision: ask }', '{ tool: apply_patch, decision: ask }']);

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

async function connect(name: string, capabilities?: ClientCapabilities): Promise<{ client: RuntimeClient; events: AnyNotification[] }> {
  const client = await RuntimeClient.connect({ url: harness!.server.url, token: harness!.server.token, clientName: name, ...(capabilities ? { capabilities } : {}) });
  clients.push(client);
  const events: AnyNotification[] = [];
  client.onNotification((event) => events.push(event));
  return { client, events };
}

async function pendingServerRequests(): Promise<number> {
  const response = await fetch(`${harness!.server.url}/healthz`, { headers: { authorization: `Bearer ${harness!.server.token}` } });
  return ((await response.json()) as { pendingServerRequests: number }).pendingServerRequests;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('approval requests', () => {
  it('carry the item id, the command and its absolute cwd, and the options; approval/resolved and the approval item say who decided', async () => {
    const { workDir } = (await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch made.txt" } }]
  - text: "made"
`)).environment;
    const conversationId = await harness!.conversation();
    const reviewer = await connect('reviewer', { approvals: true });
    const asked: ServerRequestParams<'approval/request'>[] = [];
    reviewer.client.handleServerRequest('approval/request', async (request) => {
      asked.push(request);
      return { decision: 'allow_once' };
    });
    await reviewer.client.request('conversation/subscribe', { conversationId });
    await harness!.client.request('session/input', { conversationId, input: 'make it' });
    await harness!.turnsCompleted(1);
    expect(existsSync(path.join(workDir, 'made.txt'))).toBe(true);
    const request = asked[0] as ApprovalRequest;
    const call = harness!.completedItems().find((item) => item.kind === 'tool_call');
    expect(request.itemId).toBe(call?.id);
    expect(request.details).toMatchObject({ kind: 'command', command: 'touch made.txt' });
    const cwd = (request.details as { cwd: string }).cwd;
    expect(path.isAbsolute(cwd)).toBe(true);
    expect(request.options.map((option) => option.decision)).toEqual(['allow_once', 'allow_session', 'allow_prefix', 'deny', 'deny_interrupt']);
    expect(request.options.find((option) => option.decision === 'allow_prefix')?.prefix).toEqual(['touch']);
    const resolved = harness!.events.find((event) => event.method === 'approval/resolved');
    expect(resolved?.params).toEqual({ conversationId, approvalId: request.approvalId, sessionId: request.sessionId, turnId: request.turnId, callId: request.callId, itemId: request.itemId, decision: 'allow_once', decidedBy: 'client:reviewer' });
    expect(harness!.completedItems().find((item) => item.kind === 'approval')).toMatchObject({ decision: 'allow_once', decidedBy: 'client:reviewer', callId: request.callId });
  });

  it('for apply_patch carry the diff to apply and offer no prefix', async () => {
    const patch = ['*** Begin Patch', '*** Add File: note.txt', '+hello', '*** End Patch'].join('\n');
    await start(`
responses:
  - toolCalls: [{ name: apply_patch, arguments: { patch: ${JSON.stringify(patch)} } }]
  - text: "done"
`);
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'write it' });
    const requested = (await harness!.waitFor((event) => event.method === 'approval/requested')) as Extract<AnyNotification, { method: 'approval/requested' }>;
    const approval = requested.params.approval;
    expect(approval.details).toEqual({ kind: 'fileChange', changes: [{ path: 'note.txt', kind: 'add', unifiedDiff: '--- /dev/null\n+++ b/note.txt\n@@ -0,0 +1,1 @@\n+hello\n' }] });
    expect(approval.options.map((option) => option.decision)).toEqual(['allow_once', 'allow_session', 'deny', 'deny_interrupt']);
    expect(approval.proposedPrefix).toBeUndefined();
    await harness!.client.request('approval/respond', { conversationId, approvalId: approval.approvalId, decision: 'deny' });
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
  });

  it('deny_interrupt denies the call and ends the turn interrupted', async () => {
    const { workDir } = (await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch never.txt" } }]
  - text: "this is never asked for"
`)).environment;
    const conversationId = await harness!.conversation();
    await harness!.client.request('session/input', { conversationId, input: 'make it' });
    const requested = (await harness!.waitFor((event) => event.method === 'approval/requested')) as Extract<AnyNotification, { method: 'approval/requested' }>;
    const answer = await harness!.client.request('approval/respond', { conversationId, approvalId: requested.params.approval.approvalId, decision: 'deny_interrupt' });
    expect(answer.accepted).toBe(true);
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn?.status).toBe('interrupted');
    expect(existsSync(path.join(workDir, 'never.txt'))).toBe(false);
    expect(harness!.environment.mock.requests).toHaveLength(1);
    const items = harness!.completedItems();
    expect(items.find((item) => item.kind === 'approval')).toMatchObject({ decision: 'deny_interrupt', decidedBy: 'client:test' });
    expect(items.find((item) => item.kind === 'tool_call')).toMatchObject({ status: 'interrupted', isError: true });
    expect(items.find((item) => item.kind === 'interruption')).toMatchObject({ reason: 'user' });
  });

  it('sends approval/request only to connections that declared approvals; the others get the notifications and may answer with approval/respond', async () => {
    await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch a.txt" } }]
  - text: "done"
`);
    const conversationId = await harness!.conversation();
    const capable = await connect('capable', { approvals: true });
    const silent = await connect('silent', {}); // declares nothing: the server's defaults apply
    const asked: string[] = [];
    capable.client.handleServerRequest('approval/request', async () => {
      asked.push('capable');
      return new Promise(() => undefined);
    });
    silent.client.handleServerRequest('approval/request', async () => {
      asked.push('silent');
      return { decision: 'deny' };
    });
    await capable.client.request('conversation/subscribe', { conversationId });
    await silent.client.request('conversation/subscribe', { conversationId });
    await harness!.client.request('session/input', { conversationId, input: 'go' });
    await until(() => silent.events.some((event) => event.method === 'approval/requested'), 'approval/requested at the silent client');
    await until(() => asked.includes('capable'), 'the capable client to be asked');
    const approvalId = (silent.events.find((event) => event.method === 'approval/requested') as Extract<AnyNotification, { method: 'approval/requested' }>).params.approval.approvalId;
    expect(asked).toEqual(['capable']);
    expect((await silent.client.request('approval/respond', { conversationId, approvalId, decision: 'allow_once' })).accepted).toBe(true);
    await harness!.turnsCompleted(1);
    expect(silent.events.some((event) => event.method === 'approval/resolved' && event.params.decidedBy === 'client:silent')).toBe(true);
  });

  it('a connection whose initialize names no capabilities gets approval/requested but no approval/request', async () => {
    await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch plain.txt" } }]
  - text: "done"
`);
    const conversationId = await harness!.conversation();
    const socket = new WebSocket(`${harness!.server.url.replace(/^http/, 'ws')}${API_PATH}`, { headers: { authorization: `Bearer ${harness!.server.token}` } });
    const received: { id?: unknown; method?: string }[] = [];
    socket.on('message', (data) => received.push(JSON.parse(data.toString()) as { id?: unknown; method?: string }));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'plain' } } }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'conversation/subscribe', params: { conversationId } }));
    await until(() => received.some((message) => message.id === 2), 'the subscription');
    await harness!.client.request('session/input', { conversationId, input: 'go' });
    const requested = (await harness!.waitFor((event) => event.method === 'approval/requested')) as Extract<AnyNotification, { method: 'approval/requested' }>;
    await until(() => received.some((message) => message.method === 'approval/requested'), 'approval/requested at the plain client');
    await harness!.client.request('approval/respond', { conversationId, approvalId: requested.params.approval.approvalId, decision: 'deny' });
    await harness!.turnsCompleted(1);
    await until(() => received.some((message) => message.method === 'turn/completed'), 'the end of the turn at the plain client');
    expect(received.some((message) => message.method === 'approval/request')).toBe(false);
    expect(received.some((message) => message.method === 'item/delta' || message.method === 'approval/resolved')).toBe(true);
    socket.close();
  });

  it('a connection that declared deltas: false gets every item but no item/delta', async () => {
    await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo streamed" } }]
  - text: "all done here"
`);
    const conversationId = await harness!.conversation();
    const quiet = await connect('quiet', { deltas: false });
    await quiet.client.request('conversation/subscribe', { conversationId });
    await harness!.client.request('session/input', { conversationId, input: 'go' });
    await harness!.turnsCompleted(1);
    await until(() => quiet.events.some((event) => event.method === 'turn/completed'), 'turn/completed at the quiet client');
    expect(harness!.events.some((event) => event.method === 'item/delta')).toBe(true);
    expect(quiet.events.some((event) => event.method === 'item/delta')).toBe(false);
    expect(quiet.events.filter((event) => event.method === 'item/completed').length).toBe(harness!.events.filter((event) => event.method === 'item/completed').length);
  });

  it('initialize answers with the server capabilities, and refuses capabilities that are not booleans naming the field', async () => {
    allowInvalidSentMessages();
    await start('responses: []\n');
    const { client } = await connect('probe', {});
    expect(client.initializeResult?.capabilities.features).toEqual(expect.arrayContaining(['approval', 'conversation', 'initialize', 'input', 'item', 'session', 'toolDetails']));
    const refused = await RuntimeClient.connect({ url: harness!.server.url, token: harness!.server.token, clientName: 'odd', capabilities: { approvals: 'yes' } as unknown as ClientCapabilities }).catch((error: unknown) => error);
    expect((refused as RuntimeClientError).code).toBe(-32602);
    expect((refused as RuntimeClientError).message).toMatch(/^initialize: params\.capabilities\.approvals: /);
  });

  it('forgets server-to-client requests that were answered elsewhere or whose connection closed', async () => {
    await start(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch one.txt" } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "touch two.txt" } }]
  - text: "done"
`);
    const conversationId = await harness!.conversation();
    const never = await connect('never-answers', { approvals: true });
    const leaving = await connect('leaves', { approvals: true });
    let requests = 0;
    for (const { client } of [never, leaving]) {
      client.handleServerRequest('approval/request', async () => {
        requests++;
        return new Promise(() => undefined);
      });
      await client.request('conversation/subscribe', { conversationId });
    }
    await harness!.client.request('session/input', { conversationId, input: 'go' });
    // The test's own client declared approvals too (RuntimeClient's default) but has no handler.
    await until(async () => requests === 2 && (await pendingServerRequests()) === 3, 'three unanswered approval/request');
    const first = (await harness!.waitFor((event) => event.method === 'approval/requested')) as Extract<AnyNotification, { method: 'approval/requested' }>;
    await harness!.client.request('approval/respond', { conversationId, approvalId: first.params.approval.approvalId, decision: 'allow_once' });
    await until(async () => (await pendingServerRequests()) === 3 && requests === 4, 'the second call to be asked');
    await leaving.client.close();
    await until(async () => (await pendingServerRequests()) === 2, 'the closed connection to be forgotten');
    const second = (await harness!.waitFor((event) => event.method === 'approval/requested' && event.params.approval.approvalId !== first.params.approval.approvalId)) as Extract<AnyNotification, { method: 'approval/requested' }>;
    await harness!.client.request('approval/respond', { conversationId, approvalId: second.params.approval.approvalId, decision: 'allow_once' });
    await harness!.turnsCompleted(1);
    await until(async () => (await pendingServerRequests()) === 0, 'no unanswered request left');
  });
});

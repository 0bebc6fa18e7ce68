/**
 * `kind: acp` agents as a conversation's agent, against a real server on 127.0.0.1 and a
 * small ACP agent process (test/fixtures/acp-agent.mjs, built on the SDK's agent side): its
 * updates are stored as items, its permission request reaches a RuntimeClient as
 * `approval/request` and the answer goes back to it, an interrupt is `session/cancel`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, type ServerRequestParams } from '../../../src/client/runtime-client.js';
import type { AnyNotification, Item } from '../../../src/protocol/index.js';
import type { InProcessServer } from '../../helpers/in-process-server.js';
import { startWithAcpAgent } from './acp-harness.js';

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await harness?.stop();
  harness = undefined;
});

function itemsOfTurn(items: Item[], turnId: string): Item[] {
  return items.filter((item) => item.turnId === turnId);
}

describe('kind: acp', () => {
  it('runs a turn on the agent process: a command asked about, relayed to a client, allowed, stored as items', async () => {
    harness = await startWithAcpAgent();
    const conversationId = await harness.conversation();
    const reviewer = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'reviewer', capabilities: { approvals: true } });
    clients.push(reviewer);
    const asked: ServerRequestParams<'approval/request'>[] = [];
    reviewer.handleServerRequest('approval/request', async (request) => {
      asked.push(request);
      return { decision: 'allow_once' };
    });
    await reviewer.request('conversation/subscribe', { conversationId });
    const { turnId } = await harness.client.request('session/input', { conversationId, input: 'run: echo hello-from-acp > out.txt && cat out.txt' });
    const [turn] = await harness.turnsCompleted(1);
    // The agent chose its own model: the turn is not recorded (or priced) as the server's default model.
    expect(turn).toMatchObject({ id: turnId, status: 'completed', stopReason: 'end_turn', model: 'acp/tester' });
    expect(readFileSync(path.join(harness.environment.workDir, 'out.txt'), 'utf8')).toBe('hello-from-acp\n');

    // The request the client saw: the call's item, its command details, the options the agent can carry out.
    expect(asked).toHaveLength(1);
    const request = asked[0]!;
    expect(request.details).toMatchObject({ kind: 'command', command: 'echo hello-from-acp > out.txt && cat out.txt', cwd: harness.environment.workDir });
    expect(request.options.map((option) => option.decision)).toEqual(['allow_once', 'allow_session', 'deny', 'deny_interrupt']);

    // Stored in the log in order: the user's message, reasoning, plan, the approval, the call with its result, the plan, the answer.
    const { items: stored } = await harness.client.request('items/list', { conversationId });
    const items = itemsOfTurn(stored.map((entry) => entry.item), turn!.id);
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'reasoning', 'plan', 'approval', 'tool_call', 'plan', 'assistant_message']);
    const call = items.find((item) => item.kind === 'tool_call') as Extract<Item, { kind: 'tool_call' }>;
    expect(call.id).toBe(request.itemId);
    expect(call).toMatchObject({ toolName: 'exec_command', status: 'completed', output: 'hello-from-acp\n', exitCode: 0, isError: false, details: { kind: 'command', exitCode: 0, output: 'hello-from-acp\n' } });
    expect(items.find((item) => item.kind === 'approval')).toMatchObject({ callId: call.callId, decision: 'allow_once', decidedBy: 'client:reviewer' });
    expect(items.find((item) => item.kind === 'assistant_message')).toMatchObject({ text: 'Ran the command.', model: 'acp/tester' });
    expect(items.find((item) => item.kind === 'reasoning')).toMatchObject({ summary: 'I will run the command.' });
    expect(items.filter((item) => item.kind === 'plan').at(-1)).toMatchObject({ steps: [{ step: 'Run the command', status: 'completed' }, { step: 'Report', status: 'completed' }] });

    // The answer streamed as deltas to every subscriber, and the conversation is found by search.
    const deltas = harness.events.filter((event): event is Extract<AnyNotification, { method: 'item/delta' }> => event.method === 'item/delta' && event.params.kind === 'assistant_message');
    expect(deltas.map((event) => event.params.delta.text).join('')).toBe('Ran the command.');
    const found = await harness.client.request('conversation/list', { query: 'hello' });
    expect(found.conversations.map((conversation) => conversation.id)).toContain(conversationId);
  });

  it('sends a denial back to the agent, and keeps one agent process across turns', async () => {
    harness = await startWithAcpAgent();
    const conversationId = await harness.conversation();
    const client = harness.client;
    client.onNotification((event) => {
      if (event.method === 'approval/requested') client.request('approval/respond', { conversationId, approvalId: event.params.approval.approvalId, decision: 'deny' }).catch(() => undefined);
    });
    await harness.client.request('session/input', { conversationId, input: 'pid' });
    await harness.client.request('session/input', { conversationId, input: 'run: touch never.txt' });
    await harness.client.request('session/input', { conversationId, input: 'pid' });
    const turns = await harness.turnsCompleted(3);
    expect(turns.map((turn) => turn.status)).toEqual(['completed', 'completed', 'completed']);
    const items = harness.completedItems();
    const call = items.find((item) => item.kind === 'tool_call');
    expect(call).toMatchObject({ status: 'failed', isError: true, output: 'not run (rejected)' });
    expect(items.find((item) => item.kind === 'approval')).toMatchObject({ decision: 'deny' });
    const pids = items.flatMap((item) => (item.kind === 'assistant_message' && item.text.startsWith('pid ') ? [item.text] : []));
    expect(pids).toHaveLength(2);
    expect(pids[0]).toBe(pids[1]);
  });

  it('interrupts a turn with session/cancel: the turn ends interrupted, the open message is kept', async () => {
    harness = await startWithAcpAgent();
    const conversationId = await harness.conversation();
    const { turnId } = await harness.client.request('session/input', { conversationId, input: 'wait' });
    await harness.waitFor((event) => event.method === 'item/delta' && event.params.delta.text === 'waiting');
    await harness.client.request('session/interrupt', { conversationId, turnId });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn).toMatchObject({ status: 'interrupted', stopReason: 'user_interrupt' });
    const kinds = harness.completedItems().map((item) => [item.kind, item.status]);
    expect(kinds).toEqual([
      ['user_message', 'completed'],
      ['assistant_message', 'interrupted'],
      ['interruption', 'completed'],
    ]);
  });

  it('relays a file edit with its diff, and stores the call with file-change details', async () => {
    harness = await startWithAcpAgent();
    const conversationId = await harness.conversation();
    const client = harness.client;
    const requests: Extract<AnyNotification, { method: 'approval/requested' }>['params']['approval'][] = [];
    client.onNotification((event) => {
      if (event.method !== 'approval/requested') return;
      requests.push(event.params.approval);
      client.request('approval/respond', { conversationId, approvalId: event.params.approval.approvalId, decision: 'allow_once' }).catch(() => undefined);
    });
    await client.request('session/input', { conversationId, input: 'write: notes.txt' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(readFileSync(path.join(harness.environment.workDir, 'notes.txt'), 'utf8')).toBe('written by the agent\n');
    const changes = [{ path: 'notes.txt', kind: 'add', unifiedDiff: '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,1 @@\n+written by the agent\n' }];
    // The agent offers no "always": neither does the request.
    expect(requests[0]).toMatchObject({ toolName: 'edit', details: { kind: 'fileChange', changes } });
    expect(requests[0]?.options.map((option) => option.decision)).toEqual(['allow_once', 'deny', 'deny_interrupt']);
    expect(harness.completedItems().find((item) => item.kind === 'tool_call')).toMatchObject({ status: 'completed', isError: false, details: { kind: 'fileChange', changes } });
  });
});

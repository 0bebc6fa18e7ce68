/**
 * A thread started through `openvaala app-server` is an ordinary conversation: a runtime
 * protocol client subscribed to it sees the turn live, and its steering input (`session/input`
 * while the turn runs, the mock held at a gate) reaches the Codex client as a `userMessage`
 * item of the running turn. The other way round, the Codex client's `turn/steer` reaches the
 * runtime, and `turn/interrupt` ends the turn as interrupted. An approval another client
 * decides is resolved for the Codex client; reasoning and plans stream as Codex notifications.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fromCodexId } from '../../../src/protocol/codex-ids.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { CodexTestClient } from './codex-client.js';
import { CodexSchema } from './codex-schema.js';

const schema = new CodexSchema();
let server: InProcessServer | undefined;
let client: CodexTestClient | undefined;

afterEach(async () => {
  await client?.stop();
  client = undefined;
  await server?.stop();
  server = undefined;
});

// Steering is read before the turn's next model call, so the held answer also runs a command.
const HELD_SCRIPT = `responses:
  - deltas: ["Working", " on it."]
    toolCalls: [{ name: exec_command, arguments: { command: "echo step" } }]
    holds: [{ afterDeltas: 1, gate: held }]
  - text: "Done after the steering."
  - deltas: ["Second", " turn."]
    holds: [{ afterDeltas: 1, gate: second }]
`;

type Item = { type: string; id: string; content?: { type: string; text?: string }[]; text?: string };

async function startHeldTurn(): Promise<{ codex: CodexTestClient; threadId: string; turnId: string; conversationId: string }> {
  server = await startInProcessServer(HELD_SCRIPT);
  client = await CodexTestClient.start('stdio', server.environment.env, server.environment.workDir);
  await client.initialize();
  const { thread } = await client.request<{ thread: { id: string } }>('thread/start', { cwd: server.environment.workDir, approvalPolicy: 'never' });
  const { turn } = await client.request<{ turn: { id: string } }>('turn/start', { threadId: thread.id, input: [{ type: 'text', text: 'start working', text_elements: [] }] });
  await server.environment.mock.waitForHold('held', 20_000);
  return { codex: client, threadId: thread.id, turnId: turn.id, conversationId: fromCodexId(thread.id, 'conv') };
}

function completedItems(codex: CodexTestClient): Item[] {
  return codex.log.filter((entry) => entry.dir === 's->c' && entry.msg.method === 'item/completed').map((entry) => (entry.msg.params as { item: Item }).item);
}

describe('openvaala app-server and runtime protocol clients share the conversation', () => {
  it("a runtime client sees the Codex client's turn live and its steering reaches the Codex client as a userMessage", async () => {
    const { codex, threadId, turnId, conversationId } = await startHeldTurn();
    const runtime = server!.client;
    const snapshot = await runtime.request('conversation/subscribe', { conversationId, afterSeq: 'head' });
    // Live: the turn the Codex client started is running, and its text so far streams to the runtime client.
    expect(snapshot.sessions[0]?.activeTurnId).toBe(fromCodexId(turnId, 'turn'));
    const steer = await runtime.request('session/input', { conversationId, input: 'also check the tests', mode: 'steer' });
    expect(steer.turnId).toBe(fromCodexId(turnId, 'turn'));
    server!.environment.mock.release('held');
    await server!.waitFor((event) => event.method === 'item/delta' && event.params.conversationId === conversationId && event.params.delta.text === ' on it.');
    await codex.waitFor((msg) => msg.method === 'turn/completed', 'turn/completed');

    const users = completedItems(codex).filter((item) => item.type === 'userMessage');
    expect(users.map((item) => item.content?.[0]?.text)).toEqual(['start working', 'also check the tests']);
    // The steering belongs to the running turn.
    const steerCompleted = codex.log.find((entry) => entry.msg.method === 'item/completed' && (entry.msg.params as { item: Item }).item.content?.[0]?.text === 'also check the tests')!;
    expect(steerCompleted.msg.params).toMatchObject({ threadId, turnId });
    expect(completedItems(codex).filter((item) => item.type === 'agentMessage').map((item) => item.text)).toEqual(['Working on it.', 'Done after the steering.']);
    // The runtime client saw the same turn end.
    const [ended] = await server!.turnsCompleted(1);
    expect(ended?.id).toBe(fromCodexId(turnId, 'turn'));
    expect(schema.check(codex.log)).toEqual([]);
  });

  it("the Codex client's turn/steer reaches the runtime; turn/interrupt ends the turn as interrupted", async () => {
    const { codex, threadId, turnId, conversationId } = await startHeldTurn();
    const steered = await codex.request<{ turnId: string }>('turn/steer', { threadId, expectedTurnId: turnId, input: [{ type: 'text', text: 'steer from codex', text_elements: [] }] });
    expect(steered.turnId).toBe(turnId);
    // A steer naming another turn is refused by the runtime, and says so.
    await expect(codex.request('turn/steer', { threadId, expectedTurnId: '0190f3a2-0000-7000-8000-000000000000', input: [{ type: 'text', text: 'x', text_elements: [] }] })).rejects.toThrow(/turn\/steer: /);
    server!.environment.mock.release('held');
    await codex.waitFor((msg) => msg.method === 'turn/completed', 'the first turn/completed');
    const items = await server!.client.request('items/list', { conversationId });
    expect(items.items.some(({ item }) => item.kind === 'user_message' && item.mode === 'steer' && JSON.stringify(item.content).includes('steer from codex'))).toBe(true);
    expect(completedItems(codex).filter((item) => item.type === 'userMessage').map((item) => item.content?.[0]?.text)).toEqual(['start working', 'steer from codex']);

    const second = await codex.request<{ turn: { id: string } }>('turn/start', { threadId, input: [{ type: 'text', text: 'another', text_elements: [] }] });
    await server!.environment.mock.waitForHold('second', 20_000);
    await codex.request('turn/interrupt', { threadId, turnId: second.turn.id });
    const interrupted = await codex.waitFor((msg) => msg.method === 'turn/completed' && (msg.params as { turn: { id: string } }).turn.id === second.turn.id, 'the second turn/completed');
    expect((interrupted.params as { turn: { status: string } }).turn.status).toBe('interrupted');
    expect(schema.check(codex.log)).toEqual([]);
  });

  it('an approval answered by another client is resolved for the Codex client, and the declined command says so', async () => {
    server = await startInProcessServer(`responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo never > never.txt" } }]
  - text: "Not run."
`);
    const codex = (client = await CodexTestClient.start('websocket', server.environment.env, server.environment.workDir));
    // The Codex client leaves the approval open; a runtime client decides it.
    await codex.initialize();
    const { thread } = await codex.request<{ thread: { id: string } }>('thread/start', { cwd: server.environment.workDir, approvalPolicy: 'untrusted' });
    const conversationId = fromCodexId(thread.id, 'conv');
    await server.client.request('conversation/subscribe', { conversationId, afterSeq: 'head' });
    await codex.request('turn/start', { threadId: thread.id, input: [{ type: 'text', text: 'run it', text_elements: [] }] });
    const asked = await codex.waitFor((msg) => msg.method === 'item/commandExecution/requestApproval', 'the approval request');
    const requested = await server.waitFor((event) => event.method === 'approval/requested');
    if (requested.method !== 'approval/requested') throw new Error('unreachable');
    await server.client.request('approval/respond', { conversationId, approvalId: requested.params.approval.approvalId, decision: 'deny' });
    const resolved = await codex.waitFor((msg) => msg.method === 'serverRequest/resolved', 'serverRequest/resolved');
    expect(resolved.params).toEqual({ threadId: thread.id, requestId: asked.id });
    await codex.waitFor((msg) => msg.method === 'turn/completed', 'turn/completed');
    const command = completedItems(codex).find((item) => item.type === 'commandExecution') as unknown as { status: string; command: string };
    expect(command).toMatchObject({ status: 'declined', command: "bash -c 'echo never > never.txt'" });
    // The thread waited on the approval, then no longer.
    const statuses = codex.log.filter((entry) => entry.msg.method === 'thread/status/changed').map((entry) => JSON.stringify((entry.msg.params as { status: unknown }).status));
    expect(statuses).toEqual(['{"type":"active","activeFlags":[]}', '{"type":"active","activeFlags":["waitingOnApproval"]}', '{"type":"active","activeFlags":[]}', '{"type":"idle"}']);
    expect(schema.check(codex.log)).toEqual([]);
  });

  it('a Codex client answering an approval with an error denies the call, and the model is told no person decided', async () => {
    server = await startInProcessServer(`responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo never > never.txt" } }]
  - text: "Not run."
`);
    const codex = (client = await CodexTestClient.start('stdio', server.environment.env, server.environment.workDir));
    await codex.initialize();
    const { thread } = await codex.request<{ thread: { id: string } }>('thread/start', { cwd: server.environment.workDir, approvalPolicy: 'untrusted' });
    await codex.request('turn/start', { threadId: thread.id, input: [{ type: 'text', text: 'run it', text_elements: [] }] });
    const asked = await codex.waitFor((msg) => msg.method === 'item/commandExecution/requestApproval', 'the approval request');
    codex.sendRaw({ id: asked.id, error: { code: -32603, message: 'no approval UI in this client' } });
    await codex.waitFor((msg) => msg.method === 'turn/completed', 'turn/completed');
    expect(existsSync(path.join(server.environment.workDir, 'never.txt'))).toBe(false);
    const toModel = JSON.stringify(server.environment.mock.requests[1]?.body);
    expect(toModel).toMatch(/denied this call without asking the user: the Codex client answered with an error: no approval UI in this client/);
    expect(toModel).not.toContain('the user denied');
  });

  it('tells the Codex client, with its own warning notification, that an MCP server could not be started', async () => {
    server = await startInProcessServer(`responses:
  - text: "Answered without it."
`, { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), 'servers:\n  broken: { transport: stdio, command: no-such-mcp-server-for-codex, startupTimeoutMs: 5000 }\n') });
    const codex = (client = await CodexTestClient.start('stdio', server.environment.env, server.environment.workDir));
    await codex.initialize();
    const { thread } = await codex.request<{ thread: { id: string } }>('thread/start', { cwd: server.environment.workDir, approvalPolicy: 'never' });
    await codex.request('turn/start', { threadId: thread.id, input: [{ type: 'text', text: 'hello', text_elements: [] }] });
    const warning = await codex.waitFor((msg) => msg.method === 'warning', 'the warning');
    expect(warning.params).toEqual({ threadId: thread.id, message: expect.stringContaining('MCP server "broken" could not be started: command "no-such-mcp-server-for-codex" was not found') });
    await codex.waitFor((msg) => msg.method === 'turn/completed', 'turn/completed');
    expect(schema.check(codex.log)).toEqual([]);
  });

  it('streams reasoning summaries and the plan as Codex notifications, all valid', async () => {
    server = await startInProcessServer(`responses:
  - reasoningParts: ["Reading the task", "Choosing a plan"]
    toolCalls: [{ name: update_plan, arguments: { explanation: "two steps", plan: [{ step: "read", status: completed }, { step: "write", status: in_progress }] } }]
  - text: "Planned."
`);
    const codex = (client = await CodexTestClient.start('stdio', server.environment.env, server.environment.workDir));
    await codex.initialize();
    const { thread } = await codex.request<{ thread: { id: string } }>('thread/start', { cwd: server.environment.workDir, approvalPolicy: 'never' });
    await codex.request('turn/start', { threadId: thread.id, input: [{ type: 'text', text: 'plan it', text_elements: [] }] });
    await codex.waitFor((msg) => msg.method === 'turn/completed', 'turn/completed');
    const deltas = codex.log.filter((entry) => entry.msg.method === 'item/reasoning/summaryTextDelta').map((entry) => entry.msg.params as { delta: string; summaryIndex: number });
    expect([0, 1].map((index) => deltas.filter((delta) => delta.summaryIndex === index).map((delta) => delta.delta).join(''))).toEqual(['Reading the task', 'Choosing a plan']);
    const reasoning = completedItems(codex).find((item) => item.type === 'reasoning') as unknown as { summary: string[] };
    expect(reasoning.summary).toEqual(['Reading the task', 'Choosing a plan']);
    const plan = codex.log.find((entry) => entry.msg.method === 'turn/plan/updated')!.msg.params;
    expect(plan).toMatchObject({ threadId: thread.id, explanation: 'two steps', plan: [{ step: 'read', status: 'completed' }, { step: 'write', status: 'inProgress' }] });
    expect(schema.check(codex.log)).toEqual([]);
  });
});

/**
 * Two clients subscribed to one conversation (and to the conversation list feed) receive the
 * same notifications: same methods, same order, same payloads — for every notification kind the
 * protocol sends to more than one client. `COVERED` says how the scenario triggers each kind;
 * a kind that by design goes to one connection only is listed in `SINGLE_CONNECTION` instead,
 * and checked to reach that connection and not the other. A kind added to the protocol must be
 * added to one of these tables (or listed as not covered yet, with the reason), otherwise this
 * test fails.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { notifications, type AnyNotification } from '../../src/protocol/index.js';
import { writeApprovalPolicy } from '../helpers/approval-policy.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

type NotificationName = keyof typeof notifications;

/**
 * Each notification kind the scenario below produces and compares between the two clients, with
 * how it is triggered. Both clients must receive at least one of each.
 */
const COVERED: Partial<Record<NotificationName, string>> = {
  'conversation/created': 'conversation/create after both clients subscribed to the list feed (conversations/subscribe)',
  'conversation/updated': 'conversation/update renames the conversation before the turn (to subscribers and on the list feed)',
  'conversation/synced': 'each client subscribes to the conversation; its replay is over',
  'conversation/deleted': 'conversation/delete at the end (to subscribers and on the list feed)',
  'session/updated': 'the session goes running and back to idle; the waiting approval and question are listed',
  'session/usage': 'after every model call of the turn',
  'session/rewound': 'conversation/rewind after the turn, to just after the user message',
  'turn/started': 'session/input starts a turn',
  'turn/completed': 'the turn ends after its last answer',
  'turn/retrying': 'the first model request is answered 429 and retried',
  'turn/warning': 'mcp.yaml names a server whose command does not exist; it fails to start at the turn',
  'item/started': 'reasoning, assistant text, the tool calls and the final answer begin',
  'item/delta': 'reasoning and text stream word by word; the command streams its output',
  'item/completed': 'user message, reasoning, text, plan, approval, tool calls and final answer are stored',
  'plan/updated': 'the model calls update_plan',
  'input/requested': 'the model calls request_user_input',
  'input/resolved': 'one client answers with input/respond',
  'approval/requested': 'the policy asks before running `echo …`',
  'approval/resolved': 'one client allows it with approval/respond',
  'config/updated': 'config/reload while the turn runs (sent to every client)',
  'costs/thresholdReached': "the turn's cost reaches the tiny warning threshold of the conversation's project",
};

/**
 * Kinds that by design go to one connection only, so they cannot be the same at both clients;
 * each with the reason. The scenario checks instead that they reach that connection and not the
 * other one.
 */
const SINGLE_CONNECTION: Partial<Record<NotificationName, string>> = {
  'terminal/output': 'a terminal belongs to the connection that opened it; only that connection gets its output',
};

/** Kinds not produced yet, each with the reason; a name here must not also be in COVERED. */
const NOT_YET_COVERED: Partial<Record<NotificationName, string>> = {};

const ASK_BEFORE_ECHO = writeApprovalPolicy(['{ tool: exec_command, match: { command: "echo *" }, decision: ask }']);

const PLAN = [
  { step: 'Ask which lines to print', status: 'completed' },
  { step: 'Print them', status: 'in_progress' },
];

const SCRIPT = `
responses:
  - error: { status: 429, message: "slow down" }
  - reasoning: "The user wants the output of a command."
    text: "I will plan first."
    toolCalls: [{ name: update_plan, arguments: { explanation: "Print two lines", plan: ${JSON.stringify(PLAN)} } }]
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which lines?", choices: ["first and second", "none"], allow_free_text: false } }]
  - text: "I will run it now."
    toolCalls: [{ name: exec_command, arguments: { command: "echo first-line; echo second-line" } }]
  - text: "The command printed two lines."
`;

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await harness?.stop();
  harness = undefined;
});

it('every notification kind is covered by the scenario or listed as not covered yet', () => {
  const names = Object.keys(notifications) as NotificationName[];
  const tables = [COVERED, SINGLE_CONNECTION, NOT_YET_COVERED];
  const unlisted = names.filter((name) => !tables.some((table) => name in table));
  expect(unlisted, 'notifications neither triggered by the fan-out scenario nor listed in SINGLE_CONNECTION or NOT_YET_COVERED').toEqual([]);
  // Each name in one table only.
  expect(names.filter((name) => tables.filter((table) => name in table).length > 1)).toEqual([]);
  expect(Object.keys(NOT_YET_COVERED), 'every notification kind is covered').toEqual([]);
  // Stale entries: names the protocol no longer has.
  expect(tables.flatMap((table) => Object.keys(table)).filter((name) => !(name in notifications))).toEqual([]);
});

it('two subscribed clients receive the same notifications, in the same order, with the same payloads', { timeout: 60_000 }, async () => {
  harness = await startInProcessServer(SCRIPT, {
    limits: { retryPolicy: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 50, streamIdleTimeoutMs: 300_000 } },
    beforeStart: (environment) => {
      ASK_BEFORE_ECHO(environment);
      writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), 'servers:\n  broken: { transport: stdio, command: no-such-mcp-server-for-fan-out, startupTimeoutMs: 5000 }\n');
    },
    prices: () => ({ inputPerMillionUsd: 1, outputPerMillionUsd: 1 }),
  });
  const { server } = harness;
  const received: AnyNotification[][] = [];
  for (const name of ['first', 'second']) {
    const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: name });
    clients.push(client);
    const events: AnyNotification[] = [];
    client.onNotification((event) => events.push(event));
    await client.request('conversations/subscribe', {});
    received.push(events);
  }
  const [first, second] = received as [AnyNotification[], AnyNotification[]];
  const [answering] = clients as [RuntimeClient];
  const count = (events: AnyNotification[], method: string) => events.filter((event) => event.method === method).length;
  const seen = (method: string) => count(first, method) > 0;
  const waitFor = async (condition: () => boolean, what: string) => {
    const deadline = Date.now() + 30_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; first client saw ${first.map((event) => event.method).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const find = <M extends AnyNotification['method']>(method: M) => first.find((event) => event.method === method) as Extract<AnyNotification, { method: M }>;

  // In a project whose warning threshold the first turn's cost reaches.
  const { project } = await harness.client.request('projects/create', { name: 'fan-out', workspace: { executor: 'local', directory: harness.environment.workDir } });
  await harness.client.request('costs/setThresholds', { projectId: project.id, warnUsd: 0.000001 });
  const { conversation } = await harness.client.request('conversation/create', { projectId: project.id });
  await waitFor(() => seen('conversation/created') && count(second, 'conversation/created') > 0, 'conversation/created on both list feeds');
  for (const client of clients) await client.request('conversation/subscribe', { conversationId: conversation.id });
  await waitFor(() => seen('conversation/synced') && count(second, 'conversation/synced') > 0, 'conversation/synced at both clients');

  await harness.client.request('conversation/update', { conversationId: conversation.id, title: 'fan-out order' });
  await harness.client.request('session/input', { conversationId: conversation.id, input: 'print two lines' });
  await waitFor(() => seen('input/requested'), 'the question');
  const question = find('input/requested').params.request;
  expect((await answering.request('input/respond', { conversationId: conversation.id, requestId: question.requestId, answer: 'first and second' })).accepted).toBe(true);
  await waitFor(() => seen('approval/requested'), 'the approval request');
  const requested = find('approval/requested');
  await harness.client.request('config/reload', {});
  await waitFor(() => seen('config/updated'), 'config/updated');
  await answering.request('approval/respond', { conversationId: conversation.id, approvalId: requested.params.approval.approvalId, decision: 'allow_once' });
  await waitFor(() => seen('turn/completed'), 'the turn to complete');
  await waitFor(() => seen('costs/thresholdReached'), 'the cost threshold to be reached');

  const userMessage = first.flatMap((event) => (event.method === 'item/completed' && event.params.item.kind === 'user_message' ? [event.params.item] : []))[0];
  expect(userMessage).toBeDefined();
  await harness.client.request('conversation/rewind', { conversationId: conversation.id, afterItemId: userMessage!.id });
  await waitFor(() => seen('session/rewound'), 'session/rewound');

  // A terminal's output goes to the connection that opened it, and to no other.
  const { terminalId } = await answering.request('terminal/create', { conversationId: conversation.id, cols: 80, rows: 24, command: 'echo fan-out-terminal' });
  const terminalOutput = (events: AnyNotification[]) => events.flatMap((event) => (event.method === 'terminal/output' && event.params.terminalId === terminalId ? [event.params] : []));
  await waitFor(() => terminalOutput(first).some((output) => output.exited === true), 'the terminal to exit');
  expect(terminalOutput(first).map((output) => output.data ?? '').join('')).toContain('fan-out-terminal');

  await harness.client.request('conversation/delete', { conversationId: conversation.id });
  await waitFor(() => seen('conversation/deleted'), 'conversation/deleted');
  // Each client has every notification sent before a request it sends afterwards is answered.
  await Promise.all(clients.map((client) => client.request('models/list', {})));
  await waitFor(() => count(second, 'conversation/deleted') >= count(first, 'conversation/deleted'), 'the second client to catch up');

  for (const [name, reason] of Object.entries(SINGLE_CONNECTION)) {
    expect(seen(name), `the owner got no ${name} (${reason})`).toBe(true);
    expect(count(second, name), `${name} reached a connection other than its owner (${reason})`).toBe(0);
  }
  const shared = first.filter((event) => !(event.method in SINGLE_CONNECTION));
  for (const name of Object.keys(COVERED)) expect(shared.some((event) => event.method === name), `no ${name} in ${shared.map((event) => event.method).join(', ')}`).toBe(true);
  const output = first.flatMap((event) => (event.method === 'item/delta' && event.params.delta.output ? [event.params.delta.output] : [])).join('');
  expect(output).toContain('first-line');
  expect(output).toContain('second-line');
  const startedKinds = first.flatMap((event) => (event.method === 'item/started' ? [event.params.kind] : []));
  expect(new Set(startedKinds)).toEqual(new Set(['reasoning', 'assistant_message', 'tool_call']));
  const completedKinds = first.flatMap((event) => (event.method === 'item/completed' ? [event.params.item.kind] : []));
  expect(completedKinds).toEqual(expect.arrayContaining(['user_message', 'reasoning', 'assistant_message', 'plan', 'approval', 'tool_call']));
  expect(first.some((event) => event.method === 'item/delta' && event.params.delta.reasoning)).toBe(true);
  expect(first.some((event) => event.method === 'item/delta' && event.params.delta.text)).toBe(true);
  expect(find('plan/updated').params).toMatchObject({ explanation: 'Print two lines', steps: PLAN });
  expect(find('input/resolved').params).toMatchObject({ requestId: question.requestId, outcome: 'answered', answer: 'first and second', decidedBy: 'client:first' });
  expect(count(first, 'session/usage')).toBeGreaterThanOrEqual(4);

  expect(second.map((event) => event.method)).toEqual(shared.map((event) => event.method));
  expect(second).toEqual(shared);
});

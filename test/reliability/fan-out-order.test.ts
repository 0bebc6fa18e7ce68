/**
 * Two clients subscribed to one conversation receive the same notifications: same methods, same
 * order, same payloads — for every notification kind the protocol has. The table below says
 * how the scenario triggers each kind; a kind added to the protocol must be added to it (or
 * listed as not covered yet, with the reason), otherwise this test fails.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { notifications, type AnyNotification } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

type NotificationName = keyof typeof notifications;

/**
 * Each notification kind the scenario below produces, with how it is triggered. Both clients
 * must receive at least one of each.
 */
const COVERED: Partial<Record<NotificationName, string>> = {
  'conversation/updated': 'conversation/update renames the conversation before the turn',
  'session/updated': 'the session goes running and back to idle; the waiting approval is listed',
  'turn/started': 'session/input starts a turn',
  'turn/completed': 'the turn ends after its last answer',
  'turn/retrying': 'the first model request is answered 429 and retried',
  'item/started': 'reasoning, assistant text, the tool call and the final answer begin',
  'item/delta': 'reasoning and text stream word by word; the command streams its output',
  'item/completed': 'user message, reasoning, text, approval, tool call and final answer are stored',
  'approval/requested': 'the policy asks before running `echo …`',
  'approval/resolved': 'one client allows it with approval/respond',
  'config/updated': 'config/reload while the turn runs (sent to every client)',
};

/** Kinds not produced yet, each with the reason; a name here must not also be in COVERED. */
const NOT_YET_COVERED: Partial<Record<NotificationName, string>> = {};

const AGENTS = `
agents:
  default:
    default: true
    approvals:
      default: allow
      rules:
        - { tool: exec_command, match: { command: "echo *" }, decision: ask }
`;

const SCRIPT = `
responses:
  - error: { status: 429, message: "slow down" }
  - reasoning: "The user wants the output of a command."
    text: "I will run it now."
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
  const unlisted = names.filter((name) => !(name in COVERED) && !(name in NOT_YET_COVERED));
  expect(unlisted, 'notifications neither triggered by the fan-out scenario nor listed in NOT_YET_COVERED').toEqual([]);
  expect(Object.keys(COVERED).filter((name) => name in NOT_YET_COVERED)).toEqual([]);
  // Stale entries: names the protocol no longer has.
  expect([...Object.keys(COVERED), ...Object.keys(NOT_YET_COVERED)].filter((name) => !(name in notifications))).toEqual([]);
});

it('two subscribed clients receive the same notifications, in the same order, with the same payloads', { timeout: 60_000 }, async () => {
  harness = await startInProcessServer(SCRIPT, {
    limits: { retryPolicy: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 50 } },
    beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), AGENTS),
  });
  const { server } = harness;
  const { conversation } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir });
  const received: AnyNotification[][] = [];
  for (const name of ['first', 'second']) {
    const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: name });
    clients.push(client);
    const events: AnyNotification[] = [];
    client.onNotification((event) => events.push(event));
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    received.push(events);
  }
  const [first, second] = received as [AnyNotification[], AnyNotification[]];
  const [answering] = clients as [RuntimeClient];
  const seen = (method: string) => first.some((event) => event.method === method);
  const waitFor = async (condition: () => boolean, what: string) => {
    const deadline = Date.now() + 30_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; first client saw ${first.map((event) => event.method).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  await harness.client.request('conversation/update', { conversationId: conversation.id, title: 'fan-out order' });
  await harness.client.request('session/input', { conversationId: conversation.id, input: 'print two lines' });
  const requested = await (async () => {
    await waitFor(() => seen('approval/requested'), 'the approval request');
    return first.find((event) => event.method === 'approval/requested') as Extract<AnyNotification, { method: 'approval/requested' }>;
  })();
  await harness.client.request('config/reload', {});
  await waitFor(() => seen('config/updated'), 'config/updated');
  await answering.request('approval/respond', { conversationId: conversation.id, approvalId: requested.params.approval.approvalId, decision: 'allow_once' });
  await waitFor(() => seen('turn/completed'), 'the turn to complete');
  // The second client has everything the first one has once a request it sends after them is answered.
  await clients[1]!.request('models/list', {});
  await waitFor(() => second.length >= first.length, 'the second client to catch up');

  for (const name of Object.keys(COVERED)) expect(first.some((event) => event.method === name), `no ${name} in ${first.map((event) => event.method).join(', ')}`).toBe(true);
  const output = first.flatMap((event) => (event.method === 'item/delta' && event.params.delta.output ? [event.params.delta.output] : [])).join('');
  expect(output).toContain('first-line');
  expect(output).toContain('second-line');
  const startedKinds = first.flatMap((event) => (event.method === 'item/started' ? [event.params.kind] : []));
  expect(new Set(startedKinds)).toEqual(new Set(['reasoning', 'assistant_message', 'tool_call']));
  const completedKinds = first.flatMap((event) => (event.method === 'item/completed' ? [event.params.item.kind] : []));
  expect(completedKinds).toEqual(expect.arrayContaining(['user_message', 'reasoning', 'assistant_message', 'approval', 'tool_call']));
  expect(first.some((event) => event.method === 'item/delta' && event.params.delta.reasoning)).toBe(true);
  expect(first.some((event) => event.method === 'item/delta' && event.params.delta.text)).toBe(true);

  expect(second.map((event) => event.method)).toEqual(first.map((event) => event.method));
  expect(second).toEqual(first);
});

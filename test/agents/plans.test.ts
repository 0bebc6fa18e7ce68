/**
 * The `update_plan` tool over a real WebSocket against a real server and the mock provider:
 * the `plan` item, `plan/updated`, the plan in the session state (late subscribers, restart),
 * and invalid plans refused to the model.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
const extraClients: RuntimeClient[] = [];
afterEach(async () => {
  for (const client of extraClients.splice(0)) await client.close();
  await harness?.stop();
  harness = undefined;
});

/** The text of the tool results the n-th request sent back to the model (Responses `function_call_output`). */
function toolOutputs(index: number): string[] {
  const body = harness?.environment.mock.requests[index]?.body as { input?: { type?: string; output?: unknown }[] } | undefined;
  if (!body) throw new Error(`the mock received no request #${index + 1}`);
  return (body.input ?? []).filter((entry) => entry.type === 'function_call_output').map((entry) => (typeof entry.output === 'string' ? entry.output : JSON.stringify(entry.output)));
}

const steps = [
  { step: 'Read the code', status: 'completed' },
  { step: 'Write the fix', status: 'in_progress' },
  { step: 'Run the tests', status: 'pending' },
];

describe('update_plan', () => {
  it('records a plan item, announces plan/updated and keeps the plan in the session state', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: update_plan, arguments: { explanation: "Small fix", plan: ${JSON.stringify(steps)} } }]
  - text: "planned"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'fix it' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status, turn?.error).toBe('completed');

    const updated = await harness.waitFor((event) => event.method === 'plan/updated');
    const plan = harness.completedItems().find((item): item is Extract<Item, { kind: 'plan' }> => item.kind === 'plan');
    expect(plan).toMatchObject({ kind: 'plan', explanation: 'Small fix', steps, turnId: turn?.id, status: 'completed' });
    expect(updated.params).toEqual({ conversationId, sessionId: plan?.sessionId, turnId: turn?.id, itemId: plan?.id, explanation: 'Small fix', steps });
    const call = harness.completedItems().find((item) => item.kind === 'tool_call');
    expect(call).toMatchObject({ toolName: 'update_plan', isError: false });
    expect(toolOutputs(1)).toEqual(['Plan updated: 3 steps, 1 completed.']);
    // The tool description reaches the model.
    const tools = (harness.environment.mock.requests[0]?.body as { tools: { name: string; description: string }[] }).tools;
    expect(tools.find((tool) => tool.name === 'update_plan')?.description).toMatch(/^Records your plan/);

    // A client that arrives later reads the current plan from the session state.
    const late = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'late' });
    extraClients.push(late);
    const snapshot = await late.request('conversation/subscribe', { conversationId });
    expect(snapshot.sessions[0]?.plan).toMatchObject({ itemId: plan?.id, turnId: turn?.id, explanation: 'Small fix', steps });
  });

  it.each([
    ['two steps in progress', { plan: [{ step: 'a', status: 'in_progress' }, { step: 'b', status: 'in_progress' }] }, /update_plan: argument "plan": at most one step may be in_progress; steps 0, 1/],
    ['an unknown status', { plan: [{ step: 'a', status: 'done' }] }, /update_plan: argument "plan\[0\]\.status": "done" is not one of "pending", "in_progress", "completed"/],
    ['no steps', { plan: [] }, /update_plan: argument "plan": give at least one step/],
  ])('refuses %s to the model and records no plan', async (_name, args, message) => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: update_plan, arguments: ${JSON.stringify(args)} }]
  - text: "sorry"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'plan it' });
    await harness.turnsCompleted(1);
    const call = harness.completedItems().find((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
    expect(call?.isError).toBe(true);
    expect(call?.output).toMatch(message);
    expect(toolOutputs(1).join('\n')).toMatch(message);
    expect(harness.completedItems().some((item) => item.kind === 'plan')).toBe(false);
    expect(harness.events.some((event) => event.method === 'plan/updated')).toBe(false);
    const { sessions } = await harness.client.request('conversation/get', { conversationId });
    expect(sessions[0]?.plan).toBeUndefined();
  });
});

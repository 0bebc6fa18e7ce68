/**
 * Costs over a real server and the mock provider with scripted usage: the exact cost of each
 * turn from the configured, built-in and overriding prices; totals per conversation, project,
 * user and month; thresholds that warn, and one that pauses new turns with a named error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClientError } from '../../src/client/runtime-client.js';
import { ErrorCodes, type AnyNotification, type Turn } from '../../src/protocol/index.js';
import { createTestEnvironment } from '../helpers/environment.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';
import { startPlatformServer, type PlatformHarness, type RecordingClient } from './two-users.js';

// Every answer reports 1000 input tokens (200 of them cached) and 500 output tokens.
const USAGE = 'usage: { inputTokens: 1000, cachedInputTokens: 200, outputTokens: 500 }';
const SCRIPT = `
responses:
  - { text: "first answer", ${USAGE} }
  - { text: "second answer", ${USAGE} }
  - { text: "third answer", ${USAGE} }
  - { text: "fourth answer", ${USAGE} }
`;

// mock-model: configured prices; gpt-4o: built-in list prices; gpt-4.1: configured prices overriding the built-in ones.
const providers = (baseURL: string) => `providers:
  mock:
    kind: openai
    baseURL: ${baseURL}
    apiKey: none
    models:
      mock-model: { prices: { inputPerMillionUsd: 2, cachedInputPerMillionUsd: 0.5, outputPerMillionUsd: 8 } }
      gpt-4o: {}
      gpt-4.1: { prices: { inputPerMillionUsd: 1, outputPerMillionUsd: 1 } }
defaultModel: mock/mock-model
`;

// (800 × 2 + 200 × 0.5 + 500 × 8) / 1e6
const MOCK_MODEL_COST = 0.0057;
// Built in for gpt-4o: (800 × 2.5 + 200 × 1.25 + 500 × 10) / 1e6
const GPT_4O_COST = 0.00725;
// Configured for gpt-4.1, cached input at the input price: (1000 × 1 + 500 × 1) / 1e6
const GPT_41_COST = 0.0015;

let harness: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(): Promise<PlatformHarness> {
  harness = await startPlatformServer(SCRIPT, { environment: await createTestEnvironment(SCRIPT, providers) });
  const stop = harness.stop.bind(harness);
  const environment = harness.environment;
  harness.stop = async () => {
    await stop();
    await environment.dispose();
  };
  return harness;
}

function completedTurns(client: RecordingClient, conversationId: string): Turn[] {
  return client.events.flatMap((event) => (event.method === 'turn/completed' && event.params.conversationId === conversationId ? [event.params.turn] : []));
}

/** Sends an input and waits for the turn it started to complete; returns that turn. */
async function turn(client: RecordingClient, conversationId: string, input: string, model?: string): Promise<Turn> {
  const { turnId } = await client.client.request('session/input', { conversationId, input, ...(model ? { model } : {}) });
  await expect.poll(() => completedTurns(client, conversationId).some((each) => each.id === turnId)).toBe(true);
  return completedTurns(client, conversationId).find((each) => each.id === turnId)!;
}

async function failure(promise: Promise<unknown>): Promise<RuntimeClientError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RuntimeClientError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

function thresholdEvents(client: RecordingClient): Extract<AnyNotification, { method: 'costs/thresholdReached' }>['params'][] {
  return client.events.flatMap((event) => (event.method === 'costs/thresholdReached' ? [event.params] : []));
}

/** A project with Alice (manager) and Bob (member), each with a subscribed conversation in it. */
async function projectWithTwoUsers(server: PlatformHarness) {
  const owner = await server.connect();
  const alice = await server.connect('alice');
  const bob = await server.connect('bob');
  const { project } = await owner.client.request('projects/create', { name: 'Billing', workspace: { executor: 'local', directory: server.directory('billing') } });
  await owner.client.request('projects/members/add', { projectId: project.id, userId: 'alice', role: 'manager' });
  await owner.client.request('projects/members/add', { projectId: project.id, userId: 'bob' });
  const { conversation: ofAlice } = await alice.client.request('conversation/create', { projectId: project.id });
  await alice.client.request('conversation/subscribe', { conversationId: ofAlice.id });
  const { conversation: ofBob } = await bob.client.request('conversation/create', { projectId: project.id });
  await bob.client.request('conversation/subscribe', { conversationId: ofBob.id });
  return { owner, alice, bob, project, ofAlice, ofBob };
}

describe('costs', () => {
  it('gives the exact cost of each turn from configured, built-in and overriding prices, and adds it up per conversation, project and user', async () => {
    const server = await start();
    const { owner, alice, bob, project, ofAlice, ofBob } = await projectWithTwoUsers(server);

    // The catalog carries the built-in prices of gpt-4o and the configured ones of gpt-4.1.
    const catalog = (await owner.client.request('models/list', {})).models;
    expect(catalog.find((model) => model.id === 'mock/gpt-4o')?.prices).toEqual({ inputPerMillionUsd: 2.5, cachedInputPerMillionUsd: 1.25, outputPerMillionUsd: 10 });
    expect(catalog.find((model) => model.id === 'mock/gpt-4.1')?.prices).toEqual({ inputPerMillionUsd: 1, outputPerMillionUsd: 1 });

    expect((await turn(alice, ofAlice.id, 'one')).costUsd).toBeCloseTo(MOCK_MODEL_COST, 12);
    expect((await turn(bob, ofBob.id, 'two', 'mock/gpt-4o')).costUsd).toBeCloseTo(GPT_4O_COST, 12);
    expect((await turn(bob, ofBob.id, 'three', 'mock/gpt-4.1')).costUsd).toBeCloseTo(GPT_41_COST, 12);

    // The ledger hears of a turn after clients do: poll until it has all three.
    await expect.poll(async () => (await alice.client.request('costs/project', { projectId: project.id })).totals.turns).toBe(3);
    const ofProject = await alice.client.request('costs/project', { projectId: project.id });
    expect(ofProject.month).toBe(new Date().toISOString().slice(0, 7));
    expect(ofProject.totals.costUsd).toBeCloseTo(MOCK_MODEL_COST + GPT_4O_COST + GPT_41_COST, 12);
    expect(ofProject.totals.usage).toEqual({ inputTokens: 3000, outputTokens: 1500, totalTokens: 4500, cachedInputTokens: 600, reasoningTokens: 0 });
    expect(ofProject.totals.unpricedTurns).toBe(0);
    expect(ofProject.byUser.map((each) => each.userId)).toEqual(['alice', 'bob']);
    expect(ofProject.byUser[0]?.totals.costUsd).toBeCloseTo(MOCK_MODEL_COST, 12);
    expect(ofProject.byUser[1]?.totals.costUsd).toBeCloseTo(GPT_4O_COST + GPT_41_COST, 12);
    expect(ofProject).toMatchObject({ thresholds: {}, warning: false, paused: false });

    const aliceConversation = await bob.client.request('costs/conversation', { conversationId: ofAlice.id });
    expect(aliceConversation.totals.turns).toBe(1);
    expect(aliceConversation.totals.costUsd).toBeCloseTo(MOCK_MODEL_COST, 12);
    const bobConversation = await alice.client.request('costs/conversation', { conversationId: ofBob.id });
    expect(bobConversation.totals.turns).toBe(2);
    expect(bobConversation.totals.costUsd).toBeCloseTo(GPT_4O_COST + GPT_41_COST, 12);

    // A user reads their own month; only an administrator reads another user's.
    const aliceMonth = await alice.client.request('costs/user', {});
    expect(aliceMonth.userId).toBe('alice');
    expect(aliceMonth.totals.costUsd).toBeCloseTo(MOCK_MODEL_COST, 12);
    expect((await owner.client.request('costs/user', { userId: 'bob' })).totals.costUsd).toBeCloseTo(GPT_4O_COST + GPT_41_COST, 12);
    const notOwn = await failure(bob.client.request('costs/user', { userId: 'alice' }));
    expect(notOwn.code).toBe(ErrorCodes.forbidden);
    expect(notOwn.message).toContain('costs/user: forbidden: params.userId');

    // Another month holds nothing; a month that is not one is refused, naming the parameter.
    allowInvalidSentMessages();
    expect((await alice.client.request('costs/project', { projectId: project.id, month: '2001-01' })).totals).toMatchObject({ turns: 0, costUsd: 0 });
    const badMonth = await failure(alice.client.request('costs/project', { projectId: project.id, month: '2026-13' }));
    expect(badMonth.code).toBe(ErrorCodes.invalidParams);
    expect(badMonth.message).toContain('params.month');
    expect(badMonth.message).toContain('YYYY-MM');
  });

  it('warns at the warning threshold and, at the pausing one, refuses the next input with an error naming the threshold and the total', async () => {
    const server = await start();
    const { alice, bob, project, ofAlice, ofBob } = await projectWithTwoUsers(server);

    // Only a manager sets thresholds, and a warning above the pause or a negative amount is refused.
    allowInvalidSentMessages();
    expect((await failure(bob.client.request('costs/setThresholds', { projectId: project.id, warnUsd: 1 }))).code).toBe(ErrorCodes.forbidden);
    const inverted = await failure(alice.client.request('costs/setThresholds', { projectId: project.id, warnUsd: 2, pauseUsd: 1 }));
    expect(inverted.code).toBe(ErrorCodes.invalidParams);
    expect(inverted.message).toContain('costs/setThresholds: params.warnUsd');
    const negative = await failure(alice.client.request('costs/setThresholds', { projectId: project.id, pauseUsd: -1 }));
    expect(negative.code).toBe(ErrorCodes.invalidParams);
    expect(negative.message).toContain('params.pauseUsd');
    expect((await alice.client.request('costs/setThresholds', { projectId: project.id, warnUsd: 0.005, pauseUsd: 0.01 })).thresholds).toEqual({ warnUsd: 0.005, pauseUsd: 0.01 });

    // Alice's turn brings the month to $0.0057: a warning, heard by the conversation's subscribers.
    await turn(alice, ofAlice.id, 'one');
    await expect.poll(() => thresholdEvents(alice).length).toBe(1);
    expect(thresholdEvents(alice)[0]).toMatchObject({ conversationId: ofAlice.id, projectId: project.id, action: 'warn', thresholdUsd: 0.005 });
    expect(thresholdEvents(alice)[0]?.totalUsd).toBeCloseTo(MOCK_MODEL_COST, 12);
    expect(thresholdEvents(bob)).toEqual([]);
    expect(await alice.client.request('costs/project', { projectId: project.id })).toMatchObject({ warning: true, paused: false });

    // Bob's turn brings it to $0.0114: the pause.
    await turn(bob, ofBob.id, 'two');
    await expect.poll(() => thresholdEvents(bob).map((event) => event.action)).toEqual(['pause']);
    expect(await bob.client.request('costs/project', { projectId: project.id })).toMatchObject({ warning: true, paused: true });

    // The next input of either conversation is refused and names the threshold, the month and the total.
    const refused = await failure(alice.client.request('session/input', { conversationId: ofAlice.id, input: 'three' }));
    expect(refused.code).toBe(ErrorCodes.conflict);
    expect(refused.data).toEqual({ reason: 'cost_limit_reached' });
    const month = new Date().toISOString().slice(0, 7);
    expect(refused.message).toBe(`session/input: project "Billing" (${project.id}) has spent $0.01 in ${month} (UTC), reaching its pausing threshold costs.pauseUsd of $0.01; new turns are refused until the month ends or a project manager raises the threshold (costs/setThresholds)`);
    expect((await failure(bob.client.request('session/input', { conversationId: ofBob.id, input: 'three' }))).data).toEqual({ reason: 'cost_limit_reached' });
    // A manual compaction is a turn with a model call too.
    expect((await failure(bob.client.request('session/compact', { conversationId: ofBob.id }))).data).toEqual({ reason: 'cost_limit_reached' });
    // Nothing of the refused input was stored.
    const items = (await alice.client.request('items/list', { conversationId: ofAlice.id })).items;
    expect(items.filter((stored) => stored.item.kind === 'user_message')).toHaveLength(1);

    // A scheduled run is refused the same way: its run fails with the refusal as its error.
    const { task } = await alice.client.request('schedules/create', { conversationId: ofAlice.id, name: 'nightly', prompt: 'scheduled', schedule: { kind: 'once', at: Date.now() + 86_400_000 }, retry: { initialDelayMs: 1, maxDelayMs: 1, deadlineMs: 0 } });
    await alice.client.request('schedules/runNow', { taskId: task.id });
    await expect.poll(async () => (await alice.client.request('schedules/history', { taskId: task.id })).runs.map((run) => run.status)).toEqual(['failed']);
    expect((await alice.client.request('schedules/history', { taskId: task.id })).runs[0]?.error).toContain('reaching its pausing threshold costs.pauseUsd of $0.01');

    // Raising the threshold lets turns start again.
    await alice.client.request('costs/setThresholds', { projectId: project.id, pauseUsd: null });
    expect((await alice.client.request('costs/project', { projectId: project.id })).thresholds).toEqual({ warnUsd: 0.005 });
    expect((await turn(alice, ofAlice.id, 'three')).status).toBe('completed');
  });

  it('keeps recorded costs through a price change and a restart, and counts a scheduled run for its task\'s user', async () => {
    const environment = await createTestEnvironment(SCRIPT, providers);
    let server: PlatformHarness | undefined = await startPlatformServer(SCRIPT, { environment });
    try {
      const { owner, alice, project, ofAlice } = await projectWithTwoUsers(server);
      expect((await turn(alice, ofAlice.id, 'one')).costUsd).toBeCloseTo(MOCK_MODEL_COST, 12);

      // The input price doubles: later turns cost more, the recorded one stays as it was.
      await owner.client.request('config/update', { changes: [{ file: 'providers', path: ['providers', 'mock', 'models', 'mock-model', 'prices', 'inputPerMillionUsd'], value: 4 }] });
      const newCost = (800 * 4 + 200 * 0.5 + 500 * 8) / 1e6;
      // Alice's task acts for her: its run's turn counts for her.
      const { task } = await alice.client.request('schedules/create', { conversationId: ofAlice.id, name: 'report', prompt: 'write the report', schedule: { kind: 'once', at: Date.now() + 86_400_000 } });
      expect(task.userId).toBe('alice');
      await alice.client.request('schedules/runNow', { taskId: task.id });
      await expect.poll(async () => (await alice.client.request('schedules/history', { taskId: task.id })).runs.map((run) => run.status)).toEqual(['completed']);
      expect(completedTurns(alice, ofAlice.id).map((each) => each.costUsd)).toEqual([expect.closeTo(MOCK_MODEL_COST, 12), expect.closeTo(newCost, 12)]);
      await expect.poll(async () => (await alice.client.request('costs/conversation', { conversationId: ofAlice.id })).totals.turns).toBe(2);
      const before = await alice.client.request('costs/project', { projectId: project.id });
      expect(before.totals.costUsd).toBeCloseTo(MOCK_MODEL_COST + newCost, 12);
      expect(before.byUser.map((each) => each.userId)).toEqual(['alice']);

      // After a restart the ledger still holds both turns, as recorded.
      await server.stop();
      server = await startPlatformServer(SCRIPT, { environment });
      const again = await server.connect('alice');
      expect((await again.client.request('costs/project', { projectId: project.id })).totals).toEqual(before.totals);
      expect((await again.client.request('costs/conversation', { conversationId: ofAlice.id })).totals.costUsd).toBeCloseTo(MOCK_MODEL_COST + newCost, 12);
      expect((await again.client.request('costs/user', {})).totals.turns).toBe(2);
    } finally {
      await server?.stop();
      await environment.dispose();
    }
  });
});

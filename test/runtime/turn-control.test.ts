/**
 * Turn control over a real WebSocket: interrupting and steering a named turn, input ids and
 * withdrawing queued input, a model for one input, client message ids (also across a
 * restart), stop reasons, per-call usage and cost, and the identity every event carries.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import type { AnyNotification, Item, NotificationParams, Turn } from '../../src/protocol/index.js';
import { startRuntimeServer } from '../../src/server/runtime-server.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await harness?.stop();
  harness = undefined;
});

/** The error a request fails with (the test fails when it succeeds). */
async function refusal(request: Promise<unknown>): Promise<RuntimeClientError> {
  const outcome = await request.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected the request to fail, it answered ${JSON.stringify(outcome.result)}`);
  expect(outcome.error).toBeInstanceOf(RuntimeClientError);
  return outcome.error as RuntimeClientError;
}

function conflictReason(error: RuntimeClientError): unknown {
  expect(error.code).toBe(-32009);
  return (error.data as { reason?: unknown } | undefined)?.reason;
}

/** The first answer stops after "one " until the test opens the mock's gate `counting` (or the turn ends). */
const SLOW_ANSWER = `
responses:
  - deltas: ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight ", "nine ", "ten "]
    holds: [{ afterDeltas: 1, gate: counting }]
  - text: "second answer"
  - text: "third answer"
`;

const TWO_MODELS = (baseURL: string) =>
  `providers:\n  mock:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { mock-model: { contextWindow: 32000 }, other-model: { contextWindow: 64000 } }\ndefaultModel: mock/mock-model\n`;

describe('session/interrupt with a turnId', () => {
  it('interrupts only the named running turn and refuses other turns with a reason', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer(SLOW_ANSWER);
    const conversationId = await harness.conversation();
    const idle = await refusal(harness.client.request('session/interrupt', { conversationId, turnId: 'turn_01nothingrunning' }));
    expect(conflictReason(idle)).toBe('no_running_turn');
    expect(idle.message).toContain('session/interrupt');

    const { turnId } = await harness.client.request('session/input', { conversationId, input: 'count' });
    expect(turnId).toMatch(/^turn_/);
    await harness.waitFor((event) => event.method === 'item/delta');
    const other = await refusal(harness.client.request('session/interrupt', { conversationId, turnId: 'turn_01someotherturn' }));
    expect(conflictReason(other)).toBe('turn_mismatch');
    expect(harness.events.some((event) => event.method === 'turn/completed')).toBe(false);

    const interrupted = await harness.client.request('session/interrupt', { conversationId, turnId: turnId! });
    expect(interrupted).toEqual({ interrupted: true, turnId });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn).toMatchObject({ id: turnId, status: 'interrupted', stopReason: 'user_interrupt' });
    const after = await refusal(harness.client.request('session/interrupt', { conversationId, turnId: turnId! }));
    expect(conflictReason(after)).toBe('no_running_turn');
    const malformed = await refusal(harness.client.request('session/interrupt', { conversationId, turnId: 'not-a-turn' }));
    expect(malformed.code).toBe(-32602);
    expect(malformed.message).toContain('params.turnId');
  });
});

describe('session/input steering with expectedTurnId', () => {
  it('is read by the named running turn, and refused instead of starting a turn otherwise', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "while [ ! -e go ]; do sleep 0.05; done; echo first-step" } }]
  - text: "adjusted"
`);
    const conversationId = await harness.conversation();
    const idle = await refusal(harness.client.request('session/input', { conversationId, input: 'steer nothing', mode: 'steer', expectedTurnId: 'turn_01nothingrunning' }));
    expect(conflictReason(idle)).toBe('no_running_turn');
    const { sessions } = await harness.client.request('session/list', { conversationId });
    expect(sessions[0]).toMatchObject({ status: 'idle', activeTurnId: null, queuedInputs: [] });
    expect(harness.environment.mock.requests).toHaveLength(0);

    const started = await harness.client.request('session/input', { conversationId, input: 'start the work' });
    await harness.waitFor((event) => event.method === 'item/started' && event.params.kind === 'tool_call');
    const mismatch = await refusal(harness.client.request('session/input', { conversationId, input: 'wrong turn', mode: 'steer', expectedTurnId: 'turn_01someotherturn' }));
    expect(conflictReason(mismatch)).toBe('turn_mismatch');
    const steer = await harness.client.request('session/input', { conversationId, input: 'mention blue', mode: 'steer', expectedTurnId: started.turnId!, clientMessageId: 'steer-1' });
    // A repeat is the same steering, read once.
    expect(await harness.client.request('session/input', { conversationId, input: 'mention blue', mode: 'steer', expectedTurnId: started.turnId!, clientMessageId: 'steer-1' })).toEqual(steer);
    expect(steer).toMatchObject({ queued: true, turnId: started.turnId, sessionId: started.sessionId });
    expect(steer.inputId).toMatch(/^input_/);
    expect(steer.inputId).not.toBe(started.inputId);
    writeFileSync(path.join(harness.environment.workDir, 'go'), '');

    const turns = await harness.turnsCompleted(1);
    expect(turns[0]).toMatchObject({ id: started.turnId, status: 'completed', stopReason: 'end_turn' });
    const users = harness.completedItems().filter((item): item is Extract<Item, { kind: 'user_message' }> => item.kind === 'user_message');
    expect(users.map((item) => [item.mode, item.inputId, item.turnId, item.clientMessageId])).toEqual([
      ['input', started.inputId, started.turnId, undefined],
      ['steer', steer.inputId, started.turnId, 'steer-1'],
    ]);
    expect(users[1]?.author).toEqual({ clientName: 'test', connectionId: users[0]?.author?.connectionId });
    expect(JSON.stringify(harness.environment.mock.requests[1]?.body)).toContain('mention blue');
    expect(JSON.stringify(harness.environment.mock.requests[1]?.body)).not.toContain('wrong turn');
  });
});

describe('session/dequeue', () => {
  it('withdraws a queued input by its id; a started one is a conflict, an unknown one not found', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer(SLOW_ANSWER);
    const conversationId = await harness.conversation();
    const first = await harness.client.request('session/input', { conversationId, input: 'one' });
    await harness.waitFor((event) => event.method === 'item/delta');
    const second = await harness.client.request('session/input', { conversationId, input: 'two' });
    const third = await harness.client.request('session/input', { conversationId, input: 'three', clientMessageId: 'client-3' });
    expect([second.queued, third.queued]).toEqual([true, true]);
    let { sessions } = await harness.client.request('session/list', { conversationId });
    expect(sessions[0]?.queuedInputs).toEqual([
      { id: second.inputId, text: 'two' },
      { id: third.inputId, text: 'three', clientMessageId: 'client-3' },
    ]);

    expect(await harness.client.request('session/dequeue', { conversationId, inputId: second.inputId })).toEqual({ sessionId: second.sessionId, inputId: second.inputId, dequeued: true });
    ({ sessions } = await harness.client.request('session/list', { conversationId }));
    expect(sessions[0]?.queuedInputs.map((input) => input.id)).toEqual([third.inputId]);
    // Announced before the answer: the latest session/updated already shows the queue without it.
    const latest = harness.events.findLast((event) => event.method === 'session/updated');
    expect(latest?.method === 'session/updated' && latest.params.session.queuedInputs.map((input) => input.id)).toEqual([third.inputId]);

    const again = await refusal(harness.client.request('session/dequeue', { conversationId, inputId: second.inputId }));
    expect(again.code).toBe(-32004);
    expect(again.message).toContain('params.inputId');
    const unknown = await refusal(harness.client.request('session/dequeue', { conversationId, inputId: 'input_01neversent' }));
    expect(unknown.code).toBe(-32004);
    const running = await refusal(harness.client.request('session/dequeue', { conversationId, inputId: first.inputId }));
    expect(conflictReason(running)).toBe('input_started');
    const malformed = await refusal(harness.client.request('session/dequeue', { conversationId, inputId: '../x' }));
    expect(malformed.code).toBe(-32602);
    expect(malformed.message).toContain('params.inputId');

    harness.environment.mock.release('counting');
    const turns = await harness.turnsCompleted(2);
    expect(turns.map((turn) => turn.id)).toEqual([first.turnId, third.turnId]);
    const texts = harness.completedItems().flatMap((item) => (item.kind === 'user_message' ? [item.content.map((part) => (part.type === 'text' ? part.text : '')).join('')] : []));
    expect(texts).toEqual(['one', 'three']);
    expect(harness.environment.mock.requests).toHaveLength(2);
    const started = await refusal(harness.client.request('session/dequeue', { conversationId, inputId: third.inputId }));
    expect(conflictReason(started)).toBe('input_started');
  });
});

describe('session/dequeue of steering', () => {
  it('withdraws steering the running turn has not read yet', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "while [ ! -e go ]; do sleep 0.05; done; echo went" } }]
  - text: "finished"
`);
    const conversationId = await harness.conversation();
    const started = await harness.client.request('session/input', { conversationId, input: 'wait for the file' });
    await harness.waitFor((event) => event.method === 'item/started' && event.params.kind === 'tool_call');
    const kept = await harness.client.request('session/input', { conversationId, input: 'KEPT-STEER', mode: 'steer', expectedTurnId: started.turnId! });
    const withdrawn = await harness.client.request('session/input', { conversationId, input: 'WITHDRAWN-STEER', mode: 'steer', expectedTurnId: started.turnId! });
    expect(await harness.client.request('session/dequeue', { conversationId, inputId: withdrawn.inputId })).toMatchObject({ dequeued: true });
    writeFileSync(path.join(harness.environment.workDir, 'go'), '');
    await harness.turnsCompleted(1);
    const second = JSON.stringify(harness.environment.mock.requests[1]?.body);
    expect(second).toContain('KEPT-STEER');
    expect(second).not.toContain('WITHDRAWN-STEER');
    const read = await refusal(harness.client.request('session/dequeue', { conversationId, inputId: kept.inputId }));
    expect(conflictReason(read)).toBe('input_started');
  });
});

describe('a model for one input', () => {
  it('runs that turn on the model given, records the changes, and refuses an unknown model', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "from the other model"
  - text: "back on the session's model"
`,
      { providersYaml: TWO_MODELS },
    );
    const conversationId = await harness.conversation();
    const unknown = await refusal(harness.client.request('session/input', { conversationId, input: 'hi', model: 'nowhere/x' }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toContain('session/input: params.model');
    expect(harness.environment.mock.requests).toHaveLength(0);

    await harness.client.request('session/input', { conversationId, input: 'one', model: 'mock/other-model', reasoningEffort: 'low' });
    const [first] = await harness.turnsCompleted(1);
    expect(first).toMatchObject({ status: 'completed', model: 'mock/other-model' });
    expect((harness.environment.mock.requests[0]?.body as { model: string }).model).toBe('other-model');
    const { sessions } = await harness.client.request('session/list', { conversationId });
    expect(sessions[0]?.model).toBe('mock/mock-model');

    await harness.client.request('session/input', { conversationId, input: 'two' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]).toMatchObject({ status: 'completed', model: 'mock/mock-model' });
    expect((harness.environment.mock.requests[1]?.body as { model: string }).model).toBe('mock-model');
    const changes = harness.completedItems().flatMap((item) => (item.kind === 'model_change' ? [[item.from, item.to]] : []));
    expect(changes).toEqual([['mock/other-model', 'mock/mock-model']]);
  });
});

describe('client message ids', () => {
  it('runs an input once however often it is sent, echoes the id, and bounds its length', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer(`
responses:
  - text: "only once"
`);
    const conversationId = await harness.conversation();
    const send = () => harness!.client.request('session/input', { conversationId, input: 'do it once', clientMessageId: 'msg-1' });
    const [a, b] = await Promise.all([send(), send()]);
    expect(b).toEqual(a);
    await harness.turnsCompleted(1);
    expect(await send()).toEqual(a);
    // A repeat arriving on another connection is the same input.
    const other = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'other' });
    cleanups.push(() => other.close());
    expect(await other.request('session/input', { conversationId, input: 'do it once', clientMessageId: 'msg-1' })).toEqual(a);
    expect(harness.environment.mock.requests).toHaveLength(1);
    const users = harness.completedItems().filter((item) => item.kind === 'user_message');
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ clientMessageId: 'msg-1', inputId: a.inputId, turnId: a.turnId, author: { clientName: 'test' } });

    const long = await refusal(harness.client.request('session/input', { conversationId, input: 'x', clientMessageId: 'm'.repeat(129) }));
    expect(long.code).toBe(-32602);
    expect(long.message).toContain('params.clientMessageId');
  });

  it('answers a repeated conversation/create with the first conversation', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer('responses:\n  - text: "unused"\n');
    const create = () => harness!.client.request('conversation/create', { cwd: harness!.environment.workDir, clientMessageId: 'create-1' });
    const [a, b] = await Promise.all([create(), create()]);
    expect(b.conversation.id).toBe(a.conversation.id);
    expect((await create()).conversation.id).toBe(a.conversation.id);
    const fresh = await harness.client.request('conversation/create', { cwd: harness.environment.workDir, clientMessageId: 'create-2' });
    expect(fresh.conversation.id).not.toBe(a.conversation.id);
    const long = await refusal(harness.client.request('conversation/create', { cwd: harness.environment.workDir, clientMessageId: 'c'.repeat(129) }));
    expect(long.message).toContain('conversation/create: params.clientMessageId');
  });

  it('does not run an input again after a restart when it is already in the log', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "ran once"
  - text: "a new input"
`);
    const conversationId = await harness.conversation();
    const first = await harness.client.request('session/input', { conversationId, input: 'the input', clientMessageId: 'msg-restart' });
    await harness.turnsCompleted(1);
    await harness.client.close();
    await harness.server.stop();

    const server = await startRuntimeServer({ paths: harness.environment.paths, port: 0, logger: createLogger('silent') });
    const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'after-restart' });
    cleanups.push(async () => {
      await client.close();
      await server.stop();
    });
    // The harness's own client and server are already stopped.
    harness.client.close = async () => undefined;
    harness.server.stop = async () => undefined;
    const repeat = await client.request('session/input', { conversationId, input: 'the input', clientMessageId: 'msg-restart' });
    expect(repeat).toEqual({ sessionId: first.sessionId, inputId: first.inputId, queued: false, turnId: first.turnId });
    const { items } = await client.request('items/list', { conversationId });
    expect(items.filter((stored) => stored.item.kind === 'user_message')).toHaveLength(1);
    expect(harness.environment.mock.requests).toHaveLength(1);
    const { turns } = await client.request('conversation/get', { conversationId });
    expect(turns).toHaveLength(1);
  });
});

describe('stop reasons', () => {
  async function stopReasonOf(script: string, options: Parameters<typeof startInProcessServer>[1] = {}): Promise<Turn> {
    harness = await startInProcessServer(script, options);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'go' });
    const [turn] = await harness.turnsCompleted(1);
    // Stored as announced.
    const { turns } = await harness.client.request('conversation/get', { conversationId });
    expect(turns[0]?.stopReason).toBe(turn?.stopReason);
    await harness.stop();
    harness = undefined;
    return turn!;
  }

  it('tells how each turn ended', async () => {
    expect(await stopReasonOf('responses:\n  - text: "done"\n')).toMatchObject({ status: 'completed', stopReason: 'end_turn' });
    expect(await stopReasonOf('responses:\n  - text: "cut off by the output limit"\n    incompleteReason: max_output_tokens\n')).toMatchObject({ status: 'completed', stopReason: 'max_tokens' });
    expect(await stopReasonOf('responses:\n  - text: "I cannot"\n    incompleteReason: content_filter\n')).toMatchObject({ status: 'completed', stopReason: 'refusal' });
    expect(await stopReasonOf('responses:\n  - error: { status: 400, message: "bad request" }\n')).toMatchObject({ status: 'failed', stopReason: 'model_error' });
    expect(
      await stopReasonOf('responses:\n  - toolCalls: [{ name: exec_command, arguments: { command: "echo hi" } }]\n  - text: "never"\n', { limits: { maxStepsPerTurn: 1 } }),
    ).toMatchObject({ status: 'interrupted', stopReason: 'step_limit' });
  });

  it('records a turn the server stopped during as shutdown', async () => {
    harness = await startInProcessServer(SLOW_ANSWER);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'count' });
    await harness.waitFor((event) => event.method === 'item/delta');
    await harness.client.close();
    await harness.server.stop();
    const server = await startRuntimeServer({ paths: harness.environment.paths, port: 0, logger: createLogger('silent') });
    const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'after-restart' });
    cleanups.push(async () => {
      await client.close();
      await server.stop();
    });
    harness.client.close = async () => undefined;
    harness.server.stop = async () => undefined;
    const { turns } = await client.request('conversation/get', { conversationId });
    expect(turns).toMatchObject([{ status: 'interrupted', stopReason: 'shutdown' }]);
  });
});

describe('session/usage', () => {
  const USAGE_SCRIPT = `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo hi" } }]
    usage: { inputTokens: 1000, outputTokens: 200, cachedInputTokens: 400 }
  - text: "done"
    usage: { inputTokens: 1500, outputTokens: 100 }
`;

  it('reports every model call with the turn total, the context in use and the cost when prices are known', async () => {
    harness = await startInProcessServer(USAGE_SCRIPT, {
      prices: (model) => (model === 'mock/mock-model' ? { inputPerMillionUsd: 2, outputPerMillionUsd: 10, cachedInputPerMillionUsd: 0.5 } : undefined),
    });
    const conversationId = await harness.conversation();
    const { turnId, sessionId } = await harness.client.request('session/input', { conversationId, input: 'go' });
    const [turn] = await harness.turnsCompleted(1);
    const usage = harness.events.flatMap((event) => (event.method === 'session/usage' ? [event.params] : []));
    expect(usage).toHaveLength(2);
    expect(usage[0]).toMatchObject({
      conversationId,
      sessionId,
      turnId,
      model: 'mock/mock-model',
      lastCall: { inputTokens: 1000, outputTokens: 200, cachedInputTokens: 400 },
      turnTotal: { inputTokens: 1000, outputTokens: 200 },
      contextTokens: 1200,
      contextWindow: 128000,
    });
    // 600 uncached × $2 + 400 cached × $0.5 + 200 out × $10, per million.
    expect(usage[0]?.costUsd).toBeCloseTo(0.0034, 10);
    expect(usage[1]).toMatchObject({ lastCall: { inputTokens: 1500, outputTokens: 100 }, turnTotal: { inputTokens: 2500, outputTokens: 300 }, contextTokens: 1600 });
    expect(usage[1]?.costUsd).toBeCloseTo(0.0034 + 0.004, 10);
    // seq: the session log's head when the call ended (the user message, then also the tool call).
    expect(usage.map((event) => event.seq)).toEqual([1, 2]);
    expect(turn?.usage).toMatchObject({ inputTokens: 2500, outputTokens: 300 });
    expect(turn?.costUsd).toBeCloseTo(0.0074, 10);
  });

  it('reports no cost when the prices are unknown', async () => {
    harness = await startInProcessServer(USAGE_SCRIPT);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'go' });
    const [turn] = await harness.turnsCompleted(1);
    const usage = harness.events.flatMap((event) => (event.method === 'session/usage' ? [event.params] : []));
    expect(usage).toHaveLength(2);
    expect(usage.every((event) => event.costUsd === undefined)).toBe(true);
    expect(turn?.costUsd).toBeUndefined();
  });
});

describe('identity on every event', () => {
  it('gives deltas their turn and kind, every stream event its seq, and user messages their author', async () => {
    harness = await startInProcessServer(`
responses:
  - reasoning: "thinking it over"
    text: "running a command"
    toolCalls: [{ name: exec_command, arguments: { command: "echo out-put" } }]
  - text: "all done"
`);
    const conversationId = await harness.conversation();
    const { turnId, sessionId } = await harness.client.request('session/input', { conversationId, input: 'go' });
    await harness.turnsCompleted(1);
    const events = harness.events;
    const started = new Map(events.flatMap((event) => (event.method === 'item/started' ? [[event.params.itemId, event.params] as const] : [])));
    const deltas = events.flatMap((event) => (event.method === 'item/delta' ? [event.params] : []));
    expect(new Set(deltas.map((delta) => delta.kind))).toEqual(new Set(['reasoning', 'assistant_message', 'tool_call']));
    for (const delta of deltas) {
      expect(delta.turnId).toBe(turnId);
      expect(delta.kind).toBe(started.get(delta.itemId)?.kind);
    }
    // item/started and item/delta carry the session log's head at the time: the seq of the last item/completed before them.
    let head = 0;
    for (const event of events) {
      if (event.method === 'item/completed') head = event.params.seq;
      if (event.method === 'item/started' || event.method === 'item/delta') expect(event.params.seq).toBe(head);
    }

    const metadataFile = path.join(harness.environment.paths.dataDir, 'conversations', conversationId, 'metadata.jsonl');
    const entries = new Map(
      readFileSync(metadataFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { seq: number; value: { type: string; turn?: Turn; session?: { id: string; updatedAt: number }; conversation?: { id: string } } })
        .map((line) => [line.seq, line.value]),
    );
    const stateEvents = events.filter((event): event is Extract<AnyNotification, { method: 'turn/started' | 'turn/completed' | 'session/updated' }> =>
      ['turn/started', 'turn/completed', 'session/updated'].includes(event.method),
    );
    expect(stateEvents.length).toBeGreaterThanOrEqual(4);
    for (const event of stateEvents) {
      const entry = entries.get(event.params.seq);
      if (event.method === 'session/updated') expect(entry).toMatchObject({ type: 'session', session: { id: sessionId, updatedAt: event.params.session.updatedAt } });
      else expect(entry).toMatchObject({ type: 'turn', turn: { id: turnId, status: event.params.turn.status } });
    }
    const seqs = stateEvents.map((event) => event.params.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);

    const user = harness.completedItems().find((item) => item.kind === 'user_message');
    expect(user).toMatchObject({ author: { clientName: 'test', connectionId: expect.stringMatching(/^\d+$/) } });
  });

  it('sends conversation/updated with the seq of its metadata entry', async () => {
    harness = await startInProcessServer('responses:\n  - text: "hi"\n');
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'go' });
    await harness.turnsCompleted(1);
    await harness.client.request('conversation/update', { conversationId, title: 'Renamed' });
    const updated = (await harness.waitFor((event) => event.method === 'conversation/updated')) as { params: NotificationParams<'conversation/updated'> };
    const metadataFile = path.join(harness.environment.paths.dataDir, 'conversations', conversationId, 'metadata.jsonl');
    const line = readFileSync(metadataFile, 'utf8').split('\n').find((text) => text.startsWith(`{"seq":${updated.params.seq},`));
    expect(JSON.parse(line ?? '{}')).toMatchObject({ value: { type: 'conversation', conversation: { title: 'Renamed' } } });
  });
});

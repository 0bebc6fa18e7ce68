/**
 * The conversation lifecycle over a real WebSocket against a real server with the mock
 * provider: delete (to the trash), archive and unarchive, fork and rewind, each refusal, and
 * fork and rewind addressing items that share one `createdAt`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import { ErrorCodes, type AnyNotification, type StoredItem } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await harness?.stop();
  harness = undefined;
});

/** The error a request fails with (fails the test when it succeeds). */
async function refusal(promise: Promise<unknown>): Promise<RuntimeClientError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RuntimeClientError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

const FROZEN_NOW = 1_750_000_000_000;

/** Two turns (user + assistant each) run with the clock stopped, so all four items share one `createdAt`. */
async function twoTurnsAtOneInstant(server: InProcessServer): Promise<{ conversationId: string; items: StoredItem[] }> {
  const conversationId = await server.conversation();
  vi.spyOn(Date, 'now').mockReturnValue(FROZEN_NOW);
  await server.client.request('session/input', { conversationId, input: 'first question' });
  await server.turnsCompleted(1);
  await server.client.request('session/input', { conversationId, input: 'second question' });
  await server.turnsCompleted(2);
  vi.restoreAllMocks();
  const { items } = await server.client.request('items/list', { conversationId });
  expect(items.map((stored) => stored.item.kind)).toEqual(['user_message', 'assistant_message', 'user_message', 'assistant_message']);
  // The point of the fixture: time cannot tell these items apart, only ids and seqs can.
  expect(new Set(items.map((stored) => stored.item.createdAt))).toEqual(new Set([FROZEN_NOW]));
  return { conversationId, items };
}

const TWO_ANSWERS = `
responses:
  - text: "answer one"
  - text: "answer two"
  - text: "answer three"
`;

describe('conversation/delete', () => {
  it('moves the conversation to the trash with a deletion entry, tells subscribers, and forgets it', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'hello' });
    await harness.turnsCompleted(1);
    const result = await harness.client.request('conversation/delete', { conversationId });
    expect(result).toEqual({ conversationId });
    await harness.waitFor((event) => event.method === 'conversation/deleted' && event.params.conversationId === conversationId);
    const dataDir = harness.environment.paths.dataDir;
    expect(existsSync(path.join(dataDir, 'conversations', conversationId))).toBe(false);
    const trashed = readFileSync(path.join(dataDir, 'trash', conversationId, 'metadata.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(trashed.at(-1) as string).value).toMatchObject({ type: 'conversation_deleted', conversationId });
    expect(existsSync(path.join(dataDir, 'trash', conversationId))).toBe(true);
    const gone = await refusal(harness.client.request('conversation/get', { conversationId }));
    expect(gone.code).toBe(ErrorCodes.notFound);
    const { conversations } = await harness.client.request('conversation/list', {});
    expect(conversations.map((summary) => summary.id)).not.toContain(conversationId);
    const again = await refusal(harness.client.request('conversation/delete', { conversationId }));
    expect(again.code).toBe(ErrorCodes.notFound);
  });

  it('interrupts a running turn first', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "while [ ! -e go ]; do sleep 0.05; done" } }]
  - text: "never"
`);
    const conversationId = await harness.conversation();
    // The command waits for a file nobody writes: the turn runs until the deletion interrupts it.
    await harness.client.request('session/input', { conversationId, input: 'run something slow' });
    await harness.waitFor((event) => event.method === 'item/started' && event.params.kind === 'tool_call');
    const started = Date.now();
    await harness.client.request('conversation/delete', { conversationId });
    expect(Date.now() - started).toBeLessThan(4000);
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('interrupted');
    expect(existsSync(path.join(harness.environment.paths.dataDir, 'trash', conversationId, 'metadata.jsonl'))).toBe(true);
  });

  it('discards a conversation that has had no input (nothing was on disk)', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const { conversation } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir });
    await harness.client.request('conversation/delete', { conversationId: conversation.id });
    expect((await refusal(harness.client.request('conversation/get', { conversationId: conversation.id }))).code).toBe(ErrorCodes.notFound);
    expect(existsSync(path.join(harness.environment.paths.dataDir, 'trash', conversation.id))).toBe(false);
  });

  it('refuses an unknown id with -32004 and a malformed one with -32602', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer(TWO_ANSWERS);
    const unknown = await refusal(harness.client.request('conversation/delete', { conversationId: 'conv_doesnotexist' }));
    expect(unknown.code).toBe(ErrorCodes.notFound);
    expect(unknown.message).toContain('conversation/delete');
    const malformed = await refusal(harness.client.request('conversation/delete', { conversationId: '../etc' }));
    expect(malformed.code).toBe(ErrorCodes.invalidParams);
    expect(malformed.message).toContain('params.conversationId');
  });
});

describe('conversation/archive and conversation/unarchive', () => {
  it('sets and clears the stored flag, seen in get, in summaries and in the default listing', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'hello' });
    await harness.turnsCompleted(1);
    const archived = await harness.client.request('conversation/archive', { conversationId });
    expect(archived.conversation.archived).toBe(true);
    expect((await harness.client.request('conversation/get', { conversationId })).conversation.archived).toBe(true);
    expect((await harness.client.request('conversation/list', {})).conversations.map((summary) => summary.id)).not.toContain(conversationId);
    const onlyArchived = await harness.client.request('conversation/list', { archived: true });
    expect(onlyArchived.conversations).toEqual([expect.objectContaining({ id: conversationId, archived: true })]);
    const restored = await harness.client.request('conversation/unarchive', { conversationId });
    expect(restored.conversation.archived).toBe(false);
    const listed = await harness.client.request('conversation/list', {});
    expect(listed.conversations).toEqual([expect.objectContaining({ id: conversationId, archived: false, preview: 'answer one' })]);
  });

  it('refuses an unknown id with -32004', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    expect((await refusal(harness.client.request('conversation/archive', { conversationId: 'conv_nope' }))).code).toBe(ErrorCodes.notFound);
    expect((await refusal(harness.client.request('conversation/unarchive', { conversationId: 'conv_nope' }))).code).toBe(ErrorCodes.notFound);
  });
});

describe('conversation/fork', () => {
  it('copies the root session up to an item, by id, when items share one createdAt', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const { conversationId, items } = await twoTurnsAtOneInstant(harness);
    const cut = items[2]?.item; // the second user message
    const fork = await harness.client.request('conversation/fork', { conversationId, fromItemId: cut?.id as string });
    expect(fork.conversation.id).not.toBe(conversationId);
    expect(fork.conversation.forkedFrom).toEqual({ conversationId, itemId: cut?.id });
    expect(fork.session.id).not.toBe(items[0]?.item.sessionId);
    const copied = (await harness.client.request('items/list', { conversationId: fork.conversation.id })).items;
    expect(copied.map((stored) => stored.seq)).toEqual([1, 2, 3]);
    copied.forEach((stored, index) => {
      const original = items[index]?.item as StoredItem['item'];
      const { id, sessionId, turnId, ...content } = stored.item;
      const { id: originalId, sessionId: originalSession, turnId: originalTurn, ...originalContent } = original;
      expect(content).toEqual(originalContent);
      expect(id).not.toBe(originalId);
      expect(sessionId).toBe(fork.session.id);
      expect(turnId).not.toBe(originalTurn);
      expect(originalSession).not.toBe(sessionId);
    });
    // The copied turns come along; the source keeps all its items.
    const got = await harness.client.request('conversation/get', { conversationId: fork.conversation.id });
    expect(got.turns).toHaveLength(2);
    expect((await harness.client.request('items/list', { conversationId })).items).toHaveLength(4);
    // The fork continues with its own history.
    await harness.client.request('conversation/subscribe', { conversationId: fork.conversation.id });
    await harness.client.request('session/input', { conversationId: fork.conversation.id, input: 'continue in the fork' });
    await harness.turnsCompleted(3);
    const lastRequest = JSON.stringify(harness.environment.mock.requests.at(-1)?.body);
    expect(lastRequest).toContain('second question');
    expect(lastRequest).not.toContain('answer two');
  });

  it('copies up to the end of a turn with lastTurnId', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const { conversationId, items } = await twoTurnsAtOneInstant(harness);
    const fork = await harness.client.request('conversation/fork', { conversationId, lastTurnId: items[0]?.item.turnId as string });
    const copied = (await harness.client.request('items/list', { conversationId: fork.conversation.id })).items;
    expect(copied.map((stored) => stored.item.kind)).toEqual(['user_message', 'assistant_message']);
    expect(fork.conversation.forkedFrom?.itemId).toBe(items[1]?.item.id);
  });

  it('keeps what the source was created with for itself alone: MCP servers, instructions, approval policy', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const context = {
      mcpServers: { notes: { transport: 'stdio', command: 'notes-server', env: { TOKEN: 'secret-value' } } },
      instructions: 'Answer in French.',
      approvalPolicy: { default: 'deny' as const, rules: [{ tool: 'exec_command', match: { command: 'ls*' }, decision: 'allow' as const }] },
    };
    const { conversation } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir, ...context });
    await harness.client.request('conversation/subscribe', { conversationId: conversation.id });
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'question' });
    await harness.turnsCompleted(1);
    const { items } = await harness.client.request('items/list', { conversationId: conversation.id });
    const fork = await harness.client.request('conversation/fork', { conversationId: conversation.id, lastTurnId: items.at(-1)?.item.turnId as string });
    const pick = (value: Record<string, unknown>) => ({ mcpServers: value.mcpServers, instructions: value.instructions, approvalPolicy: value.approvalPolicy });
    const source = (await harness.client.request('conversation/get', { conversationId: conversation.id })).conversation;
    expect(pick(source).approvalPolicy).toEqual(context.approvalPolicy);
    expect(pick(fork.conversation)).toEqual(pick(source));
    const stored = (await harness.client.request('conversation/get', { conversationId: fork.conversation.id })).conversation;
    expect(pick(stored)).toEqual(pick(source));
    // Secrets stay masked for clients, in the fork as in the source.
    expect(JSON.stringify(stored)).not.toContain('secret-value');
  });

  it('copies what is stored while the source runs', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "while [ ! -e go ]; do sleep 0.05; done" } }]
  - text: "done"
`);
    const conversationId = await harness.conversation();
    // The command waits for the file written after the fork, so the source runs meanwhile.
    await harness.client.request('session/input', { conversationId, input: 'slow work' });
    await harness.waitFor((event) => event.method === 'item/started' && event.params.kind === 'tool_call');
    const first = harness.completedItems()[0];
    const fork = await harness.client.request('conversation/fork', { conversationId, fromItemId: first?.id as string });
    const got = await harness.client.request('conversation/get', { conversationId: fork.conversation.id });
    expect(got.turns.map((turn) => turn.status)).toEqual(['interrupted']);
    expect(got.sessions[0]?.status).toBe('idle');
    writeFileSync(path.join(harness.environment.workDir, 'go'), '');
    const [source] = await harness.turnsCompleted(1);
    expect(source?.status).toBe('completed');
  });

  it('refuses bad params (-32602) and unknown conversations, items and turns (-32004)', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const { conversationId, items } = await twoTurnsAtOneInstant(harness);
    const both = await refusal(harness.client.request('conversation/fork', { conversationId, fromItemId: items[0]?.item.id as string, lastTurnId: items[0]?.item.turnId as string }));
    expect(both.code).toBe(ErrorCodes.invalidParams);
    expect(both.message).toContain('params.fromItemId');
    const neither = await refusal(harness.client.request('conversation/fork', { conversationId }));
    expect(neither.code).toBe(ErrorCodes.invalidParams);
    const noItem = await refusal(harness.client.request('conversation/fork', { conversationId, fromItemId: 'item_missing' }));
    expect(noItem.code).toBe(ErrorCodes.notFound);
    expect(noItem.message).toContain('params.fromItemId');
    const noTurn = await refusal(harness.client.request('conversation/fork', { conversationId, lastTurnId: 'turn_missing' }));
    expect(noTurn.code).toBe(ErrorCodes.notFound);
    expect(noTurn.message).toContain('params.lastTurnId');
    // A turn that does not exist is said to be missing, not to hold no items.
    expect(noTurn.message).toBe(`conversation/fork: params.lastTurnId: conversation ${conversationId} has no turn "turn_missing"`);
    const noConversation = await refusal(harness.client.request('conversation/fork', { conversationId: 'conv_missing', fromItemId: 'item_x' }));
    expect(noConversation.code).toBe(ErrorCodes.notFound);
    expect((await harness.client.request('conversation/list', {})).conversations).toHaveLength(1);
  });
});

describe('conversation/rewind', () => {
  it('keeps the items up to one, by id, when items share one createdAt, and tells subscribers', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const { conversationId, items } = await twoTurnsAtOneInstant(harness);
    const keep = items[1]?.item as StoredItem['item'];
    const secondTurn = items[2]?.item.turnId as string;
    const result = await harness.client.request('conversation/rewind', { conversationId, afterItemId: keep.id });
    expect(result).toMatchObject({ afterSeq: 2, dropped: 2, rewoundTurnIds: [secondTurn] });
    expect(result.session.historyEpoch).toBe(1);
    expect(result.session.rewoundAfterSeq).toBe(2);
    const rewound = (await harness.waitFor((event) => event.method === 'session/rewound')) as Extract<AnyNotification, { method: 'session/rewound' }>;
    expect(rewound.params).toMatchObject({ conversationId, afterSeq: 2, historyEpoch: 1, rewoundTurnIds: [secondTurn] });
    expect((await harness.client.request('items/list', { conversationId })).items).toEqual(items.slice(0, 2));
    const got = await harness.client.request('conversation/get', { conversationId });
    expect(got.turns.map((turn) => turn.id)).toEqual([items[0]?.item.turnId]);
    // The next turn's request holds only what was kept, and its items continue from seq 3.
    await harness.client.request('session/input', { conversationId, input: 'third question' });
    await harness.turnsCompleted(3);
    const body = JSON.stringify(harness.environment.mock.requests.at(-1)?.body);
    expect(body).toContain('first question');
    expect(body).not.toContain('second question');
    const after = (await harness.client.request('items/list', { conversationId })).items;
    expect(after.map((stored) => stored.seq)).toEqual([1, 2, 3, 4]);
    expect(after[2]?.item.kind === 'user_message' && after[2].item.content).toEqual([{ type: 'text', text: 'third question' }]);
  });

  it('replays the new items to a subscriber that held items past the new head', async () => {
    harness = await startInProcessServer(TWO_ANSWERS);
    const { conversationId, items } = await twoTurnsAtOneInstant(harness);
    const sessionId = items[0]?.item.sessionId as string;
    await harness.client.request('conversation/rewind', { conversationId, afterItemId: items[1]?.item.id as string });
    await harness.client.request('session/input', { conversationId, input: 'third question' });
    await harness.turnsCompleted(3);
    // A client that last saw seq 4 of the old history, without or with its (old) epoch.
    for (const epoch of [undefined, 0]) {
      const late = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'late' });
      const seen: AnyNotification[] = [];
      late.onNotification((event) => seen.push(event));
      await late.request('conversation/subscribe', { conversationId, afterSeq: { [sessionId]: 4 }, ...(epoch !== undefined ? { historyEpoch: { [sessionId]: epoch } } : {}) });
      await expect.poll(() => seen.filter((event) => event.method === 'item/completed').length).toBe(2);
      const replayed = seen.flatMap((event) => (event.method === 'item/completed' ? [event.params.seq] : []));
      expect(replayed).toEqual([3, 4]);
      await late.close();
    }
    // With the current epoch, afterSeq is taken as given.
    const current = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'current' });
    const seen: AnyNotification[] = [];
    current.onNotification((event) => seen.push(event));
    await current.request('conversation/subscribe', { conversationId, afterSeq: { [sessionId]: 3 }, historyEpoch: { [sessionId]: 1 } });
    await expect.poll(() => seen.filter((event) => event.method === 'item/completed').length).toBe(1);
    await current.close();
  });

  it('forgets the approvals given for the session: the next matching call asks again', async () => {
    const agents = 'agents:\n  default:\n    default: true\n    approvals:\n      default: allow\n      rules:\n        - { tool: exec_command, match: { command: "echo *" }, decision: ask }\n';
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo same" } }]
  - text: "one"
  - toolCalls: [{ name: exec_command, arguments: { command: "echo same" } }]
  - text: "two"
  - toolCalls: [{ name: exec_command, arguments: { command: "echo same" } }]
  - text: "three"
`,
      { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agents) },
    );
    let asked = 0;
    harness.client.handleServerRequest('approval/request', async () => {
      asked += 1;
      return { decision: 'allow_session' };
    });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'first' });
    await harness.turnsCompleted(1);
    await harness.client.request('session/input', { conversationId, input: 'second' });
    await harness.turnsCompleted(2);
    expect(asked).toBe(1);
    const items = (await harness.client.request('items/list', { conversationId })).items;
    const endOfFirst = items.findLast((stored) => stored.item.kind === 'assistant_message' && stored.item.text === 'one');
    await harness.client.request('conversation/rewind', { conversationId, afterItemId: endOfFirst?.item.id as string });
    await harness.client.request('session/input', { conversationId, input: 'third' });
    await harness.turnsCompleted(3);
    expect(asked).toBe(2);
  });

  it('is refused with -32009 turn_running while a turn runs, leaving the log intact', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "answer one"
  - toolCalls: [{ name: exec_command, arguments: { command: "while [ ! -e go ]; do sleep 0.05; done" } }]
  - text: "done"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'first' });
    await harness.turnsCompleted(1);
    // The command waits for the file written after the refusal, so the turn runs meanwhile.
    await harness.client.request('session/input', { conversationId, input: 'second' });
    await harness.waitFor((event) => event.method === 'item/started' && event.params.kind === 'tool_call');
    const before = (await harness.client.request('items/list', { conversationId })).items;
    const refused = await refusal(harness.client.request('conversation/rewind', { conversationId, afterItemId: before[0]?.item.id as string }));
    expect(refused.code).toBe(ErrorCodes.conflict);
    expect(refused.data).toEqual({ reason: 'turn_running' });
    expect(refused.message).toContain('conversation/rewind');
    expect((await harness.client.request('items/list', { conversationId })).items.slice(0, before.length)).toEqual(before);
    writeFileSync(path.join(harness.environment.workDir, 'go'), '');
    await harness.turnsCompleted(2);
    const ended = await harness.client.request('conversation/rewind', { conversationId, afterItemId: before[0]?.item.id as string });
    expect(ended.afterSeq).toBe(1);
  });

  it('refuses unknown conversations, sessions and items (-32004) and malformed ids (-32602)', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer(TWO_ANSWERS);
    const { conversationId, items } = await twoTurnsAtOneInstant(harness);
    const noItem = await refusal(harness.client.request('conversation/rewind', { conversationId, afterItemId: 'item_missing' }));
    expect(noItem.code).toBe(ErrorCodes.notFound);
    expect(noItem.message).toContain('params.afterItemId');
    const noSession = await refusal(harness.client.request('conversation/rewind', { conversationId, sessionId: 'sess_missing', afterItemId: items[0]?.item.id as string }));
    expect(noSession.code).toBe(ErrorCodes.notFound);
    expect(noSession.message).toContain('params.sessionId');
    const noConversation = await refusal(harness.client.request('conversation/rewind', { conversationId: 'conv_missing', afterItemId: 'item_x' }));
    expect(noConversation.code).toBe(ErrorCodes.notFound);
    const malformed = await refusal(harness.client.request('conversation/rewind', { conversationId, sessionId: 'nope', afterItemId: 'item_x' }));
    expect(malformed.code).toBe(ErrorCodes.invalidParams);
    expect(malformed.message).toContain('params.sessionId');
    expect((await harness.client.request('items/list', { conversationId })).items).toEqual(items);
  });
});

/**
 * `conversation/export` and `conversation/import` between two real servers (HTTP + WebSocket,
 * file logs, SQLite index): a conversation holding every item kind, a subagent session and an
 * attachment comes back as byte-equal log files; an archive whose conversation is stored
 * already is refused, naming it, unless a copy under new ids is asked for (`asNew`); a bad
 * archive is refused naming the line and leaves nothing behind.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClientError } from '../../src/client/runtime-client.js';
import { conversationPath, type ConversationStore } from '../../src/dao/conversation-store.js';
import type { LogStorage } from '../../src/storage/log-storage.js';
import { newId } from '../../src/ids.js';
import { ErrorCodes, ItemSchema, type Conversation, type Item, type Session, type Turn } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

const servers: InProcessServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

async function start(): Promise<InProcessServer> {
  const server = await startInProcessServer('responses:\n  - text: "continued after the import"\n');
  servers.push(server);
  return server;
}

/** Every item kind of the protocol (SPEC §3), read from the schema so a new kind is not missed. */
const ALL_KINDS = ItemSchema.options.map((option) => option.shape.kind.value);

/** One item of each kind, in a turn of `sessionId`, plus an agent message towards `childId`. */
function itemsOfEveryKind(sessionId: string, childId: string, turnId: string, attachmentPath: string): Item[] {
  const at = 1_790_000_000_000;
  const base = (offset: number) => ({ id: newId('item'), sessionId, turnId, createdAt: at + offset, completedAt: at + offset + 1, status: 'completed' as const });
  const items: Item[] = [
    { ...base(0), kind: 'instruction', source: 'agents_md', name: 'AGENTS.md', body: 'Use tabs.\nNever "quote".' },
    { ...base(1), kind: 'user_message', content: [{ type: 'text', text: 'Fix the build ✓' }, { type: 'file', path: attachmentPath, name: 'notes.txt', attachmentId: attachmentPath.split('/')[1]?.split('-')[0] as string }], mode: 'input', author: { clientName: 'test' } },
    { ...base(2), kind: 'reasoning', summary: 'Look first.\n\nThen act.', summaryParts: ['Look first.', 'Then act.'], model: 'mock/mock-model', providerData: { encryptedContent: 'gAAAA…' } },
    { ...base(3), kind: 'tool_call', callId: 'call_1', toolName: 'exec_command', arguments: { cmd: 'make' }, executor: 'local', output: 'error: x\n', isError: true, exitCode: 2, durationMs: 12.5, details: { kind: 'command', command: 'make', cwd: '/w', exitCode: 2 } },
    { ...base(4), kind: 'approval', callId: 'call_2', toolName: 'exec_command', decision: 'allow_prefix', decidedBy: 'client:test', prefix: ['make'] },
    { ...base(5), kind: 'model_error', provider: 'mock', model: 'mock-model', httpStatus: 500, message: 'upstream failed', retries: 4 },
    { ...base(6), kind: 'context_summary', text: 'Summary so far.', lastItemId: 'item_earlier' },
    { ...base(7), kind: 'model_change', from: 'mock/a', to: 'mock/b' },
    { ...base(8), kind: 'agent_change', from: 'default', to: 'reviewer' },
    { ...base(9), kind: 'executor_change', from: 'local', to: 'box' },
    { ...base(10), kind: 'plan', explanation: 'two steps', steps: [{ step: 'Read', status: 'completed' }, { step: 'Fix', status: 'in_progress' }] },
    { ...base(11), kind: 'hook_run', event: 'pre_tool_use', command: './check.sh', exitCode: 0, output: 'ok', decision: 'allow' },
    { ...base(12), kind: 'agent_message', fromSessionId: sessionId, toSessionId: childId, text: 'Review this.' },
    { ...base(13), kind: 'assistant_message', text: 'Fixed **it**.', model: 'mock/mock-model' },
    { ...base(14), kind: 'interruption', reason: 'user', message: 'stopped' },
  ];
  return items;
}

/** Writes a conversation with every item kind, two sessions and an attachment through the server's own store. */
async function buildConversation(server: InProcessServer): Promise<{ conversationId: string; rootId: string; childId: string }> {
  const store: ConversationStore = server.server.runtime.store;
  const now = Date.now();
  const conversationId = newId('conv');
  const rootId = newId('sess');
  const childId = newId('sess');
  const session = (id: string, parent: string | null): Session => ({ id, conversationId, parentSessionId: parent, agent: 'default', model: 'mock/mock-model', status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], createdAt: now, updatedAt: now });
  const conversation: Conversation = { id: conversationId, title: 'Every kind', workLocation: [{ executor: 'local', cwd: server.environment.workDir }], rootSessionId: rootId, createdAt: now, updatedAt: now };
  await store.createConversation(conversation, session(rootId, null));
  await store.ensureDurable(conversationId);
  const attachment = server.server.runtime.attachments?.save(conversationId, 'notes.txt', Buffer.from('line one\nline two\n'));
  expect(attachment).toBeDefined();
  const turnId = newId('turn');
  const childTurnId = newId('turn');
  const turn = (id: string, sessionId: string): Turn => ({ id, sessionId, conversationId, status: 'completed', steps: 3, usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, model: 'mock/mock-model', startedAt: now, completedAt: now + 5 });
  const items = itemsOfEveryKind(rootId, childId, turnId, attachment!.path);
  expect(new Set(items.map((item) => item.kind))).toEqual(new Set(ALL_KINDS));
  await store.appendItems(conversationId, rootId, items);
  await store.appendMetadata(conversationId, [{ type: 'session', session: session(childId, rootId) }, { type: 'turn', turn: turn(turnId, rootId) }]);
  await store.appendItems(conversationId, childId, [{ id: newId('item'), sessionId: childId, turnId: childTurnId, createdAt: now, completedAt: now, status: 'completed', kind: 'assistant_message', text: 'Looks fine.', model: 'mock/mock-model' }]);
  await store.appendMetadata(conversationId, [{ type: 'turn', turn: turn(childTurnId, childId) }, { type: 'conversation', conversation: { ...conversation, title: 'Every kind (renamed)' } }]);
  return { conversationId, rootId, childId };
}

function conversationDirectory(server: InProcessServer, conversationId: string): string {
  return path.join(server.environment.paths.dataDir, 'conversations', conversationId);
}

/** Every file of a conversation's directory, by path relative to it, with its bytes. */
function filesOf(directory: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files[path.relative(directory, full)] = readFileSync(full, 'utf8');
  }
  return files;
}

describe('conversation/export → conversation/import', { timeout: 60_000 }, () => {
  it('round-trips every item kind, every session and the attachments to byte-equal files, listed and continuable', async () => {
    const source = await start();
    const target = await start();
    const { conversationId, rootId, childId } = await buildConversation(source);

    const exported = await source.client.request('conversation/export', { conversationId });
    const imported = await target.client.request('conversation/import', { archive: exported.archive });
    expect(imported).toMatchObject({ renamed: false, archivedConversationId: conversationId, items: 16, attachments: 1 });
    expect(imported.conversation.id).toBe(conversationId);
    expect(imported.conversation.title).toBe('Every kind (renamed)');

    const original = filesOf(conversationDirectory(source, conversationId));
    const names = Object.keys(original);
    expect(names).toHaveLength(4);
    expect(names).toEqual(expect.arrayContaining(['metadata.jsonl', `${rootId}.jsonl`, `${childId}.jsonl`]));
    expect(names.filter((name) => name.startsWith('attachments/att_'))).toHaveLength(1);
    expect(filesOf(conversationDirectory(target, conversationId))).toEqual(original);

    // Listed, searchable and readable like any conversation of the target.
    const listing = await target.client.request('conversation/list', {});
    expect(listing.conversations.map((summary) => summary.id)).toEqual([conversationId]);
    expect(listing.conversations[0]?.preview).toBe('Fixed **it**.');
    expect((await target.client.request('conversation/list', { query: 'build' })).conversations.map((summary) => summary.id)).toEqual([conversationId]);
    const read = await target.client.request('items/list', { conversationId, sessionId: rootId });
    expect(read.items.map((stored) => stored.item.kind)).toEqual(itemsKindsInOrder());

    // And it continues with a new turn against the mock model.
    await target.client.request('conversation/subscribe', { conversationId });
    await target.client.request('session/input', { conversationId, input: 'go on' });
    const [turn] = await target.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    expect(target.completedItems().at(-1)).toMatchObject({ kind: 'assistant_message', text: 'continued after the import' });
    expect(JSON.stringify(target.environment.mock.requests[0]?.body)).toContain('Fix the build');
  });

  it('refuses an archive whose conversation is stored here already, naming it; asNew imports a copy under new ids, keeping the first untouched', async () => {
    const source = await start();
    const { conversationId, rootId } = await buildConversation(source);
    const before = filesOf(conversationDirectory(source, conversationId));
    const { archive } = await source.client.request('conversation/export', { conversationId });
    const refusal = await source.client.request('conversation/import', { archive }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RuntimeClientError);
    expect(refusal).toMatchObject({ code: ErrorCodes.conflict, data: { reason: 'conversation_exists' } });
    expect((refusal as Error).message).toBe(`conversation/import: conversation ${conversationId} ("Every kind (renamed)") is stored here already; import with asNew for a copy under new ids`);
    expect((await source.client.request('conversation/list', {})).conversations).toHaveLength(1);
    expect(filesOf(conversationDirectory(source, conversationId))).toEqual(before);

    const copy = await source.client.request('conversation/import', { archive, asNew: true });
    expect(copy.renamed).toBe(true);
    expect(copy.archivedConversationId).toBe(conversationId);
    const newId = copy.conversation.id;
    expect(newId).not.toBe(conversationId);
    expect(copy.session.id).not.toBe(rootId);
    expect(copy.session.conversationId).toBe(newId);
    expect(filesOf(conversationDirectory(source, conversationId))).toEqual(before);
    const files = filesOf(conversationDirectory(source, newId));
    expect(JSON.stringify(files)).not.toContain(conversationId);
    expect(JSON.stringify(files)).not.toContain(rootId);
    const snapshot = await source.client.request('conversation/get', { conversationId: newId });
    expect(snapshot.turns.every((turn) => turn.conversationId === newId)).toBe(true);
    const items = await source.client.request('items/list', { conversationId: newId, sessionId: copy.session.id });
    expect(items.items).toHaveLength(15);
    expect(items.items.every((stored) => stored.item.sessionId === copy.session.id)).toBe(true);
    expect((await source.client.request('conversation/list', {})).conversations).toHaveLength(2);

    // A copy asked for gets new ids even where the archive's id is free.
    const target = await start();
    const fresh = await target.client.request('conversation/import', { archive, asNew: true });
    expect(fresh).toMatchObject({ renamed: true, archivedConversationId: conversationId });
    expect(fresh.conversation.id).not.toBe(conversationId);
  });

  it('records a turn that was running at export as interrupted when it is imported', async () => {
    const source = await start();
    const target = await start();
    const { conversationId, rootId } = await buildConversation(source);
    const store = source.server.runtime.store;
    const state = (await store.loadConversation(conversationId))!;
    const root = state.sessions.find((session) => session.id === rootId)!;
    const running: Turn = { id: newId('turn'), sessionId: rootId, conversationId, status: 'running', steps: 1, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, startedAt: Date.now(), completedAt: null };
    await store.appendMetadata(conversationId, [{ type: 'turn', turn: running }, { type: 'session', session: { ...root, status: 'running', activeTurnId: running.id } }]);
    const { archive } = await source.client.request('conversation/export', { conversationId });

    const imported = await target.client.request('conversation/import', { archive });
    expect(imported.session).toMatchObject({ status: 'idle', activeTurnId: null });
    const snapshot = await target.client.request('conversation/get', { conversationId });
    expect(snapshot.turns.find((turn) => turn.id === running.id)).toMatchObject({ status: 'interrupted' });
    const [summary] = (await target.client.request('conversation/list', {})).conversations;
    expect(summary).toMatchObject({ running: false, lastTurnStatus: 'interrupted' });
    const items = await target.client.request('items/list', { conversationId, sessionId: rootId, direction: 'backward', limit: 1 });
    expect(items.items[0]?.item).toMatchObject({ kind: 'interruption', reason: 'crash_recovery', turnId: running.id });
  });

  it('leaves out of the archive the entries every read skips as invalid, so what it exports can be imported', async () => {
    const source = await start();
    const target = await start();
    const { conversationId, rootId } = await buildConversation(source);
    // Values no read takes (a damaged file, an older writer): written straight to the logs.
    const logs = (source.server.runtime.store as unknown as { logs: LogStorage }).logs;
    await logs.append(conversationPath(conversationId), rootId, [{ kind: 'no_such_kind', id: 'item_bad', sessionId: rootId }]);
    await logs.append(conversationPath(conversationId), 'metadata', [{ type: 'turn', turnX: {} }]);
    const exported = await source.client.request('conversation/export', { conversationId });
    expect(exported.archive).not.toContain('no_such_kind');
    expect(exported.archive).not.toContain('turnX');
    const imported = await target.client.request('conversation/import', { archive: exported.archive });
    const items = await target.client.request('items/list', { conversationId: imported.conversation.id, sessionId: rootId });
    expect(imported.conversation.id).toBe(conversationId);
    expect(items.items.map((entry) => entry.item.kind)).toEqual(itemsOfEveryKind(rootId, 'sess_child', 'turn_t', 'a/b').map((item) => item.kind));
  });

  it('refuses a damaged archive naming the line, and leaves nothing behind', async () => {
    const source = await start();
    const target = await start();
    const { conversationId } = await buildConversation(source);
    const { archive } = await source.client.request('conversation/export', { conversationId });
    const lines = archive.split('\n');
    const item = JSON.parse(lines[8] as string) as { value: Record<string, unknown> };
    item.value.kind = 'no_such_kind';
    const cases: { archive: string; message: RegExp }[] = [
      { archive: lines.slice(0, 10).join('\n') + '\n', message: /the archive is truncated: no end line after line 10/ },
      { archive: [lines[0], lines[1], '{"type":"entry","stream":"metadata",', ...lines.slice(3)].join('\n'), message: /line 3: not valid JSON/ },
      { archive: [lines[0]!.replace('"version":1', '"version":2'), ...lines.slice(1)].join('\n'), message: /line 1: version: this OpenVaala reads archive version 1, the file is version 2/ },
      { archive: [...lines.slice(0, 8), JSON.stringify(item), ...lines.slice(9)].join('\n'), message: /line 9: value.kind: / },
    ];
    for (const bad of cases) {
      const error = await target.client.request('conversation/import', { archive: bad.archive }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RuntimeClientError);
      expect((error as RuntimeClientError).code).toBe(ErrorCodes.invalidParams);
      expect((error as RuntimeClientError).message).toMatch(/^conversation\/import: params\.archive: /);
      expect((error as RuntimeClientError).message).toMatch(bad.message);
    }
    expect((await target.client.request('conversation/list', {})).conversations).toEqual([]);
    // No conversation directory at all (not even an empty one), no attachment file.
    const conversations = path.join(target.environment.paths.dataDir, 'conversations');
    expect(existsSync(conversations) ? readdirSync(conversations) : []).toEqual([]);
    expect(existsSync(path.join(target.environment.paths.dataDir, 'staging')) ? readdirSync(path.join(target.environment.paths.dataDir, 'staging', '.incoming')) : []).toEqual([]);
  });

  it('refuses an archive whose item sits in another session\'s stream, writing nothing', async () => {
    const source = await start();
    const { conversationId, rootId, childId } = await buildConversation(source);
    const { archive } = await source.client.request('conversation/export', { conversationId });
    await source.client.request('conversation/delete', { conversationId });
    const misplaced = archive
      .split('\n')
      .map((line) => {
        if (!line.includes(`"stream":"${childId}"`)) return line;
        const entry = JSON.parse(line) as { value: { sessionId: string } };
        entry.value.sessionId = rootId;
        return JSON.stringify(entry);
      })
      .join('\n');
    const error = (await source.client.request('conversation/import', { archive: misplaced }).catch((caught: unknown) => caught)) as RuntimeClientError;
    expect(error.message).toContain(`stream "${childId}" seq 1: sessionId is "${rootId}", not the stream's session`);
    expect((await source.client.request('conversation/list', {})).conversations).toEqual([]);
  });
});

function itemsKindsInOrder(): string[] {
  return ['instruction', 'user_message', 'reasoning', 'tool_call', 'approval', 'model_error', 'context_summary', 'model_change', 'agent_change', 'executor_change', 'plan', 'hook_run', 'agent_message', 'assistant_message', 'interruption'];
}

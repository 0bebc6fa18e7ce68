/**
 * The conversation archive format (docs/storage.md, "Export and import"): what it writes, and
 * every kind of bad archive refused with the line and field named; the store's import removes
 * what it wrote when a write fails; a Codex rollout from the fixtures converts to our items.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArchiveFormatError, parseArchive, serializeArchive, type ConversationArchive } from '../../src/dao/conversation-archive.js';
import { CodexRolloutError, convertCodexRollout } from '../../src/dao/codex-rollout.js';
import { ConversationExistsError } from '../../src/dao/conversation-store.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { Item, Session, Turn } from '../../src/protocol/index.js';
import { assistantMessage, newConversation, openComposedStore, userMessage } from './fixtures.js';

const ROLLOUT = '../shared/fixtures/codex-rollout/rollout-two-commands.jsonl';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-archive-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function sampleArchive(): ConversationArchive {
  const { conversation, session } = newConversation(1, 'Sample');
  return {
    conversationId: conversation.id,
    exportedAt: 1_700_000_000_000,
    streams: [
      { stream: session.id, entries: [{ seq: 1, value: userMessage(session.id, 'hello') }, { seq: 2, value: assistantMessage(session.id, 'hi') }] },
      { stream: 'metadata', entries: [{ seq: 1, value: { type: 'conversation', conversation } }, { seq: 2, value: { type: 'session', session } }] },
    ],
    attachments: [{ name: 'att_01abc-notes.txt', bytes: Buffer.from('some notes\n') }],
  };
}

function errorOf(text: string): ArchiveFormatError {
  try {
    parseArchive(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ArchiveFormatError);
    return error as ArchiveFormatError;
  }
  throw new Error('the archive was accepted');
}

describe('archive format', () => {
  it('writes a manifest first, metadata entries before session entries, attachments, and an end line counting the lines', () => {
    const sample = sampleArchive();
    const text = serializeArchive(sample);
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.type)).toEqual(['manifest', 'entry', 'entry', 'entry', 'entry', 'attachment', 'end']);
    expect(lines[0]).toMatchObject({ format: 'openvaala.conversation-archive', version: 1, attachments: 1 });
    expect(lines.slice(1, 5).map((line) => line.stream)).toEqual(['metadata', 'metadata', expect.stringMatching(/^sess_/), expect.stringMatching(/^sess_/)]);
    expect(lines[6]).toEqual({ type: 'end', lines: 6 });
    const parsed = parseArchive(text);
    expect(parsed.streams.map((stream) => stream.entries)).toEqual([sample.streams[1]!.entries, sample.streams[0]!.entries]);
    expect(Buffer.from(parsed.attachments[0]!.bytes).toString()).toBe('some notes\n');
  });

  it('refuses each kind of damage naming the line and the field', () => {
    const lines = serializeArchive(sampleArchive()).trimEnd().split('\n');
    const edit = (index: number, change: (line: Record<string, unknown>) => void) =>
      lines.map((line, at) => {
        if (at !== index) return line;
        const value = JSON.parse(line) as Record<string, unknown>;
        change(value);
        return JSON.stringify(value);
      });
    const join = (list: string[]) => `${list.join('\n')}\n`;
    expect(errorOf('').message).toBe('the archive is empty');
    expect(errorOf(join(lines.slice(1))).message).toMatch(/^line 1: the first line must be the manifest/);
    expect(errorOf(join(edit(0, (line) => (line.format = 'tarball')))).message).toBe('line 1: format: expected "openvaala.conversation-archive", got "tarball"');
    expect(errorOf(join(edit(0, (line) => (line.version = 7)))).message).toBe('line 1: version: this OpenVaala reads archive version 1, the file is version 7');
    expect(errorOf(join(lines.slice(0, 4))).message).toMatch(/^the archive is truncated: no end line after line 4/);
    // A torn last line (the copy stopped mid-line).
    expect(errorOf(`${lines.slice(0, 6).join('\n')}\n{"type":"en`).message).toMatch(/^line 7: not valid JSON/);
    expect(errorOf(join([...lines.slice(0, 2), 'garbage', ...lines.slice(3)])).message).toMatch(/^line 3: not valid JSON/);
    expect(errorOf(join(edit(2, (line) => ((line.value as { session: Partial<Session> }).session.agent = undefined)))).message).toMatch(/^line 3: value\.session\.agent: /);
    expect(errorOf(join(edit(3, (line) => ((line.value as Partial<Item>).kind = undefined)))).message).toMatch(/^line 4: value\.kind: /);
    expect(errorOf(join(edit(3, (line) => (line.stream = '../escape')))).message).toMatch(/^line 4: stream: /);
    expect(errorOf(join(edit(4, (line) => (line.seq = 1)))).message).toMatch(/^line 5: seq: 1 does not follow seq 1 of stream "sess_/);
    expect(errorOf(join(edit(5, (line) => (line.sha256 = '0'.repeat(64))))).message).toBe('line 6: data: the bytes do not match sha256');
    expect(errorOf(join(edit(5, (line) => (line.name = '../../etc/passwd'))))).toHaveProperty('line', 6);
    expect(errorOf(join(edit(6, (line) => (line.lines = 3)))).message).toBe('line 7: lines: the end line counts 3 lines before it, the file has 6');
    expect(errorOf(join([...lines, lines[1] as string])).message).toBe('line 8: text after the end line');
    expect(errorOf(join(edit(0, (line) => ((line.streams as Record<string, number>).metadata = 3)))).message).toBe('line 1: manifest streams.metadata: says 3 entries, the archive holds 2');
    expect(errorOf(join(edit(1, (line) => (line.type = 'blob')))).message).toBe('line 2: type: expected "entry", "attachment" or "end", got "blob"');
  });
});

describe('ConversationStore.importConversation', () => {
  it('removes every stream, the index record and the search entry when a write fails, and refuses an id that exists', async () => {
    const files = new FileLogStorage(root);
    // The metadata append is the last log write: by then the session stream is on disk.
    const failing = Object.assign(Object.create(files) as FileLogStorage, {
      append: (logPath: string, stream: string, values: unknown[]) => (stream === 'metadata' ? Promise.reject(new Error('disk full')) : files.append(logPath, stream, values)),
    });
    const composed = openComposedStore(root, { logs: failing });
    const archive = sampleArchive();
    const streams = archive.streams.map(({ stream, entries }) => ({ stream, values: entries.map((entry) => entry.value) }));
    await expect(composed.store.importConversation(archive.conversationId, streams)).rejects.toThrow('disk full');
    expect(fs.existsSync(path.join(root, 'conversations', archive.conversationId))).toBe(false);
    expect((await composed.store.listConversations()).conversations).toEqual([]);
    expect((await composed.store.listConversations({ query: 'hello' })).conversations).toEqual([]);
    await composed.close();

    const working = openComposedStore(root);
    const state = await working.store.importConversation(archive.conversationId, streams);
    expect(state.conversation.title).toBe('Sample');
    expect((await working.store.listConversations({ query: 'hello' })).conversations.map((summary) => summary.id)).toEqual([archive.conversationId]);
    await expect(working.store.importConversation(archive.conversationId, streams)).rejects.toBeInstanceOf(ConversationExistsError);
    expect(await working.store.listItems(archive.conversationId, archive.streams[0]!.stream)).toHaveLength(2);
    await working.close();
  });
});

describe('Codex rollout conversion', () => {
  it('turns the fixture rollout into a user message, two command calls with outputs and exit codes, an answer and one completed turn', () => {
    const archive = convertCodexRollout(fs.readFileSync(ROLLOUT, 'utf8'), { model: 'mock/mock-model', agent: 'default', cwd: '/tmp/project' });
    const metadata = archive.streams.find((stream) => stream.stream === 'metadata')!.entries.map((entry) => entry.value as { type: string; turn?: Turn; session?: Session; conversation?: { title: string; workLocation: unknown } });
    const items = archive.streams.find((stream) => stream.stream !== 'metadata')!.entries.map((entry) => entry.value as Item);
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'tool_call', 'tool_call', 'assistant_message']);
    expect(items[0]).toMatchObject({ content: [{ type: 'text', text: 'run the two steps' }], mode: 'input' });
    expect(items[1]).toMatchObject({ callId: 'call_1', toolName: 'exec_command', arguments: { cmd: 'echo step-0' }, exitCode: 0, isError: false, status: 'completed' });
    expect((items[1] as Extract<Item, { kind: 'tool_call' }>).output).toContain('step-0');
    expect(items[2]).toMatchObject({ callId: 'call_2', arguments: { cmd: 'echo step-1' }, exitCode: 0 });
    expect(items[3]).toMatchObject({ text: 'Done after 2 steps.', model: 'mock/gpt-5.5' });
    const turns = metadata.flatMap((entry) => (entry.turn ? [entry.turn] : []));
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ status: 'completed', steps: 3, usage: { inputTokens: 300, outputTokens: 30, totalTokens: 330 } });
    expect(new Set(items.map((item) => item.turnId))).toEqual(new Set([turns[0]!.id]));
    expect(metadata[0]?.conversation).toMatchObject({ title: 'run the two steps', workLocation: [{ executor: 'local', cwd: '/tmp/project' }] });
    expect(metadata[1]?.session).toMatchObject({ model: 'mock/mock-model', agent: 'default', status: 'idle' });
    // The converted archive passes the same checks as an exported one.
    expect(() => parseArchive(serializeArchive(archive))).not.toThrow();
  });

  it('maps reasoning, AGENTS.md instructions, custom tool calls, a call left without output and an aborted turn', () => {
    const line = (second: number, type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: `2026-11-30T12:00:${String(second).padStart(2, '0')}.000Z`, type, payload });
    const rollout = [
      line(0, 'session_meta', { id: 'thread-1', cwd: '/home/user/project', model_provider: 'openai' }),
      line(1, 'turn_context', { model: 'gpt-5.5' }),
      line(1, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      line(2, 'response_item', { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Codex rules' }] }),
      line(2, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<user_instructions>Use tabs.</user_instructions>' }] }),
      line(3, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'patch it' }] }),
      line(4, 'response_item', { type: 'reasoning', summary: [{ type: 'summary_text', text: 'First part.' }, { type: 'summary_text', text: 'Second part.' }], content: null, encrypted_content: 'gAAAA' }),
      line(5, 'response_item', { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' }),
      line(6, 'response_item', { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Success' }),
      line(7, 'response_item', { type: 'function_call', call_id: 'call_x', name: 'exec_command', arguments: '{"cmd":"sleep 100"}' }),
      line(9, 'event_msg', { type: 'turn_aborted', reason: 'interrupted' }),
    ].join('\n');
    const archive = convertCodexRollout(rollout, { model: 'mock/mock-model', agent: 'default' });
    const items = archive.streams.find((stream) => stream.stream !== 'metadata')!.entries.map((entry) => entry.value as Item);
    expect(items.map((item) => item.kind)).toEqual(['instruction', 'user_message', 'reasoning', 'tool_call', 'tool_call']);
    expect(items[0]).toMatchObject({ source: 'agents_md', body: '<user_instructions>Use tabs.</user_instructions>' });
    expect(items[2]).toMatchObject({ summary: 'First part.\n\nSecond part.', summaryParts: ['First part.', 'Second part.'], providerData: { codex: { encryptedContent: 'gAAAA' } } });
    expect(items[2]).not.toHaveProperty('model');
    expect(items[3]).toMatchObject({ toolName: 'apply_patch', arguments: '*** Begin Patch\n*** End Patch', output: 'Success', status: 'completed', isError: false, durationMs: 1000 });
    expect(items[4]).toMatchObject({ toolName: 'exec_command', arguments: { cmd: 'sleep 100' }, status: 'interrupted', isError: true, output: '' });
    const turns = archive.streams[0]!.entries.flatMap((entry) => ((entry.value as { turn?: Turn }).turn ? [(entry.value as { turn: Turn }).turn] : []));
    expect(turns.map((turn) => turn.status)).toEqual(['interrupted']);
    expect(turns[0]?.completedAt).toBe(Date.parse('2026-11-30T12:00:09.000Z'));
    expect(() => parseArchive(serializeArchive(archive))).not.toThrow();
  });

  it("reads Codex 0.171's project instructions and environment, sent as parts of one user message, as context and not as the user's words", () => {
    const line = (second: number, type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: `2026-11-30T12:00:${String(second).padStart(2, '0')}.000Z`, type, payload });
    const rollout = [
      line(0, 'session_meta', { id: 'thread-2', cwd: '/home/user/project', model_provider: 'openai' }),
      line(1, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      line(2, 'response_item', {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: '# AGENTS.md instructions for /home/user/project\n\n<INSTRUCTIONS>\nAlways use tabs.\n</INSTRUCTIONS>' },
          { type: 'input_text', text: '<environment_context>\n  <cwd>/home/user/project</cwd>\n</environment_context>' },
        ],
      }),
      line(3, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'please do it' }] }),
      line(4, 'response_item', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }),
      line(5, 'event_msg', { type: 'task_complete' }),
    ].join('\n');
    const archive = convertCodexRollout(rollout, { model: 'mock/mock-model', agent: 'default' });
    const items = archive.streams.find((stream) => stream.stream !== 'metadata')!.entries.map((entry) => entry.value as Item);
    expect(items.map((item) => item.kind)).toEqual(['instruction', 'user_message', 'assistant_message']);
    expect(items[0]).toMatchObject({ source: 'agents_md', name: 'AGENTS.md' });
    expect((items[0] as Extract<Item, { kind: 'instruction' }>).body).toContain('Always use tabs.');
    expect(items[1]).toMatchObject({ content: [{ type: 'text', text: 'please do it' }] });
    const conversation = archive.streams[0]!.entries.map((entry) => entry.value as { conversation?: { title: string } }).find((value) => value.conversation)?.conversation;
    expect(conversation?.title).toBe('please do it');
  });

  it('keeps the images of user messages (data URLs and URLs) in their place among the texts', () => {
    const line = (second: number, type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: `2026-11-30T12:00:${String(second).padStart(2, '0')}.000Z`, type, payload });
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const rollout = [
      line(0, 'session_meta', { id: 'thread-3', cwd: '/home/user/project', model_provider: 'openai' }),
      line(1, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      line(2, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'what is ' }, { type: 'input_text', text: 'in this picture?' }, { type: 'input_image', image_url: png }, { type: 'input_text', text: 'and this one' }, { type: 'input_image', image_url: 'https://example.com/b.jpg' }] }),
      line(3, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_image', image_url: png }] }),
      line(4, 'response_item', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'A cat.' }] }),
      line(5, 'event_msg', { type: 'task_complete' }),
    ].join('\n');
    const archive = convertCodexRollout(rollout, { model: 'mock/mock-model', agent: 'default' });
    const items = archive.streams.find((stream) => stream.stream !== 'metadata')!.entries.map((entry) => entry.value as Item);
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'user_message', 'assistant_message']);
    expect(items[0]).toMatchObject({ content: [{ type: 'text', text: 'what is in this picture?' }, { type: 'image', url: png, mediaType: 'image/png' }, { type: 'text', text: 'and this one' }, { type: 'image', url: 'https://example.com/b.jpg' }] });
    expect((items[0] as Extract<Item, { kind: 'user_message' }>).content[3]).not.toHaveProperty('mediaType');
    expect(items[1]).toMatchObject({ content: [{ type: 'image', url: png, mediaType: 'image/png' }] });
    expect(() => parseArchive(serializeArchive(archive))).not.toThrow();
  });

  it('marks failed commands and patches from their end events, before or after the output, or from the output header', () => {
    const line = (second: number, type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: `2026-11-30T12:00:${String(second).padStart(2, '0')}.000Z`, type, payload });
    const rollout = [
      line(0, 'session_meta', { id: 'thread-4', cwd: '/home/user/project', model_provider: 'openai' }),
      line(1, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      line(2, 'response_item', { type: 'function_call', call_id: 'call_a', name: 'shell', arguments: '{"command":["false"]}' }),
      line(3, 'event_msg', { type: 'exec_command_end', call_id: 'call_a', exit_code: 2, duration: { secs: 1, nanos: 500_000_000 } }),
      line(3, 'response_item', { type: 'function_call_output', call_id: 'call_a', output: 'failed' }),
      line(4, 'response_item', { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' }),
      line(5, 'response_item', { type: 'custom_tool_call_output', call_id: 'call_p', output: 'apply_patch verification failed: Failed to find expected lines' }),
      line(5, 'event_msg', { type: 'patch_apply_end', call_id: 'call_p', stdout: '', stderr: 'Failed to find expected lines', success: false }),
      line(6, 'response_item', { type: 'function_call', call_id: 'call_h', name: 'exec_command', arguments: '{"cmd":"exit 3"}' }),
      line(7, 'response_item', { type: 'function_call_output', call_id: 'call_h', output: 'Chunk ID: ab12\nWall time: 0.0100 seconds\nProcess exited with code 3\nOutput:\n' }),
      line(8, 'response_item', { type: 'function_call', call_id: 'call_o', name: 'exec_command', arguments: '{"cmd":"cat log"}' }),
      line(9, 'response_item', { type: 'function_call_output', call_id: 'call_o', output: 'Chunk ID: cd34\nWall time: 0.0100 seconds\nProcess exited with code 0\nOutput:\nProcess exited with code 1\n' }),
      line(10, 'event_msg', { type: 'task_complete' }),
    ].join('\n');
    const archive = convertCodexRollout(rollout, { model: 'mock/mock-model', agent: 'default' });
    const calls = archive.streams.find((stream) => stream.stream !== 'metadata')!.entries.map((entry) => entry.value as Extract<Item, { kind: 'tool_call' }>);
    expect(calls.map((call) => [call.callId, call.isError, call.exitCode])).toEqual([
      ['call_a', true, 2],
      ['call_p', true, undefined],
      ['call_h', true, 3],
      ['call_o', false, 0],
    ]);
    expect(calls[0]?.durationMs).toBe(1500);
    expect(() => parseArchive(serializeArchive(archive))).not.toThrow();
  });

  it("keeps a tool's images as placeholders, the provider's web search, a refusal and Codex's compaction summary", () => {
    const line = (second: number, type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: `2026-11-30T12:00:${String(second).padStart(2, '0')}.000Z`, type, payload });
    const rollout = [
      line(0, 'session_meta', { id: 'thread-5', cwd: '/home/user/project', model_provider: 'openai' }),
      line(1, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      line(2, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look at the screenshot' }] }),
      line(3, 'response_item', { type: 'function_call', call_id: 'call_v', name: 'view_image', arguments: '{"path":"shot.png"}' }),
      line(4, 'response_item', { type: 'function_call_output', call_id: 'call_v', output: [{ type: 'input_text', text: 'shot.png: ' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAAAAAA' }] }),
      line(5, 'response_item', { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'node 20 release' } }),
      line(6, 'response_item', { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }),
      line(7, 'compacted', { message: 'The user asked about a screenshot; it shows a login page.' }),
      line(8, 'event_msg', { type: 'task_complete' }),
    ].join('\n');
    const archive = convertCodexRollout(rollout, { model: 'mock/mock-model', agent: 'default' });
    const items = archive.streams.find((stream) => stream.stream !== 'metadata')!.entries.map((entry) => entry.value as Item);
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'tool_call', 'tool_call', 'assistant_message', 'context_summary']);
    expect(items[1]).toMatchObject({ toolName: 'view_image', output: 'shot.png: [image image/png, 6 bytes]' });
    expect(items[2]).toMatchObject({ toolName: 'web_search', arguments: { type: 'search', query: 'node 20 release' }, output: 'searched the web for: node 20 release', isError: false });
    expect(items[3]).toMatchObject({ text: 'I cannot help with that.' });
    expect(items[4]).toMatchObject({ text: 'The user asked about a screenshot; it shows a login page.', lastItemId: items[3]?.id });
    expect(() => parseArchive(serializeArchive(archive))).not.toThrow();
  });

  it('refuses text that is not a rollout, naming the line', () => {
    const options = { model: 'mock/mock-model', agent: 'default' };
    expect(() => convertCodexRollout('{"type":"event_msg","payload":{}}\n', options)).toThrow('no session_meta line: this is not a Codex session rollout');
    expect(() => convertCodexRollout('{"timestamp":"x","type":"session_meta","payload":{}}\nnot json\n', options)).toThrow(/^line 2: not valid JSON/);
    expect(() => convertCodexRollout('{"type":"session_meta","payload":{"cwd":"relative"}}\n', options)).toThrow(CodexRolloutError);
  });
});

/**
 * `openvaala acp` as a real process driven by the ACP SDK's client over its stdio, against a
 * server started by the test and the mock provider over HTTP. Every message on the wire is
 * checked against the SDK's JSON Schema (see `acp-harness.ts`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../helpers/processes.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../../helpers/environment.js';
import { chunkText, editorCapabilities, startAcp, type AcpProcess } from './acp-harness.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
const processes: AcpProcess[] = [];

afterEach(async () => {
  for (const running of processes.splice(0)) await running.stop();
  await serve?.stop();
  serve = undefined;
  await environment?.dispose();
  environment = undefined;
});

async function start(script: string, agentsYaml?: string, providersYaml?: (baseURL: string) => string): Promise<TestEnvironment> {
  environment = await createTestEnvironment(script, providersYaml);
  if (agentsYaml) writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agentsYaml);
  serve = await startServe(environment);
  return environment;
}

function launch(env: TestEnvironment, handlers: Parameters<typeof startAcp>[1] = {}): AcpProcess {
  const running = startAcp(env, handlers);
  processes.push(running);
  return running;
}

async function initialize(running: AcpProcess, files = false): Promise<acp.InitializeResponse> {
  return running.agent.request('initialize', { protocolVersion: 1, clientCapabilities: editorCapabilities(files), clientInfo: { name: 'test-editor', version: '1.0.0' } });
}

function updatesOf<K extends acp.SessionUpdate['sessionUpdate']>(running: AcpProcess, kind: K): Extract<acp.SessionUpdate, { sessionUpdate: K }>[] {
  return running.updates.map((notification) => notification.update).filter((update): update is Extract<acp.SessionUpdate, { sessionUpdate: K }> => update.sessionUpdate === kind);
}

const PATCH = '*** Begin Patch\\n*** Update File: notes.txt\\n@@\\n first line\\n-old words\\n+new words\\n*** End Patch';

describe('openvaala acp', { timeout: 120_000 }, () => {
  it('initializes, runs a prompt whose turn runs a command and a patch that asks permission, and streams it all as session updates', async () => {
    const env = await start(
      `
responses:
  - text: "Looking around."
    toolCalls: [{ name: exec_command, arguments: { command: "echo hello-from-acp" } }]
  - toolCalls: [{ name: apply_patch, arguments: { patch: "${PATCH}" } }]
  - text: "All done."
`,
      'agents:\n  careful: { default: true, description: "asks before editing", approvals: { default: allow, rules: [{ tool: apply_patch, decision: ask }] } }\n  quick: { description: "never asks" }\n',
    );
    writeFileSync(path.join(env.workDir, 'notes.txt'), 'first line\nold words\nlast line\n');
    const asked: acp.RequestPermissionRequest[] = [];
    const running = launch(env, {
      requestPermission: async (params) => {
        asked.push(params);
        return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
      },
    });
    const initialized = await initialize(running);
    expect(initialized.protocolVersion).toBe(1);
    expect(initialized.agentCapabilities).toMatchObject({ loadSession: true, promptCapabilities: { image: true, embeddedContext: true }, sessionCapabilities: { list: {}, resume: {} } });
    expect(initialized.agentCapabilities?.promptCapabilities?.audio).toBeUndefined();

    const created = await running.agent.request('session/new', { cwd: env.workDir, mcpServers: [] });
    expect(created.sessionId).toMatch(/^conv_/);
    expect(created.modes).toEqual({ currentModeId: 'careful', availableModes: [{ id: 'careful', name: 'careful', description: 'asks before editing' }, { id: 'quick', name: 'quick', description: 'never asks' }] });
    expect(created.configOptions?.[0]).toMatchObject({ id: 'model', type: 'select', currentValue: 'mock/mock-model' });

    const response = await running.agent.request('session/prompt', { sessionId: created.sessionId, prompt: [{ type: 'text', text: 'tidy the notes' }] });
    expect(response.stopReason).toBe('end_turn');
    expect(readFileSync(path.join(env.workDir, 'notes.txt'), 'utf8')).toBe('first line\nnew words\nlast line\n');

    // The command: announced as an execute call, finished with its output.
    const starts = updatesOf(running, 'tool_call');
    const command = starts.find((update) => update.kind === 'execute');
    expect(command).toMatchObject({ title: 'echo hello-from-acp', status: 'in_progress', rawInput: { command: 'echo hello-from-acp' } });
    const commandUpdates = updatesOf(running, 'tool_call_update').filter((update) => update.toolCallId === command?.toolCallId);
    // Output streams in while the command runs, then the call ends with it.
    expect(commandUpdates[0]).toMatchObject({ content: [{ type: 'content', content: { type: 'text', text: expect.stringContaining('hello-from-acp') } }] });
    expect(commandUpdates[0]?.status).toBeUndefined();
    const commandEnd = commandUpdates.at(-1);
    expect(commandEnd?.status).toBe('completed');
    expect(JSON.stringify(commandEnd?.content)).toContain('hello-from-acp');

    // The patch: an edit, asked about with the server's options, its diff in the update.
    const edit = starts.find((update) => update.kind === 'edit');
    expect(edit?.locations).toEqual([{ path: path.join(env.workDir, 'notes.txt') }]);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.toolCall).toMatchObject({ toolCallId: edit?.toolCallId, kind: 'edit', status: 'pending' });
    expect(asked[0]?.options.map((option) => [option.optionId, option.kind])).toEqual([
      ['allow_once', 'allow_once'],
      ['allow_session', 'allow_always'],
      ['deny', 'reject_once'],
      ['deny_interrupt', 'reject_once'],
    ]);
    const editUpdates = updatesOf(running, 'tool_call_update').filter((update) => update.toolCallId === edit?.toolCallId);
    // Allowed: it runs; then it is done.
    expect(editUpdates.map((update) => update.status)).toEqual(['in_progress', 'completed']);
    const editEnd = editUpdates.at(-1);
    expect(editEnd?.content).toEqual([{ type: 'diff', path: path.join(env.workDir, 'notes.txt'), oldText: 'first line\nold words\nlast line', newText: 'first line\nnew words\nlast line' }]);

    expect(chunkText(running.updates, 'agent_message_chunk')).toBe('Looking around.All done.');
    // The editor shows its own prompt already: it is not sent back.
    expect(updatesOf(running, 'user_message_chunk')).toEqual([]);
    // The tool call is announced before the editor is asked about it.
    const order = running.tap.messages.map((entry) => (entry.message.method === 'session/request_permission' ? 'ask' : (entry.message.params as { update?: { sessionUpdate?: string; toolCallId?: string } } | undefined)?.update?.toolCallId === edit?.toolCallId ? 'edit-update' : 'other'));
    expect(order.indexOf('edit-update')).toBeLessThan(order.indexOf('ask'));
    expect(running.tap.problems).toEqual([]);
  });

  it('cancels a running turn: the prompt answers stopReason cancelled', async () => {
    const env = await start(`
responses:
  - deltas: ["Thinking ", "about ", "it"]
    holds: [{ afterDeltas: 1, gate: hold-turn }]
`);
    const running = launch(env);
    await initialize(running);
    const { sessionId } = await running.agent.request('session/new', { cwd: env.workDir, mcpServers: [] });
    const prompt = running.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'take your time' }] });
    await env.mock.waitForHold('hold-turn', 30_000);
    // The mock holds after sending its first delta, which may still be on its way through the
    // server and the adapter: the cancel comes once the editor has seen it.
    await expect.poll(() => chunkText(running.updates, 'agent_message_chunk')).toBe('Thinking ');
    await running.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    expect(chunkText(running.updates, 'agent_message_chunk')).toBe('Thinking ');
    expect(running.tap.problems).toEqual([]);
  });

  it('loads a previous session: the history arrives as updates before the load answer', async () => {
    const env = await start(`
responses:
  - reasoning: "Let me look."
    text: "First I check."
    toolCalls: [{ name: exec_command, arguments: { command: "echo from-history" } }]
  - text: "History ends here."
`);
    const first = launch(env);
    await initialize(first);
    const { sessionId } = await first.agent.request('session/new', { cwd: env.workDir, mcpServers: [] });
    expect((await first.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember this prompt' }] })).stopReason).toBe('end_turn');
    await first.stop();

    const second = launch(env);
    await initialize(second);
    const listed = await second.agent.request('session/list', { cwd: env.workDir });
    expect(listed.sessions).toEqual([expect.objectContaining({ sessionId, cwd: env.workDir, title: 'remember this prompt' })]);
    const loaded = await second.agent.request('session/load', { sessionId, cwd: env.workDir, mcpServers: [] });
    const answerIndex = second.tap.messages.findIndex((entry) => entry.from === 'agent' && (entry.message.result as { modes?: unknown } | undefined)?.modes !== undefined);
    const lastUpdateIndex = second.tap.messages.findLastIndex((entry) => entry.message.method === 'session/update');
    expect(lastUpdateIndex).toBeGreaterThan(-1);
    expect(lastUpdateIndex).toBeLessThan(answerIndex);
    expect(loaded.modes?.currentModeId).toBeDefined();
    expect(chunkText(second.updates, 'user_message_chunk')).toBe('remember this prompt');
    expect(chunkText(second.updates, 'agent_thought_chunk')).toBe('Let me look.');
    expect(chunkText(second.updates, 'agent_message_chunk')).toBe('First I check.History ends here.');
    const call = updatesOf(second, 'tool_call').find((update) => update.kind === 'execute');
    expect(call?.title).toBe('echo from-history');
    expect(updatesOf(second, 'tool_call_update').find((update) => update.toolCallId === call?.toolCallId)?.status).toBe('completed');
    // Resuming sends nothing of the history.
    const third = launch(env);
    await initialize(third);
    await third.agent.request('session/resume', { sessionId, cwd: env.workDir });
    expect(third.updates).toEqual([]);
    for (const running of [second, third]) expect(running.tap.problems).toEqual([]);
  });

  it('reads files through the editor, so the agent sees the unsaved buffer', async () => {
    const env = await start(`
responses:
  - toolCalls: [{ name: read_file, arguments: { path: "draft.txt" } }]
  - text: "I read it."
`);
    writeFileSync(path.join(env.workDir, 'draft.txt'), 'saved on disk\n');
    const reads: acp.ReadTextFileRequest[] = [];
    const running = launch(env, {
      readTextFile: async (params) => {
        reads.push(params);
        return { content: 'UNSAVED BUFFER TEXT\n' };
      },
    });
    await initialize(running, true);
    const { sessionId } = await running.agent.request('session/new', { cwd: env.workDir, mcpServers: [] });
    expect((await running.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read the draft' }] })).stopReason).toBe('end_turn');
    expect(reads).toEqual([{ sessionId, path: path.join(env.workDir, 'draft.txt') }]);
    const sent = JSON.stringify(env.mock.requests[1]?.body);
    expect(sent).toContain('UNSAVED BUFFER TEXT');
    expect(sent).not.toContain('saved on disk');
    expect(updatesOf(running, 'tool_call').find((update) => update.kind === 'read')?.locations).toEqual([{ path: path.join(env.workDir, 'draft.txt') }]);
    expect(running.tap.problems).toEqual([]);
  });

  it('sends prompt content as input parts and changes the mode and the model', async () => {
    const env = await start(
      `responses:\n  - text: "seen"\n`,
      'agents:\n  builder: { default: true }\n  reviewer: { description: "reads only" }\n',
      (baseURL) => `providers:\n  mock:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { mock-model: { contextWindow: 32000 }, thinker: { contextWindow: 64000, reasoning: true } }\ndefaultModel: mock/mock-model\n`,
    );
    const running = launch(env);
    await initialize(running);
    const created = await running.agent.request('session/new', { cwd: env.workDir, mcpServers: [] });
    const sessionId = created.sessionId;
    // A model that does not reason has no effort option.
    expect(created.configOptions?.map((option) => option.id)).toEqual(['model']);
    await running.agent.request('session/set_mode', { sessionId, modeId: 'reviewer' });
    const switched = await running.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'mock/thinker' });
    expect(switched.configOptions[0]).toMatchObject({ id: 'model', currentValue: 'mock/thinker' });
    expect(switched.configOptions[1]).toMatchObject({ id: 'reasoning_effort', currentValue: 'default' });
    const options = await running.agent.request('session/set_config_option', { sessionId, configId: 'reasoning_effort', value: 'high' });
    expect(options.configOptions[1]).toMatchObject({ id: 'reasoning_effort', currentValue: 'high' });
    const prompt: acp.ContentBlock[] = [
      { type: 'text', text: 'look at these' },
      { type: 'resource_link', name: 'main.ts', uri: `file://${env.workDir}/main.ts` },
      { type: 'resource', resource: { uri: `file://${env.workDir}/open.ts`, text: 'const open = "in the editor";' } },
      { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
    ];
    expect((await running.agent.request('session/prompt', { sessionId, prompt })).stopReason).toBe('end_turn');
    const body = JSON.stringify(env.mock.requests[0]?.body);
    expect(body).toContain('look at these');
    expect(body).toContain(`[attached file: ${env.workDir}/main.ts]`);
    expect(body).toContain('const open = \\"in the editor\\";');
    expect(body).toContain('data:image/png;base64,iVBORw0KGgo=');
    expect(body).toContain('"model":"thinker"');
    expect(body).toMatch(/"effort":"high"/);
    // The context in use after the call, against the model's window.
    expect(updatesOf(running, 'usage_update').at(-1)).toMatchObject({ size: 64000, used: expect.any(Number) });
    const { session } = await (await import('../../../src/client/runtime-client.js')).RuntimeClient.connect({ url: serve!.info.url, token: serve!.info.token, clientName: 'check' }).then(async (client) => {
      const got = await client.request('conversation/get', { conversationId: sessionId });
      await client.close();
      return { session: got.sessions[0] };
    });
    expect(session?.agent).toBe('reviewer');
    expect(running.tap.problems).toEqual([]);
  });

  it('refuses what it cannot do with a clear error', async () => {
    const env = await start(`responses: []\n`);
    const running = launch(env);
    await initialize(running);
    const { sessionId } = await running.agent.request('session/new', { cwd: env.workDir, mcpServers: [] });
    await expect(running.agent.request('session/prompt', { sessionId, prompt: [{ type: 'audio', mimeType: 'audio/wav', data: 'AAAA' }] })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('prompt[0]: audio content is not supported') });
    await expect(running.agent.request('session/prompt', { sessionId, prompt: [] })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('prompt: empty') });
    await expect(running.agent.request('session/load', { sessionId: 'conv_doesnotexist', cwd: env.workDir, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
    await expect(running.agent.request('session/set_config_option', { sessionId, configId: 'colour', value: 'blue' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('unknown option "colour"') });
    await expect(running.agent.request('session/set_config_option', { sessionId, configId: 'reasoning_effort', value: 'extreme' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('"extreme" is not a reasoning effort') });
    await expect(running.agent.request('session/set_mode', { sessionId, modeId: 'no-such-agent' })).rejects.toMatchObject({ message: expect.stringContaining('no-such-agent') });
    await expect(running.agent.request('session/new', { cwd: path.join(env.root, 'nowhere'), mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(running.agent.request('session/new', { cwd: env.workDir, mcpServers: [{ type: 'sse', name: 'events', url: 'http://127.0.0.1:9/sse', headers: [] }] })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('mcpServers[0] "events": SSE servers are not supported') });
    expect(running.tap.problems).toEqual([]);
  });

  it('fails a call the editor denies, and answers a question of the agent with the next prompt', async () => {
    const env = await start(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "touch denied.txt" } }]
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which colour?", choices: ["red", "blue"] } }]
  - text: "Blue it is."
`,
      'agents:\n  careful: { default: true, approvals: { default: allow, rules: [{ tool: exec_command, decision: ask }] } }\n',
    );
    const running = launch(env, { requestPermission: async () => ({ outcome: { outcome: 'selected', optionId: 'deny' } }) });
    await initialize(running);
    const { sessionId } = await running.agent.request('session/new', { cwd: env.workDir, mcpServers: [] });
    const first = running.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'make a file, then ask me' }] });
    const asked = (): boolean => chunkText(running.updates, 'agent_message_chunk').includes('[input requested] Which colour?');
    await until(asked, 30_000, 'the question to reach the editor');
    expect(chunkText(running.updates, 'agent_message_chunk')).toContain('Choices: red | blue');
    const second = await running.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'blue' }] });
    expect(second.stopReason).toBe('end_turn');
    expect((await first).stopReason).toBe('end_turn');
    const command = updatesOf(running, 'tool_call').find((update) => update.kind === 'execute');
    const commandUpdates = updatesOf(running, 'tool_call_update').filter((update) => update.toolCallId === command?.toolCallId);
    expect(commandUpdates.map((update) => update.status)).toEqual(['failed', 'failed']);
    expect(JSON.stringify(env.mock.requests[2]?.body)).toContain('blue');
    expect(chunkText(running.updates, 'agent_message_chunk')).toContain('Blue it is.');
    expect(running.tap.problems).toEqual([]);
  });
});

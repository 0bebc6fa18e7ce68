/**
 * A session started through `openvaala acp` is an ordinary conversation: a runtime-protocol
 * client subscribed to it sees the turn live, and steering input it sends while the turn runs
 * reaches the editor as a user message chunk.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../../src/client/runtime-client.js';
import type { AnyNotification } from '../../../src/protocol/index.js';
import { until } from '../../helpers/processes.js';
import { createTestEnvironment, startServe, stopBackgroundServer, type ServeProcess, type TestEnvironment } from '../../helpers/environment.js';
import { findServer } from '../../../src/cli/server-discovery.js';
import { chunkText, editorCapabilities, startAcp, type AcpProcess } from './acp-harness.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
let running: AcpProcess | undefined;
let observer: RuntimeClient | undefined;

afterEach(async () => {
  await observer?.close();
  observer = undefined;
  await running?.stop();
  running = undefined;
  await serve?.stop();
  serve = undefined;
  if (environment) await stopBackgroundServer(environment);
  await environment?.dispose();
  environment = undefined;
});

describe('openvaala acp with other clients', { timeout: 120_000 }, () => {
  it('is seen live by a runtime client, whose steering input the editor sees as a user message chunk', async () => {
    environment = await createTestEnvironment(`
responses:
  - deltas: ["Working ", "on it."]
    holds: [{ afterDeltas: 1, gate: steer-now }]
    toolCalls: [{ name: exec_command, arguments: { command: "echo step" } }]
  - text: "Noted the steer."
`);
    serve = await startServe(environment);
    running = startAcp(environment);
    await running.agent.request('initialize', { protocolVersion: 1, clientCapabilities: editorCapabilities(false), clientInfo: { name: 'test-editor', version: '1.0.0' } });
    const { sessionId } = await running.agent.request('session/new', { cwd: environment.workDir, mcpServers: [] });
    const prompt = running.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'start the work' }] });
    await environment.mock.waitForHold('steer-now', 30_000);

    observer = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'observer' });
    const seen: AnyNotification[] = [];
    observer.onNotification((event) => seen.push(event));
    const subscribed = await observer.request('conversation/subscribe', { conversationId: sessionId });
    // The turn the editor started runs now, and the observer has its prompt and its text so far.
    expect(subscribed.sessions[0]?.status).toBe('running');
    await until(() => seen.some((event) => event.method === 'item/completed' && event.params.item.kind === 'user_message'), 10_000, 'the prompt in the replay');
    const steered = await observer.request('session/input', { conversationId: sessionId, input: 'also check the tests', mode: 'steer' });
    expect(steered.turnId).toBe(subscribed.sessions[0]?.activeTurnId);
    environment.mock.release('steer-now');

    expect((await prompt).stopReason).toBe('end_turn');
    expect(chunkText(running.updates, 'user_message_chunk')).toBe('also check the tests');
    expect(chunkText(running.updates, 'agent_message_chunk')).toBe('Working on it.Noted the steer.');
    // The steering came after the text streamed before it, and before the answer to it.
    const kinds = running.updates.map((notification: acp.SessionNotification) => notification.update.sessionUpdate);
    expect(kinds.indexOf('user_message_chunk')).toBeGreaterThan(kinds.indexOf('agent_message_chunk'));
    expect(JSON.stringify(environment.mock.requests[1]?.body)).toContain('also check the tests');
    // The observer followed the turn live to its end.
    await until(() => seen.some((event) => event.method === 'turn/completed'), 10_000, 'the observer to see the turn end');
    expect(seen.some((event) => event.method === 'item/delta' && event.params.delta.text === 'on it.')).toBe(true);
    expect(running.tap.problems).toEqual([]);
  });

  it('starts the server when none runs, gives the editor MCP servers to the conversation, and exits 0 when the editor closes', async () => {
    environment = await createTestEnvironment(`responses: []\n`);
    expect(await findServer(environment.paths)).toBeUndefined();
    running = startAcp(environment);
    await running.agent.request('initialize', { protocolVersion: 1, clientCapabilities: editorCapabilities(false), clientInfo: { name: 'test-editor', version: '1.0.0' } });
    const { sessionId } = await running.agent.request('session/new', {
      cwd: environment.workDir,
      mcpServers: [{ name: 'files', command: 'mcp-files', args: ['--root', environment.workDir], env: [{ name: 'FILES_MODE', value: 'read' }] }],
    });
    const server = await findServer(environment.paths);
    expect(server).toBeDefined();
    observer = await RuntimeClient.connect({ url: server!.url, token: server!.token, clientName: 'observer' });
    const { conversation } = await observer.request('conversation/get', { conversationId: sessionId });
    expect(conversation.workLocation).toEqual([{ executor: 'local', cwd: environment.workDir }]);
    // Literal values are redacted for clients; the entry itself is the editor's.
    expect(conversation.mcpServers).toEqual({ files: { transport: 'stdio', command: 'mcp-files', args: ['--root', environment.workDir], env: { FILES_MODE: '***' } } });
    const tap = running.tap;
    const stderr = running.stderr;
    const exitCode = await running.stop();
    running = undefined;
    expect(exitCode).toBe(0);
    // The editor left: nothing to report about the server.
    expect(stderr()).not.toContain('closed the connection');
    expect(tap.problems).toEqual([]);
  });

  it('ends with exit code 1, saying why, when the server goes away', async () => {
    environment = await createTestEnvironment(`responses: []\n`);
    serve = await startServe(environment);
    running = startAcp(environment);
    await running.agent.request('initialize', { protocolVersion: 1, clientCapabilities: editorCapabilities(false), clientInfo: { name: 'test-editor', version: '1.0.0' } });
    await running.agent.request('session/new', { cwd: environment.workDir, mcpServers: [] });
    const exited = new Promise<number | null>((resolve) => running!.child.once('exit', (code) => resolve(code)));
    await serve.stop();
    serve = undefined;
    expect(await exited).toBe(1);
    expect(running.stderr()).toContain('openvaala acp: the runtime server closed the connection');
  });

  it('asks the editor about a call that was already waiting for approval when it opened the session', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo approved-later" } }]
  - text: "ran it"
`);
    writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  careful: { default: true, approvals: { default: ask } }\n');
    serve = await startServe(environment);
    observer = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'observer', capabilities: { approvals: false } });
    const seen: AnyNotification[] = [];
    observer.onNotification((event) => seen.push(event));
    const { conversation } = await observer.request('conversation/create', { cwd: environment.workDir });
    await observer.request('conversation/subscribe', { conversationId: conversation.id });
    await observer.request('session/input', { conversationId: conversation.id, input: 'run it' });
    await until(() => seen.some((event) => event.method === 'approval/requested'), 20_000, 'the call to wait for approval');

    const asked: acp.RequestPermissionRequest[] = [];
    running = startAcp(environment, {
      requestPermission: async (params) => {
        asked.push(params);
        return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
      },
    });
    await running.agent.request('initialize', { protocolVersion: 1, clientCapabilities: editorCapabilities(false), clientInfo: { name: 'test-editor', version: '1.0.0' } });
    await running.agent.request('session/resume', { sessionId: conversation.id, cwd: environment.workDir });
    await until(() => seen.some((event) => event.method === 'turn/completed'), 20_000, 'the turn to end');
    expect(asked.map((request) => request.toolCall.title)).toEqual(['echo approved-later']);
    const resolved = seen.find((event) => event.method === 'approval/resolved');
    expect(resolved?.params).toMatchObject({ decision: 'allow_once', decidedBy: 'client:openvaala-acp' });
    expect(JSON.stringify(environment.mock.requests[1]?.body)).toContain('approved-later');
    expect(running.tap.problems).toEqual([]);
  });
});

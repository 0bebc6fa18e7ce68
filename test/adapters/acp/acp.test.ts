/**
 * `openvaala acp` as a real process driven by the ACP SDK's client over its stdio, against a
 * server started by the test and the mock provider over HTTP. Every message on the wire is
 * checked against the SDK's JSON Schema (see `acp-harness.ts`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
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

async function start(script: string, agentsYaml?: string): Promise<TestEnvironment> {
  environment = await createTestEnvironment(script);
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
    const commandEnd = updatesOf(running, 'tool_call_update').find((update) => update.toolCallId === command?.toolCallId);
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
    const editEnd = updatesOf(running, 'tool_call_update').find((update) => update.toolCallId === edit?.toolCallId);
    expect(editEnd?.status).toBe('completed');
    expect(editEnd?.content).toEqual([{ type: 'diff', path: path.join(env.workDir, 'notes.txt'), oldText: 'first line\nold words\nlast line', newText: 'first line\nnew words\nlast line' }]);

    expect(chunkText(running.updates, 'agent_message_chunk')).toBe('Looking around.All done.');
    // The editor shows its own prompt already: it is not sent back.
    expect(updatesOf(running, 'user_message_chunk')).toEqual([]);
    // The tool call is announced before the editor is asked about it.
    const order = running.tap.messages.map((entry) => (entry.message.method === 'session/request_permission' ? 'ask' : (entry.message.params as { update?: { sessionUpdate?: string; toolCallId?: string } } | undefined)?.update?.toolCallId === edit?.toolCallId ? 'edit-update' : 'other'));
    expect(order.indexOf('edit-update')).toBeLessThan(order.indexOf('ask'));
    expect(running.tap.problems).toEqual([]);
  });
});

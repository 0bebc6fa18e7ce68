/**
 * `openvaala acp` with an editor that offers terminals: `exec_command` runs in the editor's
 * terminal (ACP `terminal/*`), embedded in its tool call, and the stop button kills it there.
 * Every message on the wire is checked against the SDK's JSON Schema (see `acp-harness.ts`).
 */
import type * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../helpers/processes.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../../helpers/environment.js';
import { editorCapabilities, startAcp, type AcpProcess } from './acp-harness.js';
import { TestEditorTerminals } from './test-editor-terminals.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
let running: AcpProcess | undefined;
let terminals: TestEditorTerminals | undefined;

afterEach(async () => {
  terminals?.dispose();
  terminals = undefined;
  await running?.stop();
  running = undefined;
  await serve?.stop();
  serve = undefined;
  await environment?.dispose();
  environment = undefined;
});

/** A server scripted with `script`, and `openvaala acp` connected to an editor that offers terminals. */
async function startWithTerminals(script: string): Promise<{ env: TestEnvironment; acpProcess: AcpProcess; editorTerminals: TestEditorTerminals; sessionId: string }> {
  environment = await createTestEnvironment(script);
  serve = await startServe(environment);
  terminals = new TestEditorTerminals();
  running = startAcp(environment, { terminals: terminals.handlers() });
  await running.agent.request('initialize', { protocolVersion: 1, clientCapabilities: editorCapabilities(false, true), clientInfo: { name: 'test-editor', version: '1.0.0' } });
  const { sessionId } = await running.agent.request('session/new', { cwd: environment.workDir, mcpServers: [] });
  return { env: environment, acpProcess: running, editorTerminals: terminals, sessionId };
}

function toolCallUpdates(acpProcess: AcpProcess): Extract<acp.SessionUpdate, { sessionUpdate: 'tool_call_update' }>[] {
  return acpProcess.updates.map((notification) => notification.update).filter((update): update is Extract<acp.SessionUpdate, { sessionUpdate: 'tool_call_update' }> => update.sessionUpdate === 'tool_call_update');
}

describe('openvaala acp with editor terminals', { timeout: 120_000 }, () => {
  it('runs exec_command in the editor terminal, shows the terminal in the tool call and passes the exit code on', async () => {
    const { env, acpProcess, editorTerminals, sessionId } = await startWithTerminals(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo marker=$EDITOR_TERMINAL; exit 3" } }]
  - text: "It failed with 3."
`);
    const response = await acpProcess.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
    expect(response.stopReason).toBe('end_turn');
    expect(editorTerminals.created).toEqual([
      {
        sessionId,
        command: 'bash',
        args: ['-c', 'echo marker=$EDITOR_TERMINAL; exit 3'],
        env: [
          { name: 'PAGER', value: 'cat' },
          { name: 'GIT_PAGER', value: 'cat' },
          { name: 'GH_PAGER', value: 'cat' },
        ],
        cwd: env.workDir,
        outputByteLimit: expect.any(Number),
      },
    ]);
    // The model read the output of the editor's terminal (only there is EDITOR_TERMINAL set).
    const sent = JSON.stringify(env.mock.requests[1]?.body);
    expect(sent).toContain('marker=1');
    expect(sent).toContain('[exit code 3]');
    const updates = toolCallUpdates(acpProcess);
    const toolCallId = updates[0]?.toolCallId;
    expect(updates.find((update) => update.content?.some((content) => content.type === 'terminal'))).toMatchObject({ toolCallId, content: [{ type: 'terminal', terminalId: 'term-1' }] });
    const finished = updates.at(-1);
    // A command that exited non-zero is a failed call for the editor, as agents report a shell call's non-zero exit.
    expect(finished).toMatchObject({ toolCallId, status: 'failed', rawOutput: { exitCode: 3 } });
    // The embedded terminal stays: the update that finishes the call does not replace it.
    expect(finished?.content).toBeUndefined();
    expect(editorTerminals.released).toEqual(['term-1']);
    expect(acpProcess.tap.problems).toEqual([]);
  });

  it('kills the editor terminal when the editor cancels the prompt', async () => {
    const { acpProcess, editorTerminals, sessionId } = await startWithTerminals(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo started; exec sleep 60" } }]
`);
    const prompted = acpProcess.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run something long' }] });
    await until(() => editorTerminals.output('term-1').includes('started'), 20_000, 'the command to start in the editor terminal');
    await acpProcess.agent.notify('session/cancel', { sessionId });
    expect((await prompted).stopReason).toBe('cancelled');
    expect(editorTerminals.killed).toEqual(['term-1']);
    expect(editorTerminals.released).toEqual(['term-1']);
    expect(editorTerminals.ended('term-1')).toBe(true);
    expect(acpProcess.tap.problems).toEqual([]);
  });
});

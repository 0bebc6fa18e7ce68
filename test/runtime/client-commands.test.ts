/**
 * Commands run by a client (`conversation/serveCommands`, `client/terminal/run`,
 * `client/terminal/kill`): `exec_command` of a conversation on the local executor runs through
 * the client that declared it runs commands, is killed there on interruption and timeout, and
 * runs on the executor when no client does.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, RuntimeClientError, type ServerRequestParams } from '../../src/client/runtime-client.js';
import { ErrorCodes } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await harness?.stop();
  harness = undefined;
});

async function editor(server: InProcessServer): Promise<RuntimeClient> {
  const client = await RuntimeClient.connect({ url: server.server.url, token: server.server.token, clientName: 'editor' });
  clients.push(client);
  return client;
}

function toolOutputs(server: InProcessServer): string[] {
  return server.completedItems().flatMap((item) => (item.kind === 'tool_call' ? [item.output] : []));
}

/** Resolves when `check` holds, polling the state the test's handlers fill. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('client-run commands', { timeout: 60_000 }, () => {
  it('runs exec_command through the client that runs commands, and on the executor once it has gone', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo on-the-executor; exit 3" } }]
  - text: "ran once"
  - toolCalls: [{ name: exec_command, arguments: { command: "echo on-the-executor; exit 3" } }]
  - text: "ran twice"
`);
    const conversationId = await harness.conversation();
    const client = await editor(harness);
    const asked: ServerRequestParams<'client/terminal/run'>[] = [];
    client.handleServerRequest('client/terminal/run', async (params) => {
      asked.push(params);
      return { exitCode: 3, signal: null, output: 'in-the-editor\n', truncated: false };
    });
    await client.request('conversation/serveCommands', { conversationId, run: true });
    await harness.client.request('session/input', { conversationId, input: 'run it' });
    await harness.turnsCompleted(1);
    const toolItem = harness.completedItems().find((item) => item.kind === 'tool_call');
    expect(asked).toEqual([
      {
        conversationId,
        sessionId: expect.stringMatching(/^sess_/),
        itemId: toolItem?.id,
        runId: expect.any(String),
        command: 'echo on-the-executor; exit 3',
        cwd: harness.environment.workDir,
        env: { PAGER: 'cat', GIT_PAGER: 'cat', GH_PAGER: 'cat' },
        timeoutMs: 120_000,
        outputByteLimit: expect.any(Number),
      },
    ]);
    expect(toolOutputs(harness)[0]).toBe('in-the-editor\n[exit code 3]');
    expect(toolItem?.kind === 'tool_call' ? toolItem.exitCode : undefined).toBe(3);

    await client.request('conversation/serveCommands', { conversationId, run: false });
    await harness.client.request('session/input', { conversationId, input: 'run it again' });
    await harness.turnsCompleted(2);
    expect(asked).toHaveLength(1);
    expect(toolOutputs(harness)[1]).toBe('on-the-executor\n[exit code 3]');
  });

  it('kills the client command when the turn is interrupted, and when it runs out of time', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "sleep 30" } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "sleep 30", timeout_ms: 300 } }]
  - text: "timed out"
`);
    const conversationId = await harness.conversation();
    const client = await editor(harness);
    const runs = new Map<string, (end: { exitCode: number | null; signal: string | null; output: string; truncated: boolean }) => void>();
    const kills: ServerRequestParams<'client/terminal/kill'>[] = [];
    client.handleServerRequest('client/terminal/run', (params) => new Promise((resolve) => runs.set(params.runId, resolve)));
    client.handleServerRequest('client/terminal/kill', async (params) => {
      kills.push(params);
      runs.get(params.runId)?.({ exitCode: null, signal: 'SIGTERM', output: 'partial\n', truncated: false });
      return {};
    });
    await client.request('conversation/serveCommands', { conversationId, run: true });
    await harness.client.request('session/input', { conversationId, input: 'run it' });
    await until(() => runs.size === 1, 'client/terminal/run');
    await harness.client.request('session/interrupt', { conversationId });
    const [interrupted] = await harness.turnsCompleted(1);
    expect(interrupted?.status).toBe('interrupted');
    expect(kills).toEqual([{ conversationId, sessionId: expect.stringMatching(/^sess_/), runId: [...runs.keys()][0] }]);
    expect(toolOutputs(harness)[0]).toBe('partial\n[aborted; killed by SIGTERM]');

    await harness.client.request('session/input', { conversationId, input: 'run it with a timeout' });
    await harness.turnsCompleted(2);
    expect(kills).toHaveLength(2);
    expect(toolOutputs(harness)[1]).toBe('partial\n[timed out after 300 ms]');
  });

  it('leaves commands of a sandboxed local executor to the executor, so none runs outside the sandbox', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo in-the-sandbox" } }]
  - text: "ran"
`,
      // The sandbox has a private /tmp: the test's work directory is shown in it explicitly.
      { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), `executors:\n  sandboxed: { kind: local, sandbox: bwrap, writablePaths: ["${environment.workDir}"] }\n`) },
    );
    const { conversation } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir, executor: 'sandboxed' });
    const conversationId = conversation.id;
    await harness.client.request('conversation/subscribe', { conversationId });
    const client = await editor(harness);
    let asked = 0;
    client.handleServerRequest('client/terminal/run', async () => {
      asked += 1;
      return { exitCode: 0, signal: null, output: 'in-the-editor\n', truncated: false };
    });
    await client.request('conversation/serveCommands', { conversationId, run: true });
    await harness.client.request('session/input', { conversationId, input: 'run it' });
    await harness.turnsCompleted(1);
    expect(asked).toBe(0);
    expect(toolOutputs(harness)[0]).toBe('in-the-sandbox\n[exit code 0]');
  });

  it('fails the call with the client error, naming the request', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "true" } }]
  - text: "could not run"
`);
    const conversationId = await harness.conversation();
    const client = await editor(harness);
    client.handleServerRequest('client/terminal/run', async () => {
      throw new Error('no terminal available');
    });
    await client.request('conversation/serveCommands', { conversationId, run: true });
    await harness.client.request('session/input', { conversationId, input: 'run it' });
    await harness.turnsCompleted(1);
    expect(toolOutputs(harness)[0]).toBe('exec_command: the client could not do client/terminal/run: no terminal available');
  });

  it('refuses serveCommands for an unknown conversation or a malformed id', async () => {
    harness = await startInProcessServer(`responses: []\n`);
    // The malformed id is sent on purpose.
    allowInvalidSentMessages();
    const client = await editor(harness);
    await expect(client.request('conversation/serveCommands', { conversationId: 'conv_missing', run: true })).rejects.toMatchObject({ code: ErrorCodes.notFound });
    const malformed = await client.request('conversation/serveCommands', { conversationId: '../etc', run: true }).catch((error: unknown) => error);
    expect(malformed).toBeInstanceOf(RuntimeClientError);
    expect((malformed as RuntimeClientError).code).toBe(ErrorCodes.invalidParams);
    expect((malformed as RuntimeClientError).message).toContain('not a conversation id');
  });
});

/**
 * `openvaala app-server` replays the three recorded Codex app-server sessions (a plain
 * answer, a command needing approval, a file change needing approval) as a real child process,
 * over stdio and over WebSocket (`--listen`), against a real runtime server on 127.0.0.1 whose
 * mock model is scripted to do the same kind of turn. The sequence of messages must be the
 * recorded one, and every message of both directions must match the schema bundles.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { CodexTestClient, type CodexTransport } from './codex-client.js';
import { CodexSchema, readTranscript } from './codex-schema.js';
import { ADAPTER_EXTRA_NOTIFICATIONS, CODEX_ONLY_NOTIFICATIONS, labels, normalizedFixtureLabels } from './flow.js';

const schema = new CodexSchema();
let server: InProcessServer | undefined;
let client: CodexTestClient | undefined;

afterEach(async () => {
  await client?.stop();
  client = undefined;
  await server?.stop();
  server = undefined;
});

const ANSWER = ['Hello', ' from the mock model.'];

/** A flow: the recording to replay, the mock's script and what the client does. */
interface Flow {
  transcript: 'text' | 'shell-approval' | 'patch-approval';
  script: string;
  prompt: string;
  threadStart: (cwd: string) => Record<string, unknown>;
}

const FLOWS: Flow[] = [
  {
    transcript: 'text',
    script: `responses:\n  - deltas: ${JSON.stringify(ANSWER)}\n    usage: { inputTokens: 10, outputTokens: 5 }\n`,
    prompt: 'say hello',
    threadStart: (cwd) => ({ cwd, approvalPolicy: 'never', sandbox: 'workspace-write' }),
  },
  {
    transcript: 'shell-approval',
    script: `responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: "echo hi-from-mock > mock_out.txt && cat mock_out.txt" } }
    usage: { inputTokens: 10, outputTokens: 5 }
  - deltas: ${JSON.stringify(ANSWER)}
    usage: { inputTokens: 10, outputTokens: 5 }
`,
    prompt: 'write a file',
    threadStart: (cwd) => ({ cwd, approvalPolicy: 'untrusted', sandbox: 'workspace-write' }),
  },
  {
    transcript: 'patch-approval',
    script: `responses:
  - toolCalls:
      - { name: apply_patch, arguments: { patch: "*** Begin Patch\\n*** Add File: hello.txt\\n+hello from apply_patch\\n*** End Patch\\n" } }
    usage: { inputTokens: 10, outputTokens: 5 }
  - deltas: ${JSON.stringify(ANSWER)}
    usage: { inputTokens: 10, outputTokens: 5 }
`,
    prompt: 'add a file',
    // The recorded client named a model of Codex's catalog by its bare name; the mock's is named so here.
    threadStart: (cwd) => ({ cwd, approvalPolicy: 'untrusted', sandbox: 'workspace-write', model: 'mock-model' }),
  },
];

async function replay(transport: CodexTransport, flow: Flow): Promise<{ client: CodexTestClient; threadId: string; workDir: string }> {
  server = await startInProcessServer(flow.script);
  const workDir = server.environment.workDir;
  client = await CodexTestClient.start(transport, server.environment.env, workDir);
  client.onServerRequest('item/commandExecution/requestApproval', () => ({ decision: 'accept' }));
  client.onServerRequest('item/fileChange/requestApproval', () => ({ decision: 'accept' }));
  await client.initialize();
  const started = await client.request<{ thread: { id: string } }>('thread/start', flow.threadStart(workDir));
  const threadId = started.thread.id;
  await client.request('turn/start', { threadId, input: [{ type: 'text', text: flow.prompt, text_elements: [] }] });
  await client.waitFor((msg) => msg.method === 'turn/completed', 'turn/completed');
  return { client, threadId, workDir };
}

for (const transport of ['stdio', 'websocket'] as const) {
  describe(`openvaala app-server over ${transport} replays the recorded Codex sessions`, () => {
    for (const flow of FLOWS) {
      it(`${flow.transcript}: the same message sequence, every message valid against the schema bundles`, async () => {
        const recorded = readTranscript(flow.transcript);
        const { client: codex, threadId, workDir } = await replay(transport, flow);
        const ours = codex.log;

        const expectedFromServer = normalizedFixtureLabels(labels(recorded, 's->c', CODEX_ONLY_NOTIFICATIONS));
        expect(labels(ours, 's->c', ADAPTER_EXTRA_NOTIFICATIONS)).toEqual(expectedFromServer);
        expect(labels(ours, 'c->s', new Set())).toEqual(labels(recorded, 'c->s', new Set()));
        expect(schema.check(ours)).toEqual([]);

        // Ids are the runtime's, as UUIDs: every notification names the started thread.
        for (const { msg } of ours) {
          const params = msg.params as { threadId?: string } | undefined;
          if (msg.method && params?.threadId !== undefined) expect(params.threadId).toBe(threadId);
        }
        const completed = ours.filter((entry) => entry.msg.method === 'item/completed').map((entry) => (entry.msg.params as { item: Record<string, unknown> }).item);
        expect(completed.find((item) => item.type === 'agentMessage')?.text).toBe(ANSWER.join(''));
        expect(completed.find((item) => item.type === 'userMessage')?.content).toEqual([{ type: 'text', text: flow.prompt, text_elements: [] }]);
        const turnCompleted = ours.find((entry) => entry.msg.method === 'turn/completed')!.msg.params as { turn: { status: string } };
        expect(turnCompleted.turn.status).toBe('completed');

        if (flow.transcript === 'shell-approval') {
          const command = completed.find((item) => item.type === 'commandExecution')!;
          // As Codex writes its own: the shell that runs it and the command as its script.
          expect(command).toMatchObject({ command: "bash -c 'echo hi-from-mock > mock_out.txt && cat mock_out.txt'", commandActions: [{ type: 'unknown', command: 'echo hi-from-mock > mock_out.txt && cat mock_out.txt' }], cwd: workDir, status: 'completed', exitCode: 0, aggregatedOutput: 'hi-from-mock\n' });
          const deltas = ours.filter((entry) => entry.msg.method === 'item/commandExecution/outputDelta').map((entry) => (entry.msg.params as { delta: string }).delta);
          expect(deltas.join('')).toBe('hi-from-mock\n');
          expect(readFileSync(path.join(workDir, 'mock_out.txt'), 'utf8')).toBe('hi-from-mock\n');
        }
        if (flow.transcript === 'patch-approval') {
          const change = completed.find((item) => item.type === 'fileChange')!;
          expect(change.status).toBe('completed');
          // As Codex writes an added file: its absolute path and its content.
          expect(change.changes).toEqual([{ path: path.join(workDir, 'hello.txt'), kind: { type: 'add' }, diff: 'hello from apply_patch\n' }]);
          expect(readFileSync(path.join(workDir, 'hello.txt'), 'utf8')).toBe('hello from apply_patch\n');
          // The aggregated diff follows the change, once.
          const diffs = ours.filter((entry) => entry.msg.method === 'turn/diff/updated');
          expect(diffs).toHaveLength(1);
          expect((diffs[0]!.msg.params as { diff: string }).diff).toContain('+hello from apply_patch');
        }
        if (flow.transcript === 'text') expect(existsSync(path.join(workDir, 'mock_out.txt'))).toBe(false);
      });
    }
  });
}

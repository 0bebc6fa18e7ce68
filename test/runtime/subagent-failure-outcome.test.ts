/**
 * Waiting on a subagent whose turn failed: the wait itself worked (the model reads each
 * subagent's status, not an error), but the work it waited for failed, so every client shows
 * the call failed — exec and `conversations show`, the terminal UI, the shared rule the web
 * UI's badge shows (`toolCallOutcome`), the ACP and Codex adapters (whose `collabAgentToolCall` also carries each agent's state, as Codex's
 * own). A wait on subagents that completed, and the other collaboration calls, still succeed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { completedStatus } from '../../src/adapters/acp/tool-calls.js';
import { threadItemOf } from '../../src/adapters/codex-app-server/items.js';
import { formatItem } from '../../src/cli/exec-item-formats.js';
import { HumanRenderer } from '../../src/cli/exec-output.js';
import { MockProviderServer, parseMockScript } from '../../src/models/mock/index.js';
import { toCodexId } from '../../src/protocol/codex-ids.js';
import type { AnyNotification, ItemOf } from '../../src/protocol/index.js';
import { toolCallOutcome } from '../../src/protocol/tool-call-outcome.js';
import { entryLines } from '../../src/tui/entry-lines.js';
import { plainText } from '../../src/tui/styled-text.js';
import { CodexSchema } from '../adapters/codex-app-server/codex-schema.js';
import { capturedStreams } from '../cli/exec-harness.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
const childMocks: MockProviderServer[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await Promise.all(childMocks.splice(0).map((mock) => mock.stop()));
});

async function childMock(script: string): Promise<string> {
  const mock = new MockProviderServer(parseMockScript(script, 'child.yaml'));
  childMocks.push(mock);
  return (await mock.start({ port: 0 })).baseURL;
}

/** Runs a parent that spawns one child on `child/m` (scripted by `childScript`), waits for it, then closes it; returns the parent's collaboration calls. */
async function collaborationCalls(childScript: string): Promise<Map<string, ItemOf<'tool_call'>>> {
  const child = await childMock(childScript);
  harness = await startInProcessServer(
    `
responses:
  - toolCalls: [{ name: spawn_agent, arguments: { task: "look at module a", model: "child/m" } }]
  - toolCalls: [{ name: wait_agent, arguments: { timeout_ms: 20000 } }]
  - text: "waited"
`,
    { providersYaml: (baseURL) => `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\n  child: { kind: openai, baseURL: ${child}, apiKey: none }\ndefaultModel: mock/mock-model\n` },
  );
  const conversationId = await harness.conversation();
  const root = (await harness.client.request('conversation/get', { conversationId })).conversation.rootSessionId;
  await harness.client.request('session/input', { conversationId, input: 'delegate' });
  await harness.waitFor((event) => event.method === 'turn/completed' && event.params.turn.sessionId === root);
  const calls = harness.completedItems().filter((item): item is ItemOf<'tool_call'> => item.kind === 'tool_call' && item.sessionId === root);
  return new Map(calls.map((call) => [call.toolName, call]));
}

/** The closing line exec prints for `item`. */
function execClosingLine(item: ItemOf<'tool_call'>): string {
  const output = capturedStreams();
  new HumanRenderer(output.streams, { sessionId: item.sessionId }).render({ method: 'item/completed', params: { conversationId: 'c', sessionId: item.sessionId, seq: 1, item } } as AnyNotification);
  return output.stdout().trimEnd().split('\n').at(-1) ?? '';
}

/** How each client shows the call: exec's closing line, the transcript's, the terminal UI's, the shared rule's state (which the web UI's badge shows), ACP's and Codex's statuses. */
function shown(item: ItemOf<'tool_call'>) {
  const tui = entryLines({ key: item.id, sessionId: item.sessionId, seq: 1, item, version: 0 }, 120, { reasoning: false, output: false }, item.sessionId).slice(0, -1);
  return {
    exec: execClosingLine(item),
    show: (formatItem(item) ?? '').split('\n').at(-1) ?? '',
    tui: plainText(tui.at(-1) ?? []),
    rule: toolCallOutcome(item).state,
    acp: completedStatus(item),
    codex: threadItemOf(item, { sessionThreadId: toCodexId(item.sessionId), cwd: '/w' }),
  };
}

describe('waiting on a subagent whose turn failed', { timeout: 30_000 }, () => {
  it('is a failed call in every client, while the model reads the status as a normal result', async () => {
    const calls = await collaborationCalls('responses:\n  - error: { status: 400, message: "child model refused the request" }\n');
    const wait = calls.get('wait_agent')!;
    const childId = (calls.get('spawn_agent')!.structured as { id: string }).id;
    expect(wait.isError).toBe(false);
    expect(JSON.parse(wait.output)).toMatchObject({ agents: [{ id: childId, status: 'failed' }] });
    const clients = shown(wait);
    expect(clients.exec).toMatch(/^ {2}✗ wait_agent subagent failed \(\d+ ms\)$/);
    expect(clients.show).toBe('  ✗ subagent failed');
    expect(clients.tui).toMatch(/^ {2}✗ failed · subagent failed · /);
    expect(clients.rule).toBe('failed');
    expect(clients.acp).toBe('failed');
    expect(clients.codex).toMatchObject({ type: 'collabAgentToolCall', tool: 'wait', status: 'failed', receiverThreadIds: [toCodexId(childId)], agentsStates: { [toCodexId(childId)]: { status: 'errored' } } });
    expect(new CodexSchema().errorsAgainst('codex#/definitions/v2/ThreadItem', clients.codex)).toEqual([]);
    expect(wait.details).toEqual({ kind: 'subagent', sessionIds: [childId], states: [{ sessionId: childId, status: 'failed' }] });
    expect(toolCallOutcome(wait)).toEqual({ state: 'failed', detail: 'subagent failed' });

    // The spawn itself worked: it is a success, and Codex sees the new agent running.
    const spawn = shown(calls.get('spawn_agent')!);
    expect([spawn.rule, spawn.acp]).toEqual(['succeeded', 'completed']);
    expect(spawn.codex).toMatchObject({ tool: 'spawnAgent', status: 'completed', agentsStates: { [toCodexId(childId)]: { status: 'running' } } });
  });

  it('is a successful call when the subagent completed', async () => {
    const calls = await collaborationCalls('responses:\n  - text: "CHILD-ANSWER"\n');
    const wait = calls.get('wait_agent')!;
    const childId = (calls.get('spawn_agent')!.structured as { id: string }).id;
    expect(wait.details).toEqual({ kind: 'subagent', sessionIds: [childId], states: [{ sessionId: childId, status: 'completed' }] });
    const clients = shown(wait);
    expect(clients.exec).toMatch(/^ {2}✓ wait_agent \(\d+ ms\)$/);
    expect([clients.rule, clients.acp]).toEqual(['succeeded', 'completed']);
    expect(clients.codex).toMatchObject({ status: 'completed', agentsStates: { [toCodexId(childId)]: { status: 'completed' } } });
  });
});

describe('the rule for collaboration calls', () => {
  const call = (states: { sessionId: string; status: 'running' | 'completed' | 'failed' | 'interrupted' | 'closed' }[]): ItemOf<'tool_call'> => ({
    id: 'i',
    sessionId: 's',
    turnId: 't',
    createdAt: 1,
    completedAt: 2,
    status: 'completed',
    kind: 'tool_call',
    callId: 'c',
    toolName: 'wait_agent',
    arguments: {},
    output: '',
    isError: false,
    durationMs: 5,
    details: { kind: 'subagent', sessionIds: states.map((state) => state.sessionId), states },
  });

  it('fails when any awaited subagent failed, counting them; still running, interrupted or closed ones are not failures', () => {
    expect(toolCallOutcome(call([{ sessionId: 'a', status: 'failed' }, { sessionId: 'b', status: 'completed' }, { sessionId: 'c', status: 'failed' }]))).toEqual({ state: 'failed', detail: '2 of 3 subagents failed' });
    for (const status of ['running', 'interrupted', 'closed', 'completed'] as const) expect(toolCallOutcome(call([{ sessionId: 'a', status }])).state).toBe('succeeded');
  });
});

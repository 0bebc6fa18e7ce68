/**
 * Subagents: a parent spawns two children in parallel, waits for both and gets both answers
 * as a tool result; the children are sessions with the parent's id, in the log.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MockProviderServer, parseMockScript } from '../../src/models/mock/index.js';
import type { Item, Turn } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
const extraMocks: MockProviderServer[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await Promise.all(extraMocks.splice(0).map((mock) => mock.stop()));
});

async function childMock(script: string): Promise<string> {
  const mock = new MockProviderServer(parseMockScript(script, 'child.yaml'));
  extraMocks.push(mock);
  return (await mock.start({ port: 0 })).baseURL;
}

describe('subagents', () => {
  it('runs two subagents in parallel and returns both answers to the parent', async () => {
    // Each child has its own mock, so which child asks first does not matter. Each child's
    // command waits until the other's has started, so neither ends unless both run at once.
    const childA = await childMock(`responses:\n  - toolCalls: [{ name: exec_command, arguments: { command: "touch a.started; while [ ! -e b.started ]; do sleep 0.05; done; echo a-done" } }]\n  - text: "ANSWER-FROM-A"\n`);
    const childB = await childMock(`responses:\n  - toolCalls: [{ name: exec_command, arguments: { command: "touch b.started; while [ ! -e a.started ]; do sleep 0.05; done; echo b-done" } }]\n  - text: "ANSWER-FROM-B"\n`);
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - { name: spawn_agent, arguments: { task: "TASK-A: look at module a", model: "childa/m" } }
      - { name: spawn_agent, arguments: { task: "TASK-B: look at module b", model: "childb/m" } }
  - toolCalls: [{ name: wait_agent, arguments: { timeout_ms: 20000 } }]
  - text: "Both subagents reported."
`,
      {
        providersYaml: (baseURL) =>
          `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\n  childa: { kind: openai, baseURL: ${childA}, apiKey: none }\n  childb: { kind: openai, baseURL: ${childB}, apiKey: none }\ndefaultModel: mock/mock-model\n`,
      },
    );
    const conversationId = await harness.conversation();
    const root = (await harness.client.request('conversation/get', { conversationId })).conversation.rootSessionId;
    await harness.client.request('session/input', { conversationId, input: 'investigate both modules' });
    await harness.waitFor((event) => event.method === 'turn/completed' && event.params.turn.sessionId === root);

    const sessions = (await harness.client.request('session/list', { conversationId })).sessions;
    const children = sessions.filter((session) => session.parentSessionId === root);
    expect(children.map((session) => session.model).sort()).toEqual(['childa/m', 'childb/m']);

    // Both children's turns overlapped in time.
    const turns = harness.events.flatMap((event) => (event.method === 'turn/completed' ? [event.params.turn] : []));
    const childTurns = children.map((child) => turns.find((turn) => turn.sessionId === child.id) as Turn);
    expect(childTurns.every((turn) => turn.status === 'completed')).toBe(true);
    const [first, second] = childTurns as [Turn, Turn];
    expect(first.startedAt).toBeLessThan(second.completedAt ?? 0);
    expect(second.startedAt).toBeLessThan(first.completedAt ?? 0);

    // The parent's wait_agent result holds both answers, and went back to the model.
    const rootItems = harness.events.flatMap((event) => (event.method === 'item/completed' && event.params.sessionId === root ? [event.params.item] : []));
    const wait = rootItems.find((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call' && item.toolName === 'wait_agent');
    expect(wait?.output).toContain('ANSWER-FROM-A');
    expect(wait?.output).toContain('ANSWER-FROM-B');
    const finalRequest = JSON.stringify(harness.environment.mock.requests[2]?.body);
    expect(finalRequest).toContain('ANSWER-FROM-A');
    expect(finalRequest).toContain('ANSWER-FROM-B');

    // Each child got its task as an agent message, and everything is in the log on disk.
    const directory = path.join(harness.environment.paths.dataDir, 'conversations', conversationId);
    for (const [child, task] of [[children.find((session) => session.model === 'childa/m'), 'TASK-A'], [children.find((session) => session.model === 'childb/m'), 'TASK-B']] as const) {
      const lines = readFileSync(path.join(directory, `${child!.id}.jsonl`), 'utf8').trim().split('\n').map((line) => JSON.parse(line).value);
      expect(lines[0]).toMatchObject({ kind: 'agent_message', fromSessionId: root, toSessionId: child!.id });
      expect(lines[0].text).toContain(task);
    }
    const metadata = readFileSync(path.join(directory, 'metadata.jsonl'), 'utf8');
    for (const child of children) expect(metadata).toContain(`"id":"${child.id}","conversationId":"${conversationId}","parentSessionId":"${root}"`);
  });

  it('keeps within the depth and count limits, telling the model why', async () => {
    const child = await childMock(`responses:\n  - text: "child done"\n`);
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - { name: spawn_agent, arguments: { task: "first child", model: "child/m" } }
      - { name: spawn_agent, arguments: { task: "second child", model: "child/m" } }
  - text: "parent done"
`,
      {
        limits: { subagents: { maxDepth: 1, maxOpenPerSession: 1 } },
        providersYaml: (baseURL) => `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\n  child: { kind: openai, baseURL: ${child}, apiKey: none }\ndefaultModel: mock/mock-model\n`,
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'go' });
    await harness.turnsCompleted(2);
    const spawns = harness.completedItems().filter((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call' && item.toolName === 'spawn_agent');
    expect(spawns.map((call) => call.isError)).toEqual([false, true]);
    expect(spawns[1]?.output).toContain('already has 1 open subagents (limit 1)');
    // The child (depth 1 = the limit) is not offered the collaboration tools.
    const childTools = ((extraMocks[0]?.requests[0]?.body as { tools?: { name: string }[] }).tools ?? []).map((tool) => tool.name);
    expect(childTools).toContain('exec_command');
    expect(childTools).not.toContain('spawn_agent');
    const parentTools = ((harness.environment.mock.requests[0]?.body as { tools?: { name: string }[] }).tools ?? []).map((tool) => tool.name);
    expect(parentTools).toEqual(expect.arrayContaining(['spawn_agent', 'send_input', 'wait_agent', 'close_agent']));
  });

  it("applies an agent's own subagent limits from agents.yaml", async () => {
    harness = await startInProcessServer('responses:\n  - text: "no helpers for me"\n', {
      beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  solo:\n    default: true\n    subagents: { maxDepth: 0 }\n'),
    });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'work alone' });
    await harness.turnsCompleted(1);
    const tools = ((harness.environment.mock.requests[0]?.body as { tools?: { name: string }[] }).tools ?? []).map((tool) => tool.name);
    expect(tools).toContain('read_file');
    expect(tools).not.toContain('spawn_agent');
  });
});

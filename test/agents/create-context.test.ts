/**
 * `conversation/create` with `mcpServers`, `instructions` and `approvalPolicy`, over a real
 * WebSocket against a real server and the mock provider (Responses wire format): each applies
 * to that conversation only, survives a server restart, and bad input is refused naming the
 * field.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import type { Item } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { GROWING_SERVER, offeredTools, toolCalls } from '../mcp/mcp-helpers.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer | undefined;
let restarted: { server: RunningServer; client: RuntimeClient } | undefined;
afterEach(async () => {
  if (restarted) {
    await restarted.client.close();
    await restarted.server.stop();
    restarted = undefined;
  }
  await harness?.stop();
  harness = undefined;
});

function requestBody(index: number): unknown {
  const request = harness?.environment.mock.requests[index];
  if (!request) throw new Error(`the mock received no request #${index + 1}`);
  return request.body;
}

const ownServer = { own: { transport: 'stdio', command: process.execPath, args: [GROWING_SERVER], env: { OWN_SECRET: 'kept-in-metadata' } } };

async function create(extra: Record<string, unknown>): Promise<string> {
  if (!harness) throw new Error('no server');
  const { conversation } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir, ...extra });
  await harness.client.request('conversation/subscribe', { conversationId: conversation.id });
  return conversation.id;
}

async function turn(conversationId: string, count: number): Promise<void> {
  await harness?.client.request('session/input', { conversationId, input: 'go' });
  const turns = await harness?.turnsCompleted(count);
  expect(turns?.[count - 1]?.status, turns?.[count - 1]?.error).toBe('completed');
}

describe('conversation/create mcpServers', () => {
  it('offers the server to that conversation only, alongside mcp.yaml, and keeps it over a restart', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: mcp__own__echo, arguments: { text: "from-own" } }]
  - text: "done"
  - text: "other conversation"
  - toolCalls: [{ name: list_dir, arguments: {} }]
  - text: "after restart"
`,
      { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), `servers:\n  shared:\n    transport: stdio\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(GROWING_SERVER)}]\n`) },
    );
    const policy = { default: 'allow', rules: [{ tool: 'list_dir', decision: 'deny' }] };
    const withOwn = await create({ mcpServers: ownServer, instructions: 'KEEP-THESE-INSTRUCTIONS', approvalPolicy: policy });
    await turn(withOwn, 1);
    expect([...offeredTools(requestBody(0)).keys()]).toEqual(expect.arrayContaining(['mcp__own__echo', 'mcp__shared__echo']));
    expect(toolCalls(harness.completedItems()).map((call) => [call.toolName, call.output, call.isError])).toEqual([['mcp__own__echo', 'echo: from-own', false]]);

    const without = await create({});
    await turn(without, 2);
    expect([...offeredTools(requestBody(2)).keys()]).toContain('mcp__shared__echo');
    expect([...offeredTools(requestBody(2)).keys()]).not.toContain('mcp__own__echo');

    // A new server process on the same data directory reads the servers back from the conversation.
    await harness.client.close();
    await harness.server.stop();
    const server = await startRuntimeServer({ paths: harness.environment.paths, port: 0, logger: createLogger('silent') });
    const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'after-restart' });
    restarted = { server, client };
    const { conversation } = await client.request('conversation/get', { conversationId: withOwn });
    // Clients see the literal env value as "***"; the server kept the real one (the server starts below).
    expect(conversation).toMatchObject({ mcpServers: { own: { ...ownServer.own, env: { OWN_SECRET: '***' } } }, instructions: 'KEEP-THESE-INSTRUCTIONS', approvalPolicy: policy });
    const after: Item[] = [];
    const finished = new Promise<void>((resolve) =>
      client.onNotification((event) => {
        if (event.method === 'item/completed') after.push(event.params.item);
        if (event.method === 'turn/completed') resolve();
      }),
    );
    await client.request('conversation/subscribe', { conversationId: withOwn });
    await client.request('session/input', { conversationId: withOwn, input: 'again' });
    await finished;
    expect([...offeredTools(requestBody(3)).keys()]).toContain('mcp__own__echo');
    expect(JSON.stringify(requestBody(3))).toContain('KEEP-THESE-INSTRUCTIONS');
    // The conversation's policy still applies after the restart.
    expect(toolCalls(after).at(-1)?.output).toBe('list_dir: not run: denied by the approval policy (rule 1 of the conversation\'s policy)');
  });

  it('refuses a name mcp.yaml already uses, naming params.mcpServers.<name>', async () => {
    harness = await startInProcessServer('responses: [{ text: "hi" }]', {
      beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'mcp.yaml'), 'servers:\n  shared: { transport: http, url: "http://127.0.0.1:9/mcp" }\n'),
    });
    const refused = harness.client.request('conversation/create', { cwd: harness.environment.workDir, mcpServers: { shared: { transport: 'http', url: 'http://127.0.0.1:9/other' } } });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    await expect(refused).rejects.toThrow('conversation/create: params.mcpServers.shared: mcp.yaml already has a server named "shared"');
    expect((await harness.client.request('conversation/list', {})).conversations).toEqual([]);
  });

  it.each([
    ['a stdio entry without a command', { bad: { transport: 'stdio' } }, /params\.mcpServers\.bad\.command: required: the program that starts the server/],
    ['an unknown transport', { bad: { transport: 'pigeon' } }, /params\.mcpServers\.bad\.transport: expected transport: stdio or transport: http/],
    ['a name with "__"', { 'a__b': { transport: 'http', url: 'http://127.0.0.1:9/mcp' } }, /params\.mcpServers\.a__b: server names use letters/],
    ['an unknown key', { bad: { transport: 'http', url: 'http://127.0.0.1:9/mcp', colour: 'red' } }, /params\.mcpServers\.bad\.colour: Unrecognized key: "colour"/],
  ])('refuses %s, naming the key', async (_name, mcpServers, message) => {
    harness = await startInProcessServer('responses: [{ text: "hi" }]');
    const refused = harness.client.request('conversation/create', { cwd: harness.environment.workDir, mcpServers });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    await expect(refused).rejects.toThrow(message);
  });
});

describe('conversation/create instructions', () => {
  it('records them as an instruction item and gives them to the model, in that conversation only', async () => {
    harness = await startInProcessServer('responses: [{ text: "one" }, { text: "two" }]');
    const withInstructions = await create({ instructions: 'CLIENT-INSTRUCTIONS answer in haiku' });
    await turn(withInstructions, 1);
    const instruction = harness.completedItems().find((item): item is Extract<Item, { kind: 'instruction' }> => item.kind === 'instruction');
    expect(instruction).toMatchObject({ source: 'client', name: 'conversation/create', body: 'CLIENT-INSTRUCTIONS answer in haiku' });
    expect(JSON.stringify(requestBody(0))).toContain('CLIENT-INSTRUCTIONS answer in haiku');
    const { conversation } = await harness.client.request('conversation/get', { conversationId: withInstructions });
    expect(conversation.instructions).toBe('CLIENT-INSTRUCTIONS answer in haiku');

    const without = await create({});
    await turn(without, 2);
    expect(JSON.stringify(requestBody(1))).not.toContain('CLIENT-INSTRUCTIONS');
  });

  it('refuses empty instructions, naming params.instructions', async () => {
    allowInvalidSentMessages();
    harness = await startInProcessServer('responses: [{ text: "hi" }]');
    await expect(harness.client.request('conversation/create', { cwd: harness.environment.workDir, instructions: '' })).rejects.toThrow(/conversation\/create: params\.instructions/);
  });
});

describe('conversation/create approvalPolicy', () => {
  it('replaces the agent\'s policy in that conversation only', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: list_dir, arguments: {} }]
  - text: "refused"
  - toolCalls: [{ name: list_dir, arguments: {} }]
  - text: "listed"
`);
    const strict = await create({ approvalPolicy: { default: 'allow', rules: [{ tool: 'list_dir', decision: 'deny' }] } });
    await turn(strict, 1);
    const without = await create({});
    await turn(without, 2);
    const calls = toolCalls(harness.completedItems());
    expect(calls.map((call) => call.isError)).toEqual([true, false]);
    expect(calls[0]?.output).toBe('list_dir: not run: denied by the approval policy (rule 1 of the conversation\'s policy)');
    const { conversation } = await harness.client.request('conversation/get', { conversationId: strict });
    expect(conversation.approvalPolicy).toEqual({ default: 'allow', rules: [{ tool: 'list_dir', decision: 'deny' }] });
  });

  it.each([
    ['an unknown decision', { default: 'maybe' }, /params\.approvalPolicy\.default/],
    ['a rule without a tool', { rules: [{ decision: 'deny' }] }, /params\.approvalPolicy\.rules\[0\]\.tool: required, but missing/],
    ['an unknown key', { defaults: 'deny' }, /params\.approvalPolicy/],
  ])('refuses %s, naming the field', async (_name, approvalPolicy, message) => {
    allowInvalidSentMessages();
    harness = await startInProcessServer('responses: [{ text: "hi" }]');
    const refused = harness.client.request('conversation/create', { cwd: harness.environment.workDir, approvalPolicy: approvalPolicy as never });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    await expect(refused).rejects.toThrow(message);
  });
});

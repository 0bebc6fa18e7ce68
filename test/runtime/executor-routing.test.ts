/**
 * A conversation on several executors: each environment tool is offered once with an
 * `executor` argument, and calls run where they name.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalRequest, Item, MethodParams } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('several executors', () => {
  it('routes each call by its executor argument, default the first', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - { name: read_file, arguments: { path: "notes.txt" } }
      - { name: read_file, arguments: { path: "notes.txt", executor: "sandbox" } }
      - { name: read_file, arguments: { path: "notes.txt", executor: "nowhere" } }
  - text: "read both"
`,
      {
        beforeStart: (environment) => {
          writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  sandbox:\n    kind: virtual\n    files:\n      notes.txt: "IN-THE-SANDBOX"\n');
          writeFileSync(path.join(environment.workDir, 'notes.txt'), 'ON-THIS-MACHINE');
        },
      },
    );
    const executors = await harness.client.request('executors/list', {});
    expect(executors.executors).toEqual([
      { name: 'local', kind: 'local' },
      { name: 'sandbox', kind: 'virtual' },
    ]);
    const { conversation } = await harness.client.request('conversation/create', {
      workLocation: [
        { executor: 'local', cwd: harness.environment.workDir },
        { executor: 'sandbox', cwd: '/workspace' },
      ],
    });
    await harness.client.request('conversation/subscribe', { conversationId: conversation.id });
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'read the notes everywhere' });
    await harness.turnsCompleted(1);
    const calls = harness.completedItems().filter((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
    expect(calls[0]?.output).toContain('ON-THIS-MACHINE');
    expect(calls[1]?.output).toContain('IN-THE-SANDBOX');
    expect(calls[2]).toMatchObject({ isError: true });
    expect(calls[2]?.output).toContain('read_file: argument "executor": "nowhere" is not one of "local", "sandbox"');
    const tools = (harness.environment.mock.requests[0]?.body as { tools: { name: string; parameters: { properties: Record<string, { enum?: string[] }> } }[] }).tools;
    const readFile = tools.find((tool) => tool.name === 'read_file');
    expect(readFile?.parameters.properties.executor?.enum).toEqual(['local', 'sandbox']);
    expect(tools.filter((tool) => tool.name === 'read_file')).toHaveLength(1);
  });

  it('records a change of work location at the next turn, and runs tools there', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: read_file, arguments: { path: "notes.txt" } }]
  - text: "read here"
  - toolCalls: [{ name: read_file, arguments: { path: "notes.txt" } }]
  - text: "read there"
`,
      {
        beforeStart: (environment) => {
          writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  sandbox:\n    kind: virtual\n    files:\n      notes.txt: "IN-THE-SANDBOX"\n');
          writeFileSync(path.join(environment.workDir, 'notes.txt'), 'ON-THIS-MACHINE');
        },
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'read' });
    await harness.turnsCompleted(1);
    const { conversation } = await harness.client.request('conversation/update', { conversationId, title: 'moved', workLocation: [{ executor: 'sandbox', cwd: '/workspace' }] });
    expect(conversation.title).toBe('moved');
    await harness.client.request('session/input', { conversationId, input: 'read again' });
    await harness.turnsCompleted(2);
    const change = harness.completedItems().find((item) => item.kind === 'executor_change');
    expect(change).toMatchObject({ from: `local:${harness.environment.workDir}`, to: 'sandbox:/workspace' });
    const calls = harness.completedItems().filter((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
    expect(calls.map((call) => call.executor)).toEqual(['local', 'sandbox']);
    expect(calls[1]?.output).toContain('IN-THE-SANDBOX');
    const bad = await harness.client.request('conversation/update', { conversationId, workLocation: [{ executor: 'sandbox', cwd: 'relative' }] }).catch((error: Error) => error);
    expect((bad as Error).message).toMatch(/cwd: must be an absolute path/);
  });

  it('names the executor a call was routed to in its item, its approval request and its hooks\' input', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - { name: read_file, arguments: { path: "notes.txt", executor: "other" } }
      - { name: read_file, arguments: { path: "notes.txt" } }
      - { name: read_file, arguments: { path: "notes.txt", executor: "nowhere" } }
  - text: "read both"
`,
      {
        beforeStart: (environment) => {
          const { configDir } = environment.paths;
          writeFileSync(path.join(configDir, 'executors.yaml'), 'executors:\n  other:\n    kind: local\n');
          writeFileSync(path.join(configDir, 'agents.yaml'), 'agents:\n  default:\n    default: true\n    approvals:\n      default: allow\n      rules:\n        - { tool: read_file, decision: ask }\n');
          const hooks = path.join(environment.root, 'hooks');
          mkdirSync(hooks, { recursive: true });
          writeFileSync(path.join(hooks, 'record.sh'), '#!/usr/bin/env bash\ncat > "$(dirname "$0")/input-$(date +%s%N).json"\n');
          chmodSync(path.join(hooks, 'record.sh'), 0o755);
          writeFileSync(path.join(configDir, 'hooks.yaml'), `hooks:\n  pre_tool_use:\n    - matcher: read_file\n      command: ${path.join(hooks, 'record.sh')}\n`);
          writeFileSync(path.join(environment.workDir, 'notes.txt'), 'ON-LOCAL');
          mkdirSync(path.join(environment.root, 'elsewhere'));
          writeFileSync(path.join(environment.root, 'elsewhere', 'notes.txt'), 'ON-OTHER');
        },
      },
    );
    const elsewhere = path.join(harness.environment.root, 'elsewhere');
    const asked: ApprovalRequest[] = [];
    harness.client.handleServerRequest('approval/request', async (request) => {
      asked.push(request);
      return { decision: 'allow_once' };
    });
    const { conversation } = await harness.client.request('conversation/create', {
      workLocation: [
        { executor: 'local', cwd: harness.environment.workDir },
        { executor: 'other', cwd: elsewhere },
      ],
    });
    await harness.client.request('conversation/subscribe', { conversationId: conversation.id });
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'read the notes' });
    await harness.turnsCompleted(1);
    const calls = harness.completedItems().filter((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
    expect(calls.slice(0, 2).map((call) => [call.executor, call.output.includes('ON-OTHER') ? 'other' : 'local'])).toEqual([
      ['other', 'other'],
      ['local', 'local'],
    ]);
    // A call naming no executor of the work location runs nowhere: no executor recorded, nobody asked.
    expect(calls[2]).toMatchObject({ isError: true });
    expect(calls[2]?.executor).toBeUndefined();
    expect(calls[2]?.output).toContain('read_file: argument "executor": "nowhere" is not one of "local", "other"');
    const started = harness.events.flatMap((event) => (event.method === 'item/started' && event.params.kind === 'tool_call' ? [event.params] : []));
    expect(started.map((event) => event.partial.executor)).toEqual(['other', 'local', undefined]);
    // The two calls run concurrently, so their approvals may be asked in either order.
    expect(asked.map((request) => [request.callId, request.executor]).sort()).toEqual([
      [calls[0]?.callId, 'other'],
      [calls[1]?.callId, 'local'],
    ]);
    const hooks = path.join(harness.environment.root, 'hooks');
    const inputs = readdirSync(hooks)
      .filter((name) => name.startsWith('input-'))
      .map((name) => JSON.parse(readFileSync(path.join(hooks, name), 'utf8')) as { executor: string; cwd: string; arguments: { executor?: string } });
    expect(inputs.map((input) => [input.arguments.executor ?? 'local', input.executor, input.cwd]).sort()).toEqual([
      ['local', 'local', harness.environment.workDir],
      ['nowhere', 'local', harness.environment.workDir],
      ['other', 'other', elsewhere],
    ]);
  });

  it('refuses a work location naming an unknown executor or a relative directory', async () => {
    harness = await startInProcessServer('responses: []\n');
    const unknown = await harness.client.request('conversation/create', { workLocation: [{ executor: 'mars', cwd: '/tmp' }] }).catch((error: Error) => error);
    expect((unknown as Error).message).toContain('executor "mars" is not configured');
    const relative = await harness.client.request('conversation/create', { cwd: 'relative/dir' }).catch((error: Error) => error);
    expect((relative as Error).message).toMatch(/cwd: must be an absolute path/);
    const both = await harness.client.request('conversation/create', {} as never).catch((error: Error) => error);
    expect((both as Error).message).toContain('give either cwd');
  });

  it('refuses a working directory that does not exist or is not a directory on its executor, before any turn', async () => {
    harness = await startInProcessServer('responses: []\n', {
      beforeStart: (environment) => {
        writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  sandbox:\n    kind: virtual\n    files:\n      notes.txt: "x"\n');
        writeFileSync(path.join(environment.workDir, 'a-file.txt'), 'not a directory');
      },
    });
    const refusal = (params: MethodParams<'conversation/create'>) =>
      harness!.client.request('conversation/create', params).then(
        () => 'accepted',
        (error: Error & { code?: number }) => `${error.code} ${error.message}`,
      );
    const missing = path.join(harness.environment.workDir, 'no-such-dir');
    expect(await refusal({ cwd: missing })).toBe(`-32602 conversation/create: params.cwd: cwd ${missing} does not exist on executor "local"`);
    const file = path.join(harness.environment.workDir, 'a-file.txt');
    expect(await refusal({ cwd: file })).toContain(`cwd ${file} is not a directory on executor "local"`);
    // Another executor is asked about its own file system: the local work dir is not there.
    expect(await refusal({ cwd: harness.environment.workDir, executor: 'sandbox' })).toContain(`does not exist on executor "sandbox"`);
    expect(await refusal({ cwd: '/workspace/notes.txt', executor: 'sandbox' })).toContain('is not a directory on executor "sandbox"');
    expect(await refusal({ workLocation: [{ executor: 'local', cwd: harness.environment.workDir }, { executor: 'sandbox', cwd: '/missing' }] })).toContain('params.workLocation: cwd /missing does not exist on executor "sandbox"');
    expect(await refusal({ cwd: '/workspace', executor: 'sandbox' })).toBe('accepted');
    const listed = await harness.client.request('conversation/list', {});
    // Only the accepted one exists.
    expect(listed.conversations.map((conversation) => conversation.cwd)).toEqual(['/workspace']);
  });
});

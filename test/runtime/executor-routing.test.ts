/**
 * A conversation on several executors: each environment tool is offered once with an
 * `executor` argument, and calls run where they name.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Item, MethodParams } from '../../src/protocol/index.js';
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
    expect(calls[2]?.output).toContain('expected one of local, sandbox');
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
    expect((bad as Error).message).toContain('cwd must be an absolute path');
  });

  it('refuses a work location naming an unknown executor or a relative directory', async () => {
    harness = await startInProcessServer('responses: []\n');
    const unknown = await harness.client.request('conversation/create', { workLocation: [{ executor: 'mars', cwd: '/tmp' }] }).catch((error: Error) => error);
    expect((unknown as Error).message).toContain('executor "mars" is not configured');
    const relative = await harness.client.request('conversation/create', { cwd: 'relative/dir' }).catch((error: Error) => error);
    expect((relative as Error).message).toContain('cwd must be an absolute path');
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

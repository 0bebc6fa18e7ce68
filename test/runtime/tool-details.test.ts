/**
 * Typed tool details on `tool_call` items, over a real WebSocket against a real server with
 * the mock provider: what is known before a call runs arrives in `item/started`, the whole in
 * `item/completed`, for commands (background ones driven by write_stdin and kill_command
 * too), file changes, MCP tools, subagents, searches, reads and directory listings.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MockProviderServer, parseMockScript } from '../../src/models/mock/index.js';
import type { MockResponseEntry } from '../../src/models/mock/script.js';
import type { AnyNotification, Item, ToolDetails } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { GROWING_SERVER, writeConfig, yamlString } from '../mcp/mcp-helpers.js';

let harness: InProcessServer | undefined;
const extraMocks: MockProviderServer[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await Promise.all(extraMocks.splice(0).map((mock) => mock.stop()));
});

type ToolCallItem = Extract<Item, { kind: 'tool_call' }>;

function toolCalls(): ToolCallItem[] {
  return harness!.completedItems().filter((item): item is ToolCallItem => item.kind === 'tool_call');
}

/** The `details` of the `item/started` of a tool call item. */
function startedDetails(itemId: string): unknown {
  const started = harness!.events.find((event) => event.method === 'item/started' && event.params.itemId === itemId) as Extract<AnyNotification, { method: 'item/started' }> | undefined;
  expect(started).toBeDefined();
  return started?.params.partial.details;
}

async function runTurn(script: string, input = 'go', options: Parameters<typeof startInProcessServer>[1] = {}): Promise<ToolCallItem[]> {
  harness = await startInProcessServer(script, options);
  const conversationId = await harness.conversation();
  const { turnId } = await harness.client.request('session/input', { conversationId, input });
  // A subagent's turn may end first: wait for this one.
  const ended = await harness.waitFor((event) => event.method === 'turn/completed' && event.params.turn.id === turnId, 30_000);
  expect((ended as Extract<AnyNotification, { method: 'turn/completed' }>).params.turn.status).toBe('completed');
  return toolCalls();
}

describe('tool details', () => {
  it('command: command and absolute cwd at start; exit code, signal, duration and the output without the status line at completion', async () => {
    const calls = await runTurn(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "printf 'one\\\\ntwo\\\\n'; exit 3", cwd: sub } }]
  - text: "done"
`,
      'go',
      { beforeStart: (environment) => mkdirSync(path.join(environment.workDir, 'sub')) },
    );
    const call = calls[0] as ToolCallItem;
    const cwd = (startedDetails(call.id) as { cwd: string }).cwd;
    expect(startedDetails(call.id)).toEqual({ kind: 'command', command: "printf 'one\\ntwo\\n'; exit 3", cwd });
    expect(path.isAbsolute(cwd) && cwd.endsWith(`${path.sep}sub`)).toBe(true);
    expect(call.details).toMatchObject({ kind: 'command', command: "printf 'one\\ntwo\\n'; exit 3", cwd, exitCode: 3, signal: null, output: 'one\ntwo\n' });
    expect((call.details as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(0);
    // The status line is for the model only.
    expect(call.output).toContain('[exit code 3]');
    expect(JSON.stringify(call.details)).not.toContain('exit code');
    // The output streamed as it came.
    const streamed = harness!.events.flatMap((event) => (event.method === 'item/delta' && event.params.itemId === call.id ? [event.params.delta.output ?? ''] : [])).join('');
    expect(streamed).toBe('one\ntwo\n');
  });

  it('command: a background command (yield_after_ms) has details too, without the status line', async () => {
    const [call] = await runTurn(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo quick", yield_after_ms: 5000 } }]
  - text: "done"
`);
    expect(call?.details).toMatchObject({ kind: 'command', command: 'echo quick', exitCode: 0, signal: null, output: 'quick\n' });
  });

  it('fileChange: unified diffs for add, update, delete and move, at start and at completion', async () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: added.txt',
      '+new line',
      '*** Update File: edited.txt',
      '@@',
      ' alpha',
      '-beta',
      '+BETA',
      ' gamma',
      '*** Delete File: gone.txt',
      '*** Update File: old/name.txt',
      '*** Move to: new/name.txt',
      '@@',
      '-moved text',
      '+moved text, changed',
      '*** End Patch',
    ].join('\n');
    const calls = await runTurn(
      `
responses:
  - toolCalls: [{ name: apply_patch, arguments: { patch: ${JSON.stringify(patch)} } }]
  - text: "patched"
`,
      'go',
      {
        beforeStart: (environment) => {
          writeFileSync(path.join(environment.workDir, 'edited.txt'), 'alpha\nbeta\ngamma\n');
          writeFileSync(path.join(environment.workDir, 'gone.txt'), 'bye\n');
          mkdirSync(path.join(environment.workDir, 'old'));
          writeFileSync(path.join(environment.workDir, 'old', 'name.txt'), 'moved text\n');
        },
      },
    );
    const call = calls[0] as ToolCallItem;
    expect(call.isError).toBe(false);
    const expected: ToolDetails = {
      kind: 'fileChange',
      changes: [
        { path: 'added.txt', kind: 'add', unifiedDiff: '--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1,1 @@\n+new line\n' },
        { path: 'edited.txt', kind: 'update', unifiedDiff: '--- a/edited.txt\n+++ b/edited.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n' },
        { path: 'gone.txt', kind: 'delete', unifiedDiff: '--- a/gone.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n' },
        { path: 'old/name.txt', kind: 'move', movePath: 'new/name.txt', unifiedDiff: '--- a/old/name.txt\n+++ b/new/name.txt\n@@ -1,1 +1,1 @@\n-moved text\n+moved text, changed\n' },
      ],
    };
    expect(startedDetails(call.id)).toEqual(expected);
    expect(call.details).toEqual(expected);
  });

  it('fileChange: a patch that fails keeps only the changes it applied', async () => {
    const patch = ['*** Begin Patch', '*** Add File: first.txt', '+ok', '*** Update File: missing.txt', '@@', '-x', '+y', '*** End Patch'].join('\n');
    const [call] = await runTurn(`
responses:
  - toolCalls: [{ name: apply_patch, arguments: { patch: ${JSON.stringify(patch)} } }]
  - text: "failed"
`);
    expect(call?.isError).toBe(true);
    // first.txt was written before the update of missing.txt failed: its change is kept, and shown.
    expect(call?.details).toEqual({ kind: 'fileChange', changes: [{ path: 'first.txt', kind: 'add', unifiedDiff: '--- /dev/null\n+++ b/first.txt\n@@ -0,0 +1,1 @@\n+ok\n' }] });
  });

  it('mcp: the server and the tool by their own names, and the server result', async () => {
    const [call] = await runTurn(
      `
responses:
  - toolCalls: [{ name: mcp__growing__echo, arguments: { text: "hello" } }]
  - text: "echoed"
`,
      'go',
      { beforeStart: writeConfig({ mcp: `servers:\n  growing:\n    transport: stdio\n    command: ${yamlString(process.execPath)}\n    args: [${yamlString(GROWING_SERVER)}]\n` }) },
    );
    expect(call?.toolName).toBe('mcp__growing__echo');
    expect(startedDetails(call!.id)).toEqual({ kind: 'mcp', server: 'growing', tool: 'echo' });
    expect(call?.details).toMatchObject({ kind: 'mcp', server: 'growing', tool: 'echo', result: { content: [{ type: 'text', text: 'echo: hello' }] } });
  });

  it('subagent: the session ids a collaboration call acted on, and where each stood when it ended', async () => {
    const child = new MockProviderServer(parseMockScript('responses:\n  - text: "child answer"\n', 'child.yaml'));
    extraMocks.push(child);
    const { baseURL } = await child.start({ port: 0 });
    const calls = await runTurn(
      `
responses:
  - toolCalls: [{ name: spawn_agent, arguments: { task: "look around", model: "child/m" } }]
  - toolCalls: [{ name: wait_agent, arguments: { timeout_ms: 20000 } }]
  - text: "done"
`,
      'go',
      { providersYaml: (parent) => `providers:\n  mock: { kind: openai, baseURL: ${parent}, apiKey: none }\n  child: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n` },
    );
    const [spawn, wait] = calls;
    const childId = (spawn?.structured as { id: string }).id;
    expect(childId).toMatch(/^sess_/);
    expect(spawn?.details).toEqual({ kind: 'subagent', sessionIds: [childId], states: [{ sessionId: childId, status: 'running' }] });
    expect(wait?.details).toEqual({ kind: 'subagent', sessionIds: [childId], states: [{ sessionId: childId, status: 'completed' }] });
  });

  it('search and read: glob and grep with pattern, absolute path and matches; read_file with path and lines', async () => {
    const calls = await runTurn(
      `
responses:
  - toolCalls:
      - { name: glob, arguments: { pattern: "*.md" } }
      - { name: grep, arguments: { pattern: "needle", path: docs } }
      - { name: read_file, arguments: { path: docs/a.md, start_line: 2 } }
  - text: "found"
`,
      'go',
      {
        beforeStart: (environment) => {
          mkdirSync(path.join(environment.workDir, 'docs'));
          writeFileSync(path.join(environment.workDir, 'docs', 'a.md'), 'one\nneedle two\nthree\n');
          writeFileSync(path.join(environment.workDir, 'docs', 'b.md'), 'needle\n');
        },
      },
    );
    const [glob, grep, read] = calls;
    const docs = (grep?.details as { path: string }).path;
    expect(path.isAbsolute(docs) && docs.endsWith(`${path.sep}docs`)).toBe(true);
    expect(startedDetails(glob!.id)).toEqual({ kind: 'search', tool: 'glob', pattern: '*.md', path: path.dirname(docs) });
    expect(glob?.details).toEqual({ kind: 'search', tool: 'glob', pattern: '*.md', path: path.dirname(docs), matches: 2 });
    expect(startedDetails(grep!.id)).toEqual({ kind: 'search', tool: 'grep', pattern: 'needle', path: docs });
    expect(grep?.details).toEqual({ kind: 'search', tool: 'grep', pattern: 'needle', path: docs, matches: 2 });
    expect(startedDetails(read!.id)).toEqual({ kind: 'read', path: path.join(docs, 'a.md') });
    expect(read?.details).toEqual({ kind: 'read', path: path.join(docs, 'a.md'), startLine: 2, endLine: 3, totalLines: 3 });
  });

  it('command: write_stdin and kill_command name the background command, its cwd, its exit code once ended and the output of the call', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo ready; while read line; do echo \\"got: $line\\"; done", cwd: sub, yield_after_ms: 1000 } }]
  - text: "started"
  - toolCalls: [{ name: write_stdin, arguments: { command_id: COMMAND_ID, input: "ping\\n", yield_after_ms: 1000 } }]
  - toolCalls: [{ name: kill_command, arguments: { command_id: COMMAND_ID } }]
  - toolCalls: [{ name: write_stdin, arguments: { command_id: COMMAND_ID, input: "" } }]
  - text: "stopped"
`,
      { beforeStart: (environment) => mkdirSync(path.join(environment.workDir, 'sub')) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'start it' });
    await harness.turnsCompleted(1);
    const [start] = toolCalls();
    const id = /command_id (cmd_[0-9a-z]+)/.exec(start?.output ?? '')?.[1] ?? '';
    expect(id).not.toBe('');
    const command = 'echo ready; while read line; do echo "got: $line"; done';
    const cwd = (start?.details as { cwd: string }).cwd;
    expect(cwd.endsWith(`${path.sep}sub`)).toBe(true);
    for (const entry of (harness.environment.mock as unknown as { entries: MockResponseEntry[] }).entries) {
      for (const call of entry.toolCalls ?? []) if (typeof call.arguments === 'object' && call.arguments.command_id === 'COMMAND_ID') call.arguments.command_id = id;
    }
    await harness.client.request('session/input', { conversationId, input: 'talk to it, then stop it' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    const [written, killed, readAfter] = toolCalls().slice(1);
    expect(written).toMatchObject({ toolName: 'write_stdin', isError: false });
    expect(written?.details).toMatchObject({ kind: 'command', command, cwd, exitCode: null, signal: null, output: 'got: ping\n' });
    expect(written?.output).toContain('[still running as command_id');
    expect(JSON.stringify(written?.details)).not.toContain('still running');
    expect(killed).toMatchObject({ toolName: 'kill_command' });
    expect(killed?.details).toMatchObject({ kind: 'command', command, cwd, exitCode: null, output: '' });
    expect((killed?.details as { signal: string | null }).signal).toMatch(/^SIG/);
    expect((killed?.details as { durationMs: number }).durationMs).toBeGreaterThan(0);
    expect(readAfter?.details).toMatchObject({ kind: 'command', command, cwd, signal: (killed?.details as { signal: string }).signal, output: '' });
  });

  it('list: list_dir gives the absolute directory and depth at start, and the entries found at completion', async () => {
    const calls = await runTurn(
      `
responses:
  - toolCalls: [{ name: list_dir, arguments: { path: docs, depth: 2 } }]
  - text: "listed"
`,
      'go',
      {
        beforeStart: (environment) => {
          mkdirSync(path.join(environment.workDir, 'docs', 'deep'), { recursive: true });
          writeFileSync(path.join(environment.workDir, 'docs', 'a.md'), 'a\n');
          writeFileSync(path.join(environment.workDir, 'docs', 'deep', 'b.md'), 'b\n');
        },
      },
    );
    const list = calls[0] as ToolCallItem;
    const docs = (list.details as { path: string }).path;
    expect(path.isAbsolute(docs) && docs.endsWith(`${path.sep}docs`)).toBe(true);
    expect(startedDetails(list.id)).toEqual({ kind: 'list', path: docs, depth: 2 });
    expect(list.details).toEqual({ kind: 'list', path: docs, depth: 2, entries: 3 });
  });
});

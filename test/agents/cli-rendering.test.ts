/**
 * How `openvaala conversations show` and `openvaala exec` print items: every kind of the
 * protocol has a rendering, and `plan` and `agent_change` items made by a real server (over a
 * real WebSocket, mock provider) read as steps with status marks and `agent: from → to`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runConversationShow } from '../../src/cli/conversations.js';
import { execItemDisplay, HumanRenderer, itemFormats, type OutputStreams } from '../../src/cli/exec-output.js';
import { ItemSchema } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function captured(): { streams: OutputStreams; stdout: () => string; stderr: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return { streams: { stdout, stderr }, stdout: () => out, stderr: () => err };
}

const kinds = ItemSchema.options.map((option) => option.shape.kind.value).sort();

describe('item renderings', () => {
  it('has a transcript form and an exec display for every item kind of the protocol, and no other', () => {
    expect(kinds.length).toBeGreaterThan(0);
    expect(Object.keys(itemFormats).sort()).toEqual(kinds);
    expect(Object.keys(execItemDisplay).sort()).toEqual(kinds);
  });

  it('shows a plan with its step marks and an agent change, in conversations show and in exec', async () => {
    const steps = [
      { step: 'Read the parser', status: 'completed' },
      { step: 'Fix the off-by-one', status: 'in_progress' },
      { step: 'Run the tests', status: 'pending' },
    ];
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: update_plan, arguments: { explanation: "Small fix", plan: ${JSON.stringify(steps)} } }]
  - text: "planned"
  - text: "reviewed"
`,
      { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  coder: { default: true }\n  reviewer: { description: Reviews }\n') },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'fix it' });
    await harness.turnsCompleted(1);
    await harness.client.request('session/setAgent', { conversationId, agent: 'reviewer' });
    await harness.client.request('session/input', { conversationId, input: 'review it' });
    const turns = await harness.turnsCompleted(2);
    expect(turns.map((turn) => turn.status)).toEqual(['completed', 'completed']);
    const expectedPlan = 'plan: Small fix\n  [x] Read the parser\n  [>] Fix the off-by-one\n  [ ] Run the tests\n';

    // conversations show, against the running server (found through its server info).
    const show = captured();
    expect(await runConversationShow(harness.environment.paths, conversationId, { json: false, requireConfigDir: false }, show.streams)).toBe(0);
    expect(show.stdout()).toContain(expectedPlan);
    expect(show.stdout()).toContain('agent: coder → reviewer\n');
    expect(show.stdout().indexOf('agent: coder → reviewer')).toBeGreaterThan(show.stdout().indexOf('[ ] Run the tests'));

    // exec's renderer, fed the events the client received.
    const exec = captured();
    const renderer = new HumanRenderer(exec.streams);
    for (const event of harness.events) renderer.render(event);
    renderer.endLine();
    expect(exec.stdout()).toContain(expectedPlan);
    expect(exec.stdout()).toContain('agent: coder → reviewer\n');
    expect(exec.stdout()).toContain('reviewed');
  });
});

describe('exec output of tool calls that run at the same time', () => {
  const started = (itemId: string, command: string) => ({ method: 'item/started', params: { conversationId: 'c', sessionId: 's', turnId: 't', itemId, kind: 'tool_call', seq: 1, partial: { toolName: 'exec_command', arguments: { command } } } });
  const output = (itemId: string, text: string) => ({ method: 'item/delta', params: { conversationId: 'c', sessionId: 's', turnId: 't', itemId, kind: 'tool_call', seq: 1, delta: { output: text } } });
  const completed = (id: string, text: string) => ({ method: 'item/completed', params: { conversationId: 'c', sessionId: 's', seq: 2, item: { id, kind: 'tool_call', toolName: 'exec_command', output: text, exitCode: 0, status: 'completed', isError: false, durationMs: 5 } } });
  const render = (renderer: HumanRenderer, events: object[]) => events.forEach((event) => renderer.render(event as Parameters<HumanRenderer['render']>[0]));

  it('streams the output of a call running alone, under its header', () => {
    const out = captured();
    render(new HumanRenderer(out.streams), [started('a', 'echo one'), output('a', 'one\n'), completed('a', 'one\n')]);
    expect(out.stdout()).toBe('▸ exec_command echo one\n  │ one\n  ✓ exec_command exit 0 (5 ms)\n');
  });

  it('shows no interleaved lines while two calls run: each output comes with a closing line that names its call', () => {
    const out = captured();
    render(new HumanRenderer(out.streams), [started('a', 'echo one'), output('a', 'one\n'), started('b', 'echo two'), output('b', 'two\n'), output('a', 'one again\n'), completed('b', 'two\n'), completed('a', 'one\none again\n')]);
    expect(out.stdout()).toBe(
      [
        '▸ exec_command echo one',
        // Alone so far: streamed.
        '  │ one',
        '▸ exec_command echo two',
        '  │ two',
        '  ✓ exec_command echo two exit 0 (5 ms)',
        '  │ one again',
        '  ✓ exec_command echo one exit 0 (5 ms)',
        '',
      ].join('\n'),
    );
  });
});

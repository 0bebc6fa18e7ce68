/**
 * Background commands through a real server: started in one turn, still running and
 * reachable in the next, killed when their session closes or the server stops.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MockResponseEntry } from '../../src/models/mock/script.js';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { processGone, until } from '../helpers/processes.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** Prints its shell's pid (the process group leader), then answers each input line. */
const ECHO_LOOP = 'echo "pid $$"; echo ready; while read line; do echo "got: $line"; done';

function toolOutputs(server: InProcessServer, toolName: string): string[] {
  return server.completedItems().flatMap((item: Item) => (item.kind === 'tool_call' && item.toolName === toolName ? [item.output] : []));
}

/**
 * The command id only exists once the first turn ran, so later tool calls of the script name
 * it through a placeholder that is filled in before the request that serves them.
 */
function fillPlaceholder(server: InProcessServer, placeholder: string, value: string): void {
  const entries = (server.environment.mock as unknown as { entries: MockResponseEntry[] }).entries;
  for (const entry of entries) {
    for (const call of entry.toolCalls ?? []) {
      if (typeof call.arguments === 'object') {
        for (const [key, argument] of Object.entries(call.arguments)) if (argument === placeholder) call.arguments[key] = value;
      }
    }
  }
}

describe('background commands in a session', () => {
  it('outlive the turn that started them, answer in the next turn, and die with the session', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: ${JSON.stringify(ECHO_LOOP)}, yield_after_ms: 1000 } }]
  - text: "started"
  - toolCalls:
      - { name: list_commands, arguments: {} }
      - { name: write_stdin, arguments: { command_id: COMMAND_ID, input: "ping\\n", yield_after_ms: 1000 } }
  - text: "answered"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'start a server' });
    const [first] = await harness.turnsCompleted(1);
    expect(first?.status).toBe('completed');
    const [startOutput = ''] = toolOutputs(harness, 'exec_command');
    expect(startOutput).toContain('ready');
    const id = /command_id (cmd_[0-9a-z]+)/.exec(startOutput)?.[1] ?? '';
    const pid = Number(/pid (\d+)/.exec(startOutput)?.[1]);
    expect(id).not.toBe('');
    expect(pid).toBeGreaterThan(0);
    expect(processGone(pid)).toBe(false);

    fillPlaceholder(harness, 'COMMAND_ID', id);
    await harness.client.request('session/input', { conversationId, input: 'is it still there?' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    const [listed = ''] = toolOutputs(harness, 'list_commands');
    expect(listed).toMatch(new RegExp(`${id}\\s+running\\s+pid ${pid}`));
    const [answered = ''] = toolOutputs(harness, 'write_stdin');
    expect(answered).toContain('got: ping');
    expect(answered).toContain(`[still running as command_id ${id}`);
    expect(processGone(pid)).toBe(false);

    const conversation = await harness.server.runtime.getConversation(conversationId);
    await conversation.rootSession.close();
    await until(() => processGone(pid), 5000, 'the command to die with its session');
  });

  it('are killed when the server stops', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo \\"pid $$\\"; sleep 300 & wait", yield_after_ms: 2000 } }]
  - text: "left running"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'start it' });
    await harness.turnsCompleted(1);
    const [output = ''] = toolOutputs(harness, 'exec_command');
    const pid = Number(/pid (\d+)/.exec(output)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(output).toContain('[still running as command_id');
    expect(processGone(pid)).toBe(false);
    const stopping = harness;
    harness = undefined;
    await stopping.stop();
    await until(() => processGone(pid), 5000, 'the command to die with the server');
  });
});

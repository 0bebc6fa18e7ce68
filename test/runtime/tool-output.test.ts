/**
 * What the model reads of a tool result, through a real turn with the mock provider (which
 * records every request): terminal control is cleaned, a long log keeps its end after one
 * marker naming the omitted range, and the stored item keeps the output as the command wrote it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** The tool results of a recorded Responses API request, by call id. */
function toolResultsSent(body: unknown): Map<string, string> {
  const results = new Map<string, string>();
  for (const entry of (body as { input: { type: string; call_id?: string; output?: unknown }[] }).input) {
    if (entry.type === 'function_call_output' && entry.call_id) results.set(entry.call_id, typeof entry.output === 'string' ? entry.output : JSON.stringify(entry.output));
  }
  return results;
}

describe('tool output sent to the model', () => {
  it('is cleaned of colours and progress redraws, and a long log keeps its end after a marker', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls:
      - { id: colours, name: exec_command, arguments: { command: 'printf ''\\033[32mok\\033[0m\\n''' } }
      - { id: progress, name: exec_command, arguments: { command: 'printf ''downloading 10%%\\rdownloading 60%%\\rdownloading 100%%\\n\\033]8;;https://example.com\\033\\\\docs\\033]8;;\\033\\\\\\n''' } }
      - { id: log, name: exec_command, arguments: { command: 'i=1; while [ $i -le 4000 ]; do echo "[$i/4000] compiling src/ui/feature.ts ok"; i=$((i+1)); done; echo "error TS2304: cannot find name answer"; exit 2' } }
  - text: "read them"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'build it' });
    await harness.turnsCompleted(1);

    const sent = toolResultsSent(harness.environment.mock.requests[1]?.body);
    expect(sent.get('colours')).toBe('ok\n[exit code 0]');
    expect(sent.get('progress')).toBe('downloading 100%\ndocs\n[exit code 0]');
    const log = sent.get('log') as string;
    expect(log.endsWith('[4000/4000] compiling src/ui/feature.ts ok\nerror TS2304: cannot find name answer\n[exit code 2]')).toBe(true);
    expect(log.startsWith('[1/4000] compiling src/ui/feature.ts ok\n')).toBe(true);
    const marker = /\n\[… (\d+) bytes omitted \(bytes (\d+)–(\d+) of (\d+), lines (\d+)–(\d+) of 4002\) …\]\n/.exec(log);
    expect(marker).not.toBeNull();
    const [, omitted, fromByte, toByte, , fromLine, toLine] = (marker as RegExpExecArray).map(Number);
    expect(toByte! - fromByte! + 1).toBe(omitted);
    // The lines around the marker are the ones just outside the named range.
    const before = log.slice(0, (marker as RegExpExecArray).index).split('\n').at(-1);
    const after = log.slice((marker as RegExpExecArray).index + (marker as RegExpExecArray)[0].length).split('\n')[0];
    expect(before).toBe(`[${fromLine! - 1}/4000] compiling src/ui/feature.ts ok`);
    expect(after).toBe(`[${toLine! + 1}/4000] compiling src/ui/feature.ts ok`);
    expect(Buffer.byteLength(log)).toBeLessThanOrEqual(64 * 1024);

    // The stored items keep what a terminal needs, and the whole log.
    const calls = harness.completedItems().filter((item): item is Extract<Item, { kind: 'tool_call' }> => item.kind === 'tool_call');
    expect(calls[0]?.output).toBe('\u001b[32mok\u001b[0m\n[exit code 0]');
    expect(calls[1]?.output).toContain('downloading 10%\rdownloading 60%\r');
    expect(calls[2]?.output).not.toContain('bytes omitted');
    expect(calls[2]?.output.split('\n')).toHaveLength(4002);
  }, 60_000);
});

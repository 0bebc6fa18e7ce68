/**
 * Two `apply_patch` calls on one file through real turns (runtime server, mock provider over
 * HTTP): two calls in one model reply, and one call in each of two conversations running at
 * the same time. Both edits must be in the file afterwards.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyNotification, Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const SMALL = 'alpha\nbeta\ngamma\ndelta\n';

/** A mock-script tool call replacing one line of small.txt (YAML flow mapping). */
function patchCall(from: string, to: string): string {
  const patch = ['*** Begin Patch', '*** Update File: small.txt', '@@', `-${from}`, `+${to}`, '*** End Patch'].join('\\n');
  return `{ name: apply_patch, arguments: { patch: "${patch}" } }`;
}

type ToolCallItem = Extract<Item, { kind: 'tool_call' }>;

function toolCalls(events: AnyNotification[]): { conversationId: string; item: ToolCallItem }[] {
  return events.flatMap((event) =>
    event.method === 'item/completed' && event.params.item.kind === 'tool_call' ? [{ conversationId: event.params.conversationId, item: event.params.item }] : [],
  );
}

describe('apply_patch calls on one file through real turns', () => {
  it('keeps both edits of two calls in one model reply', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls:
      - ${patchCall('alpha', 'ALPHA')}
      - ${patchCall('delta', 'DELTA')}
  - text: "both edited"
`,
      { beforeStart: (environment) => writeFileSync(path.join(environment.workDir, 'small.txt'), SMALL) },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'edit the first and the last line' });
    await harness.turnsCompleted(1);
    const calls = toolCalls(harness.events);
    expect(calls).toHaveLength(2);
    for (const { item } of calls) expect(item.isError, item.output).toBe(false);
    expect(readFileSync(path.join(harness.environment.workDir, 'small.txt'), 'utf8')).toBe('ALPHA\nbeta\ngamma\nDELTA\n');
  });

  it('keeps both edits of two conversations patching the file at the same time', async () => {
    // Both first answers hold before their first delta until both conversations have asked the
    // model: each conversation receives one of the two tool calls, and both go on together.
    harness = await startInProcessServer(
      `
responses:
  - text: "editing the first line now"
    toolCalls: [${patchCall('alpha', 'ALPHA')}]
    holds: [{ afterDeltas: 0, gate: both-asked }]
  - text: "editing the last line now"
    toolCalls: [${patchCall('delta', 'DELTA')}]
    holds: [{ afterDeltas: 0, gate: both-asked }]
  - text: "done"
  - text: "done"
`,
      { beforeStart: (environment) => writeFileSync(path.join(environment.workDir, 'small.txt'), SMALL) },
    );
    const first = await harness.conversation();
    const second = await harness.conversation();
    await Promise.all([
      harness.client.request('session/input', { conversationId: first, input: 'edit a line' }),
      harness.client.request('session/input', { conversationId: second, input: 'edit a line' }),
    ]);
    await harness.environment.mock.waitForRequests(2, 10_000);
    harness.environment.mock.release('both-asked');
    await harness.turnsCompleted(2);
    const calls = toolCalls(harness.events);
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((call) => call.conversationId))).toEqual(new Set([first, second]));
    for (const { item } of calls) expect(item.isError, item.output).toBe(false);
    expect(readFileSync(path.join(harness.environment.workDir, 'small.txt'), 'utf8')).toBe('ALPHA\nbeta\ngamma\nDELTA\n');
  });
});

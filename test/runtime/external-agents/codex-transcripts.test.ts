/**
 * `kind: codex-app-server` against the recorded traffic of codex-cli 0.171.0
 * (../shared/fixtures/codex-app-server/), played by a process on stdio
 * (test/fixtures/codex-transcript-replay.mjs), behind a real server on 127.0.0.1: the recorded
 * file change needing approval becomes an approval relayed to a client and a `tool_call` item
 * with `fileChange` details; the recorded text answer becomes an assistant message with its
 * deltas and the turn's token usage.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyNotification, Item } from '../../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const REPLAY = path.join(ROOT, 'test', 'fixtures', 'codex-transcript-replay.mjs');
const TRANSCRIPTS = path.join(ROOT, '..', 'shared', 'fixtures', 'codex-app-server');

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** Plays `transcript`; `providersYaml` replaces the mock provider's providers.yaml. */
async function replay(transcript: string, providersYaml?: string): Promise<{ conversationId: string; turnId: string }> {
  const file = path.join(TRANSCRIPTS, transcript);
  expect(existsSync(file), `the recorded transcript ${file} is missing`).toBe(true);
  const agents = `agents:\n  codex:\n    default: true\n    kind: codex-app-server\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(REPLAY)}]\n    args: [${JSON.stringify(file)}]\n`;
  harness = await startInProcessServer('responses: []\n', {
    beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agents),
    ...(providersYaml !== undefined ? { providersYaml: () => providersYaml } : {}),
  });
  const conversationId = await harness.conversation();
  const client = harness.client;
  client.onNotification((event) => {
    if (event.method === 'approval/requested') client.request('approval/respond', { conversationId, approvalId: event.params.approval.approvalId, decision: 'allow_once' }).catch(() => undefined);
  });
  const { turnId } = await client.request('session/input', { conversationId, input: 'add a file' });
  return { conversationId, turnId: turnId! };
}

describe('kind: codex-app-server, recorded transcripts', () => {
  it('a file change that needs approval: relayed, allowed, stored with its diff', async () => {
    const { turnId } = await replay('transcript-patch-approval.jsonl');
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn).toMatchObject({ id: turnId, status: 'completed', usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 } });
    const requested = harness!.events.find((event) => event.method === 'approval/requested') as Extract<AnyNotification, { method: 'approval/requested' }>;
    const diff = '--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1,1 @@\n+hello from apply_patch\n';
    expect(requested.params.approval).toMatchObject({ toolName: 'apply_patch', details: { kind: 'fileChange', changes: [{ path: 'hello.txt', kind: 'add', unifiedDiff: diff }] } });
    // A file change request takes every decision, "for the session" included.
    expect(requested.params.approval.options.map((option) => option.decision)).toEqual(['allow_once', 'allow_session', 'deny', 'deny_interrupt']);
    const items = harness!.completedItems();
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'approval', 'tool_call', 'assistant_message']);
    const call = items[2] as Extract<Item, { kind: 'tool_call' }>;
    expect(call).toMatchObject({ id: requested.params.approval.itemId, status: 'completed', isError: false, details: { kind: 'fileChange', changes: [{ path: 'hello.txt', kind: 'add', unifiedDiff: diff }] } });
    expect(items[3]).toMatchObject({ text: 'Hello from the mock Responses server.', model: 'codex/codex' });
  });

  it('a plain answer: its deltas streamed, the message stored; no model provider needed', async () => {
    await replay('transcript-text.jsonl', 'providers: {}\n');
    const { conversations } = await harness!.client.request('conversation/list', {});
    expect(conversations).toHaveLength(1);
    const [turn] = await harness!.turnsCompleted(1);
    expect(turn).toMatchObject({ status: 'completed', model: 'codex-app-server/codex' });
    const deltas = harness!.events.flatMap((event) => (event.method === 'item/delta' ? [event.params.delta.text] : []));
    const answer = harness!.completedItems().find((item) => item.kind === 'assistant_message');
    expect(answer?.kind === 'assistant_message' && answer.text).toBe(deltas.join(''));
    expect(deltas.length).toBeGreaterThan(1);
  });
});

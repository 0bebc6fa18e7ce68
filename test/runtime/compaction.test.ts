/**
 * Compaction (SPEC §6): crossing the threshold in the middle of a turn records a summary and
 * the following requests carry the summary, the latest user request and what came after.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

// 20,000-token window, compaction at 80 % = 16,000 tokens. The first step's scripted usage
// (3,000) plus a 60,000-character tool result (~15,000 tokens) crosses it.
const providers = (baseURL: string) =>
  `providers:\n  mock:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { mock-model: { contextWindow: 20000 } }\ndefaultModel: mock/mock-model\n`;

describe('compaction', () => {
  it('summarises mid-turn and keeps the live task in the next requests', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "head -c 60000 /dev/zero | tr '\\\\0' 'x'" } }]
    usage: { inputTokens: 3000, outputTokens: 10 }
  - text: "SUMMARY-7f3: the user wants the size of the big output; the command printed 60000 x characters."
    usage: { inputTokens: 18000, outputTokens: 40 }
  - toolCalls: [{ name: exec_command, arguments: { command: "echo after-summary-9d2" } }]
    usage: { inputTokens: 3500, outputTokens: 10 }
  - text: "The output was 60000 characters."
    usage: { inputTokens: 3600, outputTokens: 10 }
`,
      { providersYaml: providers },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'USER-REQUEST-41: how big is the output?' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');

    const kinds = harness.completedItems().map((item) => item.kind);
    expect(kinds).toEqual(['user_message', 'tool_call', 'context_summary', 'tool_call', 'assistant_message']);
    const summary = harness.completedItems().find((item): item is Extract<Item, { kind: 'context_summary' }> => item.kind === 'context_summary');
    expect(summary?.text).toContain('SUMMARY-7f3');
    expect(summary?.lastItemId).toBe(harness.completedItems()[1]?.id);

    const requests = harness.environment.mock.requests.map((request) => JSON.stringify(request.body));
    expect(requests).toHaveLength(4);
    // The summary request itself asks for a summary, without tools.
    expect(requests[1]).toContain('Write a summary');
    expect((harness.environment.mock.requests[1]?.body as { tools?: unknown[] }).tools ?? []).toHaveLength(0);
    // After it: the summary and the user's request, not the 60,000 characters.
    for (const request of [requests[2], requests[3]]) {
      expect(request).toContain('SUMMARY-7f3');
      expect(request).toContain('USER-REQUEST-41');
      expect(request).not.toContain('x'.repeat(1000));
    }
    // And the tool call made after the summary, with its result.
    expect(requests[3]).toContain('echo after-summary-9d2');
    expect(requests[3]).toContain('after-summary-9d2\\n');
    // History is never rewritten: the big output is still in the log.
    const stored = await harness.client.request('items/list', { conversationId });
    expect(JSON.stringify(stored.items)).toContain('x'.repeat(1000));
  });

  it('does not compact for a long command output the model reads only up to its cap', async () => {
    // 100,000-token window: compaction at 80,000. `seq 1 40000` prints 229 KB, stored whole (twice,
    // with its details); the model reads 64 KiB of it, about 20,000 tokens with the first step's 3,000.
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "seq 1 40000" } }]
    usage: { inputTokens: 3000, outputTokens: 10 }
  - text: "LONG-OUTPUT-READ"
    usage: { inputTokens: 20000, outputTokens: 10 }
`,
      { providersYaml: (baseURL) => `providers:\n  mock:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { mock-model: { contextWindow: 100000 } }\ndefaultModel: mock/mock-model\n` },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'count to forty thousand' });
    const [turn] = await harness.turnsCompleted(1);
    expect(turn?.status).toBe('completed');
    const items = harness.completedItems();
    expect(items.map((item) => item.kind)).toEqual(['user_message', 'tool_call', 'assistant_message']);
    expect(JSON.stringify(items[1]).length).toBeGreaterThan(400_000);
    expect(harness.environment.mock.requests).toHaveLength(2);
  });

  it('compacts on request, as a turn of its own', async () => {
    harness = await startInProcessServer(`
responses:
  - text: "first answer"
  - text: "MANUAL-SUMMARY-3c1"
  - text: "answer after compaction"
`);
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'QUESTION-ONE' });
    await harness.turnsCompleted(1);
    const compaction = await harness.client.request('session/compact', { conversationId });
    expect(compaction.queued).toBe(false);
    await harness.turnsCompleted(2);
    await harness.client.request('session/input', { conversationId, input: 'QUESTION-TWO' });
    const turns = await harness.turnsCompleted(3);
    expect(turns.map((turn) => turn.status)).toEqual(['completed', 'completed', 'completed']);
    const last = JSON.stringify(harness.environment.mock.requests[2]?.body);
    expect(last).toContain('MANUAL-SUMMARY-3c1');
    expect(last).toContain('QUESTION-TWO');
    expect(last).not.toContain('first answer');
  });

  it('ends the turn with a clear error when what compaction keeps does not fit, after at most one compaction', async () => {
    // 16,000-token window: compaction at 12,800 tokens. A 55 KB skill alone is ~14,000 tokens.
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: load_skill, arguments: { name: huge-guide } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "echo step" } }]
    repeat: 12
`,
      {
        limits: { maxStepsPerTurn: 6 },
        providersYaml: (baseURL) => `providers:\n  mock:\n    kind: openai\n    baseURL: ${baseURL}\n    apiKey: none\n    models: { mock-model: { contextWindow: 16000 } }\ndefaultModel: mock/mock-model\n`,
        beforeStart: (environment) => {
          const folder = path.join(environment.workDir, '.agents', 'skills', 'huge-guide');
          mkdirSync(folder, { recursive: true });
          const body = Array.from({ length: 1130 }, (_, index) => `Rule ${index}: keep every line of this guide in mind.`).join('\n');
          expect(body.length).toBeGreaterThan(55_000);
          writeFileSync(path.join(folder, 'SKILL.md'), `---\nname: huge-guide\ndescription: a very long guide\n---\n${body}\n`);
        },
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'follow the huge guide' });
    const [turn] = await harness.turnsCompleted(1);
    const kinds = harness.completedItems().map((item) => item.kind);
    expect(kinds.filter((kind) => kind === 'context_summary').length).toBeLessThanOrEqual(1);
    // Never two compactions without a model step between them.
    expect(harness.environment.mock.requests.length).toBeLessThanOrEqual(3);
    expect(turn?.status).toBe('failed');
    const error = turn?.error ?? '';
    expect(error).toMatch(/does not fit/);
    expect(error).toMatch(/skill "huge-guide" \(~1[34],\d{3} tokens\)/);
    expect(error).toMatch(/over the compaction threshold of 12,800 tokens \(80 % of the 16,000-token window of mock\/mock-model\) by ~\d{1,3}(,\d{3})? tokens/);
    const failure = harness.completedItems().at(-1);
    expect(failure).toMatchObject({ kind: 'model_error', message: error });
  });

  it('ends the turn when the request is still over the threshold right after a compaction, instead of compacting again', async () => {
    // 20,000-token window: compaction at 16,000. The skill (~9,000 tokens) and the tool schemas
    // fit; the big command output forces a compaction whose long summary no longer fits.
    const longSummary = `SUMMARY-LONG ${'the command printed many x characters. '.repeat(500)}`;
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: load_skill, arguments: { name: mid-guide } }]
  - toolCalls: [{ name: exec_command, arguments: { command: "head -c 60000 /dev/zero | tr '\\\\0' 'x'" } }]
  - text: "${longSummary}"
  - toolCalls: [{ name: exec_command, arguments: { command: "echo step" } }]
    repeat: 6
`,
      {
        limits: { maxStepsPerTurn: 6 },
        providersYaml: providers,
        beforeStart: (environment) => {
          const folder = path.join(environment.workDir, '.agents', 'skills', 'mid-guide');
          mkdirSync(folder, { recursive: true });
          const body = Array.from({ length: 720 }, (_, index) => `Rule ${index}: keep every line of this guide in mind.`).join('\n');
          writeFileSync(path.join(folder, 'SKILL.md'), `---\nname: mid-guide\ndescription: a long guide\n---\n${body}\n`);
        },
      },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'follow the mid guide' });
    const [turn] = await harness.turnsCompleted(1);
    const kinds = harness.completedItems().map((item) => item.kind);
    expect(kinds.filter((kind) => kind === 'context_summary')).toHaveLength(1);
    expect(harness.environment.mock.requests).toHaveLength(3);
    expect(turn?.status).toBe('failed');
    expect(turn?.error).toMatch(/^the context does not fit even after compaction: .* by ~[\d,]+ tokens: .*skill "mid-guide" \(~[\d,]+ tokens\).*summary \(~[\d,]+ tokens\)/);
  });

  it('ends the turn when the provider counts the first request after a compaction over the threshold', async () => {
    // 20,000-token window: compaction at 16,000. The estimate of the kept parts is small, but the
    // provider's count of the request after the summary (16,500) is over: compacting again cannot help.
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo a" } }]
    usage: { inputTokens: 17000, outputTokens: 10 }
  - text: "SUMMARY-ONE"
    usage: { inputTokens: 17000, outputTokens: 10 }
  - toolCalls: [{ name: exec_command, arguments: { command: "echo b" } }]
    usage: { inputTokens: 16500, outputTokens: 10 }
  - text: "SUMMARY-TWO"
  - toolCalls: [{ name: exec_command, arguments: { command: "echo c" } }]
    usage: { inputTokens: 16500, outputTokens: 10 }
  - text: "SUMMARY-THREE"
  - text: "done"
`,
      { limits: { maxStepsPerTurn: 6 }, providersYaml: providers },
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'echo things' });
    const [turn] = await harness.turnsCompleted(1);
    expect(harness.completedItems().filter((item) => item.kind === 'context_summary')).toHaveLength(1);
    expect(harness.environment.mock.requests).toHaveLength(3);
    expect(turn?.status).toBe('failed');
    expect(turn?.error).toMatch(/^the context does not fit even after compaction: the first request after it was 16,500 tokens as the provider counted them, over the compaction threshold of 16,000 tokens \(80 % of the 20,000-token window of mock\/mock-model\) by ~500 tokens: /);
  });
});

/**
 * A turn whose answer the provider cut at its output limit (or stopped with its content
 * filter), as a Codex client sees it. The Codex app-server protocol has no stop reason: Codex
 * itself reports an incomplete model response as an error (`error` notification, then
 * `turn/completed` with status `failed` and the turn's `error`), keeping the text it streamed.
 * `openvaala app-server` does the same, live and in the thread's history, and a normal finish
 * stays `completed` without an error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { CodexTestClient } from './codex-client.js';
import { CodexSchema } from './codex-schema.js';

const schema = new CodexSchema();
let server: InProcessServer | undefined;
let client: CodexTestClient | undefined;

afterEach(async () => {
  await client?.stop();
  client = undefined;
  await server?.stop();
  server = undefined;
});

type CodexTurn = { id: string; status: string; error: { message: string; codexErrorInfo?: unknown } | null; items: { type: string; text?: string }[] };

const CUT = "the answer was cut at the model's output limit (max_tokens) and may be incomplete";
const FILTERED = "the provider's content filter stopped the answer (refusal); it may be incomplete";

describe('openvaala app-server: a turn cut at the output limit or stopped by the content filter', { timeout: 60_000 }, () => {
  it('fails the Codex turn with an error saying why, after the text it streamed, as Codex does; a normal finish completes', async () => {
    server = await startInProcessServer(`responses:
  - text: "The report starts here and"
    incompleteReason: max_output_tokens
  - text: "I cannot"
    incompleteReason: content_filter
  - text: "A whole answer."
`);
    client = await CodexTestClient.start('stdio', server.environment.env, server.environment.workDir);
    await client.initialize();
    const codex = client;
    const { thread } = await codex.request<{ thread: { id: string } }>('thread/start', { cwd: server.environment.workDir, approvalPolicy: 'never' });

    const ends: CodexTurn[] = [];
    for (const prompt of ['write the long report', 'tell me', 'say it whole']) {
      const { turn } = await codex.request<{ turn: { id: string } }>('turn/start', { threadId: thread.id, input: [{ type: 'text', text: prompt, text_elements: [] }] });
      const ended = await codex.waitFor((msg) => msg.method === 'turn/completed' && (msg.params as { turn: { id: string } }).turn.id === turn.id, `turn/completed of "${prompt}"`);
      ends.push((ended.params as { turn: CodexTurn }).turn);
    }
    expect(ends.map((turn) => [turn.status, turn.error?.message ?? null])).toEqual([
      ['failed', CUT],
      ['failed', FILTERED],
      ['completed', null],
    ]);
    // Codex's own kind for an incomplete response; a client that reads only the kind still sees an error.
    expect(ends[0]?.error?.codexErrorInfo).toBe('other');

    // The error notification comes before its turn's end, and is final (not retried).
    const messages = codex.log.filter((entry) => entry.dir === 's->c').map((entry) => entry.msg);
    for (const [index, message] of [CUT, FILTERED].entries()) {
      const turnId = ends[index]!.id;
      const error = messages.findIndex((msg) => msg.method === 'error' && (msg.params as { turnId: string; error: { message: string } }).turnId === turnId);
      const end = messages.findIndex((msg) => msg.method === 'turn/completed' && (msg.params as { turn: { id: string } }).turn.id === turnId);
      expect(error, `error notification of turn ${index + 1}`).toBeGreaterThanOrEqual(0);
      expect(error).toBeLessThan(end);
      expect(messages[error]?.params).toMatchObject({ threadId: thread.id, turnId, willRetry: false, error: { message } });
    }
    // The cut text itself is delivered.
    const answers = messages.filter((msg) => msg.method === 'item/completed').map((msg) => (msg.params as { item: { type: string; text?: string } }).item).filter((item) => item.type === 'agentMessage');
    expect(answers.map((item) => item.text)).toEqual(['The report starts here and', 'I cannot', 'A whole answer.']);

    // The thread's history says the same.
    const read = await codex.request<{ thread: { turns: CodexTurn[] } }>('thread/read', { threadId: thread.id, includeTurns: true });
    expect(read.thread.turns.map((turn) => [turn.status, turn.error?.message ?? null])).toEqual([
      ['failed', CUT],
      ['failed', FILTERED],
      ['completed', null],
    ]);
    expect(schema.check(codex.log)).toEqual([]);
  });
});

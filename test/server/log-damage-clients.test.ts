/**
 * Damage in a conversation's logs reaches every client that opens it: `conversation/subscribe`
 * says what was skipped, the web UI's conversation state holds it for its banner, and the
 * terminal UI shows it as a warning in the transcript.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { ConversationController } from '../../src/tui/conversation-controller.js';
import { ConversationState, type ConversationRequester } from '../../src/www/state/conversation-state.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment | undefined;
let server: RunningServer | undefined;
let client: RuntimeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.stop();
  await environment?.dispose();
  client = server = environment = undefined;
});

async function connect(test: TestEnvironment): Promise<RuntimeClient> {
  server = await startRuntimeServer({ paths: test.paths, port: 0, logger: createLogger('silent') });
  client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'test' });
  return client;
}

it('is named by conversation/subscribe, held by the web UI state and shown by the terminal UI', async () => {
  environment = await createTestEnvironment('responses:\n  - text: "Answer 1."\n');
  const first = await connect(environment);
  const { conversation } = await first.request('conversation/create', { cwd: environment.workDir });
  await first.request('session/input', { conversationId: conversation.id, input: 'hello' });
  const deadline = Date.now() + 20_000;
  while ((await first.request('conversation/get', { conversationId: conversation.id })).turns[0]?.status !== 'completed') {
    if (Date.now() > deadline) throw new Error('the turn did not complete');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await first.close();
  await server?.stop();
  server = client = undefined;

  const metadataLog = path.join(environment.paths.dataDir, 'conversations', conversation.id, 'metadata.jsonl');
  const line = readFileSync(metadataLog, 'utf8').split('\n').length;
  appendFileSync(metadataLog, 'garbage that is not JSON\n');
  const location = `<data dir>/conversations/${conversation.id}/metadata.jsonl, line ${line}`;

  const second = await connect(environment);
  const subscribed = await second.request('conversation/subscribe', { conversationId: conversation.id, afterSeq: 'head' });
  expect(subscribed.damage).toHaveLength(1);
  expect(subscribed.damage?.[0]?.location).toContain(location);

  const webState = new ConversationState(second as unknown as ConversationRequester, conversation.id);
  await webState.subscribe();
  expect(webState.error).toBeUndefined();
  expect(webState.damage.map((entry) => entry.location)).toEqual(subscribed.damage?.map((entry) => entry.location));

  const terminal = new ConversationController(second, { cwd: environment.workDir });
  await terminal.open(conversation.id);
  // Past the end line of its one turn, one warning: the damage, naming where it is.
  const notices = terminal.model.entries.flatMap((entry) => (entry.notice ? [entry.notice] : []));
  expect(notices.map((notice) => notice.text.split(' · ')[0])).toEqual(['turn completed', expect.stringContaining('damaged')]);
  expect(notices[1]?.tone).toBe('warning');
  expect(notices[1]?.text).toContain(location);
  // The conversation itself still opens: its answer is there.
  expect(terminal.model.entries.some((entry) => entry.item?.kind === 'assistant_message')).toBe(true);
});

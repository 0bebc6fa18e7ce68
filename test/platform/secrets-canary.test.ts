/**
 * Project secrets end to end (docs/platform.md, "Secrets"): a canary value is set as a secret,
 * a turn's command echoes it and the model repeats it, and the raw value appears in no
 * protocol answer, no notification, no file of the data directory (conversation logs, index,
 * platform database) and no server log line; the command did receive it (its output shows
 * `***` where the value was). The answer streams the value split across deltas, and a client
 * subscribing in the middle of it replays the answer so far: neither can put the value back
 * together from what it receives. The workspace `.env` holds it in the managed block, mode 0600.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import type { AnyNotification } from '../../src/protocol/index.js';
import { ENV_BLOCK_BEGIN, ENV_BLOCK_END } from '../../src/platform/secrets/env-file.js';
import { startPlatformServer, type PlatformHarness } from './two-users.js';

const CANARY = 'canary-7f3a9c2e51b04d86';

const SCRIPT = `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo \\"secret is $PLATFORM_CANARY\\"" } }]
  - reasoningDeltas: ["I will quote ${CANARY.slice(0, 11)}", "${CANARY.slice(11)} now."]
    deltas: ["The command printed ${CANARY.slice(0, 11)}", "${CANARY.slice(11, 15)}", "${CANARY.slice(15)} as asked."]
    holds: [{ afterDeltas: 3, gate: mid-canary }]
`;

/** The text a client assembles from the deltas of one field it received, per item, in order. */
function streamedText(events: readonly AnyNotification[], field: 'text' | 'reasoning'): string[] {
  const texts = new Map<string, string>();
  for (const event of events) {
    if (event.method !== 'item/delta' || event.params.delta[field] === undefined) continue;
    texts.set(event.params.itemId, (texts.get(event.params.itemId) ?? '') + event.params.delta[field]);
  }
  return [...texts.values()];
}

let harness: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** Every file under a directory, recursively. */
function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : [];
  });
}

it('a secret reaches the command and is redacted from every output: answers, notifications, logs on disk, server log', async () => {
  const { createTestEnvironment } = await import('../helpers/environment.js');
  const environment = await createTestEnvironment(SCRIPT);
  const serverLog = path.join(environment.root, 'server.log');
  const logger = pino({ level: 'debug' }, pino.destination({ dest: serverLog, sync: true }));
  harness = await startPlatformServer(SCRIPT, { environment, logger });
  const owner = await harness.connect();
  const answers: unknown[] = [];
  const request = async <T>(promise: Promise<T>): Promise<T> => {
    const answer = await promise;
    answers.push(answer);
    return answer;
  };
  const workspace = harness.directory('canary');
  writeFileSync(path.join(workspace, '.env'), 'USER_OWN=keep-me\n# a comment of the user\n');
  const { project } = await request(owner.client.request('projects/create', { name: 'Canary', workspace: { executor: 'local', directory: workspace } }));
  await request(owner.client.request('projects/secrets/set', { projectId: project.id, name: 'PLATFORM_CANARY', value: CANARY }));
  await request(owner.client.request('conversations/subscribe', {}));
  const { conversation } = await request(owner.client.request('conversation/create', { projectId: project.id }));
  await request(owner.client.request('conversation/subscribe', { conversationId: conversation.id }));
  // The server logs a value it was given (here: a title), as it may log anything a client sends.
  harness.server.runtime.logger?.warn({ title: `about ${CANARY}` }, `a log line quoting ${CANARY}`);
  await request(owner.client.request('session/input', { conversationId: conversation.id, input: 'print the secret' }));
  // The answer streams the value split across deltas; a client subscribing mid-answer replays it.
  await expect.poll(() => streamedText(owner.events, 'text').some((text) => text.startsWith('The command printed'))).toBe(true);
  const late = await harness.connect();
  await request(late.client.request('conversation/subscribe', { conversationId: conversation.id }));
  await expect.poll(() => late.events.some((event) => event.method === 'conversation/synced')).toBe(true);
  environment.mock.release('mid-canary');
  await expect.poll(() => owner.events.some((event) => event.method === 'turn/completed')).toBe(true);
  await expect.poll(() => late.events.some((event) => event.method === 'turn/completed')).toBe(true);
  // Both clients assemble the streamed answer redacted, nothing lost around the value.
  expect(streamedText(owner.events, 'text')).toEqual(['The command printed *** as asked.']);
  expect(streamedText(owner.events, 'reasoning')).toEqual(['I will quote *** now.']);
  expect(streamedText(late.events, 'text')).toEqual(['The command printed *** as asked.']);
  await request(owner.client.request('items/list', { conversationId: conversation.id }));
  await request(owner.client.request('conversation/get', { conversationId: conversation.id }));
  await request(owner.client.request('conversation/list', {}));

  // The command received the value: its output holds the placeholder where the value was.
  const completed = owner.events.filter((event) => event.method === 'item/completed').map((event) => JSON.stringify(event));
  expect(completed.some((text) => text.includes('secret is ***'))).toBe(true);
  expect(completed.some((text) => text.includes('The command printed *** as asked.'))).toBe(true);

  const leaks: string[] = [];
  for (const event of [...owner.events, ...late.events]) if (JSON.stringify(event).includes(CANARY)) leaks.push(`notification ${event.method}`);
  for (const answer of answers) if (JSON.stringify(answer).includes(CANARY)) leaks.push(`answer ${JSON.stringify(answer).slice(0, 100)}`);
  await harness.stop();
  harness = undefined;
  for (const file of filesUnder(environment.paths.dataDir)) if (readFileSync(file).includes(CANARY)) leaks.push(`data file ${path.relative(environment.paths.dataDir, file)}`);
  const log = readFileSync(serverLog, 'utf8');
  expect(log).toContain('a log line quoting ***');
  if (log.includes(CANARY)) leaks.push('server log');
  expect(leaks).toEqual([]);

  // The workspace .env: the user's lines kept, the value in the managed block, owner-only.
  const envText = readFileSync(path.join(workspace, '.env'), 'utf8');
  expect(envText).toBe(`USER_OWN=keep-me\n# a comment of the user\n${ENV_BLOCK_BEGIN}\nPLATFORM_CANARY=${CANARY}\n${ENV_BLOCK_END}\n`);
  expect(statSync(path.join(workspace, '.env')).mode & 0o777).toBe(0o600);
  await environment.dispose();
});

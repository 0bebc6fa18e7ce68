/**
 * A prompt refused by a `user_prompt_submit` hook (exit 2) in a real in-process server with the
 * mock model: the client that sent it hears which hook refused it and why, and the prompt's text
 * is kept nowhere — not as a `user_message` item, not in any file of the data directory (logs,
 * the index and its search), not in listing previews or search results, not in notifications to
 * other attached clients, not in the server log — and an attachment sent with it is referenced
 * nowhere. A prompt queued while a turn runs is not written to the conversation's logs either.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, ContentPart, Item, Turn } from '../../src/protocol/index.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

/** The refused prompt's text: must appear nowhere. */
const SECRET = 'ZEBRA-PLUM-4417';
const REASON = 'GUARD-21: that topic is off limits';
const HOOKS_YAML = 'hooks:\n  user_prompt_submit:\n    - command: $HOOKS/screen.sh\n';
const SCREEN = `input=$(cat)
case "$input" in
  *ZEBRA*) echo "${REASON}" >&2; exit 2 ;;
esac
exit 0`;

let harness: InProcessServer | undefined;
let other: RuntimeClient | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
  await harness?.stop();
  harness = undefined;
});

/** Writes the screening hook under `<root>/hooks/` and `hooks.yaml`, and an AGENTS.md in the work dir. */
function writeHooks(environment: TestEnvironment): void {
  const folder = path.join(environment.root, 'hooks');
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, 'screen.sh'), `#!/usr/bin/env bash\n${SCREEN}\n`);
  chmodSync(path.join(folder, 'screen.sh'), 0o755);
  writeFileSync(path.join(environment.paths.configDir, 'hooks.yaml'), HOOKS_YAML.replaceAll('$HOOKS', folder));
  writeFileSync(path.join(environment.workDir, 'AGENTS.md'), 'AGENTS-NOTE-8: be brief\n');
}

/** Every file under `directory`, recursively. */
function filesUnder(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const full = path.join(directory, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/** The files of the data directory whose bytes hold `text`. */
function filesHolding(dataDir: string, text: string): string[] {
  return filesUnder(dataDir).filter((file) => readFileSync(file).includes(text));
}

/** Uploads `body` as an attachment of the conversation (`POST /api/v1/uploads`). */
function upload(server: InProcessServer, conversationId: string, name: string, body: string): Promise<{ attachment: { id: string }; contentPart: ContentPart }> {
  const url = new URL(server.server.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, method: 'POST', path: `/api/v1/uploads?${new URLSearchParams({ conversationId, name }).toString()}`, headers: { authorization: `Bearer ${server.server.token}` } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve(JSON.parse(text) as { attachment: { id: string }; contentPart: ContentPart }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Connects a second client and subscribes it to the conversation; returns what it hears. */
async function attachOther(server: InProcessServer, conversationId: string): Promise<AnyNotification[]> {
  other = await RuntimeClient.connect({ url: server.server.url, token: server.server.token, clientName: 'other' });
  const heard: AnyNotification[] = [];
  other.onNotification((event) => heard.push(event));
  await other.request('conversation/subscribe', { conversationId });
  return heard;
}

function itemsIn(events: AnyNotification[]): Item[] {
  return events.flatMap((event) => (event.method === 'item/completed' ? [event.params.item] : []));
}

describe('a prompt refused by a user_prompt_submit hook', () => {
  it('tells the sender which hook refused it and why, and keeps its text and the reference to its attachment nowhere (the uploaded file stays, for a reworded prompt)', async () => {
    const logLines: string[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });
    harness = await startInProcessServer('responses:\n  - text: "hello to you"\n', { beforeStart: writeHooks, logger });
    const conversationId = await harness.conversation();
    const heard = await attachOther(harness, conversationId);
    const uploaded = await upload(harness, conversationId, 'notes.md', 'plain notes\n');
    const attachmentId = uploaded.attachment.id;

    const answer = await harness.client.request('session/input', { conversationId, input: [{ type: 'text', text: `tell me about ${SECRET}` }, uploaded.contentPart] });
    const [refused] = await harness.turnsCompleted(1);
    expect(refused).toMatchObject({ id: answer.turnId, status: 'failed', steps: 0, stopReason: 'hook_refused' });
    // The sender hears the hook (its command) and its reason.
    expect(refused?.error).toContain(REASON);
    expect(refused?.error).toMatch(/user_prompt_submit hook "[^"]*screen\.sh"/);
    expect(harness.environment.mock.requests).toHaveLength(0);
    const items = harness.completedItems();
    expect(items.filter((item) => item.kind === 'user_message')).toEqual([]);
    expect(items.find((item) => item.kind === 'hook_run')).toMatchObject({ event: 'user_prompt_submit', decision: 'block', exitCode: 2 });

    // The next prompt runs as usual, without repeating the session's first-turn instructions.
    await harness.client.request('session/input', { conversationId, input: 'just say hello' });
    const turns = await harness.turnsCompleted(2);
    expect(turns[1]?.status).toBe('completed');
    expect(JSON.stringify(harness.environment.mock.requests[0]?.body)).not.toContain(SECRET);
    expect(harness.completedItems().filter((item) => item.kind === 'instruction' && item.source === 'agents_md')).toHaveLength(1);
    expect(harness.completedItems().filter((item) => item.kind === 'user_message')).toHaveLength(1);

    // Listing and search: the preview follows the next messages; the refused text is not found.
    const listed = async (query?: string) => (await harness!.client.request('conversation/list', query !== undefined ? { query } : {})).conversations;
    await expect.poll(async () => (await listed()).find((summary) => summary.id === conversationId)?.preview, { timeout: 10_000 }).toBe('hello to you');
    await expect.poll(async () => (await listed('hello')).map((summary) => summary.id), { timeout: 10_000 }).toEqual([conversationId]);
    expect(await listed('ZEBRA')).toEqual([]);
    expect(JSON.stringify(await listed())).not.toContain(SECRET);

    // A fork of the conversation carries nothing of it either.
    await harness.client.request('conversation/fork', { conversationId, lastTurnId: turns[1]!.id });

    // Other attached clients never heard it; the sender's own notifications hold it nowhere.
    expect(itemsIn(heard).filter((item) => item.kind === 'user_message')).toHaveLength(1);
    expect(JSON.stringify(heard)).not.toContain(SECRET);
    expect(JSON.stringify(heard)).not.toContain(attachmentId);
    expect(JSON.stringify(harness.events)).not.toContain(SECRET);

    const dataDir = harness.environment.paths.dataDir;
    await harness.server.stop();
    expect(filesHolding(dataDir, SECRET)).toEqual([]);
    expect(filesHolding(dataDir, attachmentId)).toEqual([]);
    expect(logLines.join('')).not.toContain(SECRET);
  });

  it('leaves nothing of a prompt refused after it waited in the queue', async () => {
    harness = await startInProcessServer('responses:\n  - text: "first answer"\n    holds: [{ afterDeltas: 0, gate: first }]\n', { beforeStart: writeHooks });
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'start' });
    await harness.environment.mock.waitForHold('first', 10_000);
    const queued = await harness.client.request('session/input', { conversationId, input: `and then ${SECRET}` });
    expect(queued.queued).toBe(true);
    // Clients see what waits (so it can be withdrawn) ...
    await harness.waitFor((event) => event.method === 'session/updated' && event.params.session.queuedInputs.some((input) => input.text.includes(SECRET)));
    harness.environment.mock.release('first');
    const turns: Turn[] = await harness.turnsCompleted(2);
    expect(turns.map((turn) => turn.stopReason)).toEqual(['end_turn', 'hook_refused']);
    expect(turns[1]?.error).toContain(REASON);
    // ... but no log of the conversation keeps it.
    const dataDir = harness.environment.paths.dataDir;
    await harness.server.stop();
    expect(filesHolding(dataDir, SECRET)).toEqual([]);
  });
});

describe('steering input and user_prompt_submit hooks', () => {
  it('passes steering through the same hooks: a refused one reaches no model call and is kept nowhere, the sender is warned, an accepted one is read with what its hook adds', async () => {
    const script = `responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo step" } }]
    holds: [{ afterDeltas: 0, gate: first }]
  - text: "after the steering"
`;
    const addContext = (environment: TestEnvironment) => {
      writeHooks(environment);
      // A second hook adds context to every prompt it lets through.
      const folder = path.join(environment.root, 'hooks');
      writeFileSync(path.join(folder, 'context.sh'), '#!/usr/bin/env bash\ncat > /dev/null\necho "CONTEXT-NOTE-5: steering was screened"\n');
      chmodSync(path.join(folder, 'context.sh'), 0o755);
      writeFileSync(path.join(environment.paths.configDir, 'hooks.yaml'), `hooks:\n  user_prompt_submit:\n    - command: ${folder}/screen.sh\n    - command: ${folder}/context.sh\n`);
    };
    harness = await startInProcessServer(script, { beforeStart: addContext });
    const conversationId = await harness.conversation();
    const started = await harness.client.request('session/input', { conversationId, input: 'run a step' });
    await harness.environment.mock.waitForHold('first', 10_000);
    const refused = await harness.client.request('session/input', { conversationId, input: `steer toward ${SECRET}`, mode: 'steer', expectedTurnId: started.turnId });
    await harness.client.request('session/input', { conversationId, input: 'STEER-OK-3: keep it short', mode: 'steer', expectedTurnId: started.turnId });
    harness.environment.mock.release('first');
    const [turn] = await harness.turnsCompleted(1);
    expect(turn).toMatchObject({ status: 'completed', stopReason: 'end_turn' });

    const warning = harness.events.find((event) => event.method === 'turn/warning');
    expect(warning?.params).toMatchObject({ conversationId, turnId: started.turnId, source: 'hook', name: 'user_prompt_submit' });
    expect(warning?.method === 'turn/warning' && warning.params.message).toMatch(new RegExp(`^steering input ${refused.inputId} was not given to the turn: it was refused by the user_prompt_submit hook "[^"]*screen\\.sh": ${REASON}`));

    // The second model call read the accepted steering and its hook's context, and nothing of the refused one.
    const second = JSON.stringify(harness.environment.mock.requests[1]?.body);
    expect(second).toContain('STEER-OK-3');
    expect(second).toContain('CONTEXT-NOTE-5');
    expect(second).not.toContain(SECRET);
    const steered = harness.completedItems().filter((item) => item.kind === 'user_message' && item.mode === 'steer');
    expect(steered).toHaveLength(1);
    expect(harness.completedItems().filter((item) => item.kind === 'hook_run' && item.event === 'user_prompt_submit' && item.decision === 'block')).toHaveLength(1);

    const dataDir = harness.environment.paths.dataDir;
    await harness.server.stop();
    expect(filesHolding(dataDir, SECRET)).toEqual([]);
  });
});

/**
 * Conversation titles are at most 200 characters (docs/protocol.md, "Conversations"), the cap
 * of project names: `conversation/create` and `conversation/update` refuse a longer title with
 * invalid params naming `params.title`; titles the server or a client makes up (the working
 * directory's name, a fork's `(fork)`, the first prompt of `openvaala exec`) are cut to fit.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { titleOf } from '../../src/client/conversation-title.js';
import { CONVERSATION_TITLE_MAX_LENGTH, fitConversationTitle } from '../../src/protocol/conversations.js';
import { ErrorCodes } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { protocolFailure } from '../helpers/protocol-failure.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer;

beforeAll(async () => {
  harness = await startInProcessServer('responses:\n  - text: "answer"\n');
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

describe('conversation titles', () => {
  it('are refused over 200 characters by create and update, naming params.title', async () => {
    expect(CONVERSATION_TITLE_MAX_LENGTH).toBe(200);
    allowInvalidSentMessages();
    const cwd = harness.environment.workDir;
    const tooLong = await protocolFailure(harness.client.request('conversation/create', { cwd, title: 'x'.repeat(100_000) }));
    expect(tooLong.code).toBe(ErrorCodes.invalidParams);
    expect(tooLong.message).toBe('conversation/create: params.title: at most 200 characters (got 100000)');
    const { conversation } = await harness.client.request('conversation/create', { cwd, title: 't'.repeat(200) });
    expect(conversation.title).toBe('t'.repeat(200));
    const rename = await protocolFailure(harness.client.request('conversation/update', { conversationId: conversation.id, title: 'y'.repeat(201) }));
    expect(rename.code).toBe(ErrorCodes.invalidParams);
    expect(rename.message).toBe('conversation/update: params.title: at most 200 characters (got 201)');
    expect((await harness.client.request('conversation/get', { conversationId: conversation.id })).conversation.title).toBe('t'.repeat(200));
  });

  it('made by the server are cut to fit: the working directory name, and a fork of a title at the limit', async () => {
    const directory = path.join(harness.environment.workDir, 'd'.repeat(250));
    mkdirSync(directory);
    const { conversation } = await harness.client.request('conversation/create', { cwd: directory });
    expect(conversation.title).toBe(`${'d'.repeat(199)}…`);
    const full = (await harness.client.request('conversation/create', { cwd: harness.environment.workDir, title: 'f'.repeat(200) })).conversation;
    await harness.client.request('conversation/subscribe', { conversationId: full.id });
    const { turnId } = await harness.client.request('session/input', { conversationId: full.id, input: 'hello' });
    await harness.turnsCompleted(1);
    const fork = (await harness.client.request('conversation/fork', { conversationId: full.id, lastTurnId: turnId })).conversation;
    expect(fork.title).toHaveLength(200);
    expect(fork.title).toBe(`${'f'.repeat(192)}… (fork)`);
  });

  it('are cut by whole characters, never inside a surrogate pair', () => {
    const title = fitConversationTitle('😀'.repeat(150));
    expect(title.length).toBeLessThanOrEqual(200);
    expect(title).toBe(`${'😀'.repeat(99)}…`);
    expect(fitConversationTitle('short')).toBe('short');
    expect(fitConversationTitle('x'.repeat(200))).toBe('x'.repeat(200));
    expect(fitConversationTitle('base', ' (fork)')).toBe('base (fork)');
    // A title from a first prompt is far under the limit.
    expect(titleOf('q'.repeat(100_000)).length).toBeLessThanOrEqual(CONVERSATION_TITLE_MAX_LENGTH);
  });
});

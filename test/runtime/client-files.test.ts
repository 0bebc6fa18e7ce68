/**
 * Files served by a client (`conversation/serveFiles`, `client/fs/readTextFile`,
 * `client/fs/writeTextFile`): tools of a conversation on the local executor read and write
 * through the client that declared it serves them, and fall back to the executor when none does.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient, RuntimeClientError } from '../../src/client/runtime-client.js';
import { ErrorCodes } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer | undefined;
const clients: RuntimeClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await harness?.stop();
  harness = undefined;
});

async function editor(server: InProcessServer): Promise<RuntimeClient> {
  const client = await RuntimeClient.connect({ url: server.server.url, token: server.server.token, clientName: 'editor' });
  clients.push(client);
  return client;
}

function toolOutputs(server: InProcessServer): string[] {
  return server.completedItems().flatMap((item) => (item.kind === 'tool_call' ? [item.output] : []));
}

describe('client-served files', { timeout: 60_000 }, () => {
  it('reads through the client that serves files, and from the executor once it has gone', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: read_file, arguments: { path: "draft.txt" } }]
  - text: "read once"
  - toolCalls: [{ name: read_file, arguments: { path: "draft.txt" } }]
  - text: "read twice"
`);
    writeFileSync(path.join(harness.environment.workDir, 'draft.txt'), 'on disk\n');
    const conversationId = await harness.conversation();
    const client = await editor(harness);
    const asked: unknown[] = [];
    client.handleServerRequest('client/fs/readTextFile', async (params) => {
      asked.push(params);
      return { content: 'in the buffer\n' };
    });
    await client.request('conversation/serveFiles', { conversationId, read: true, write: false });
    await harness.client.request('session/input', { conversationId, input: 'read it' });
    await harness.turnsCompleted(1);
    expect(asked).toEqual([{ conversationId, sessionId: expect.stringMatching(/^sess_/), path: path.join(harness.environment.workDir, 'draft.txt') }]);
    expect(toolOutputs(harness)[0]).toBe('     1\tin the buffer');

    await client.request('conversation/serveFiles', { conversationId, read: false, write: false });
    await harness.client.request('session/input', { conversationId, input: 'read it again' });
    await harness.turnsCompleted(2);
    expect(asked).toHaveLength(1);
    expect(toolOutputs(harness)[1]).toBe('     1\ton disk');
  });

  it('writes a patch through the client, and a client failure fails the call with its message', async () => {
    harness = await startInProcessServer(`
responses:
  - toolCalls: [{ name: apply_patch, arguments: { patch: "*** Begin Patch\\n*** Update File: notes.txt\\n@@\\n-old\\n+new\\n*** End Patch" } }]
  - text: "patched"
  - toolCalls: [{ name: read_file, arguments: { path: "notes.txt" } }]
  - text: "could not read"
`);
    // The buffer holds what the patch expects; the disk has an older text it would not apply to.
    writeFileSync(path.join(harness.environment.workDir, 'notes.txt'), 'stale on disk\n');
    const conversationId = await harness.conversation();
    const client = await editor(harness);
    const writes: unknown[] = [];
    let failReads = false;
    client.handleServerRequest('client/fs/readTextFile', async () => {
      if (failReads) throw new Error('the buffer is locked');
      return { content: 'old\n' };
    });
    client.handleServerRequest('client/fs/writeTextFile', async (params) => {
      writes.push(params);
      return {};
    });
    await client.request('conversation/serveFiles', { conversationId, read: true, write: true });
    await harness.client.request('session/input', { conversationId, input: 'patch it' });
    await harness.turnsCompleted(1);
    expect(writes).toEqual([{ conversationId, sessionId: expect.stringMatching(/^sess_/), path: path.join(harness.environment.workDir, 'notes.txt'), content: 'new\n' }]);
    // The editor wrote it (or will save it): the executor's copy is untouched.
    expect(readFileSync(path.join(harness.environment.workDir, 'notes.txt'), 'utf8')).toBe('stale on disk\n');
    // The diff announced before the call ran was taken from the buffer too.
    const started = harness.events.find((event) => event.method === 'item/started' && event.params.kind === 'tool_call');
    expect(JSON.stringify(started?.method === 'item/started' ? started.params.partial : undefined)).toContain('-old\\n+new');

    failReads = true;
    await harness.client.request('session/input', { conversationId, input: 'read it' });
    await harness.turnsCompleted(2);
    expect(toolOutputs(harness)[1]).toContain('the client could not do client/fs/readTextFile: the buffer is locked');
  });

  it('refuses serveFiles for an unknown conversation or a malformed id', async () => {
    harness = await startInProcessServer(`responses: []\n`);
    // The malformed id is sent on purpose.
    allowInvalidSentMessages();
    const client = await editor(harness);
    await expect(client.request('conversation/serveFiles', { conversationId: 'conv_missing', read: true, write: true })).rejects.toMatchObject({ code: ErrorCodes.notFound });
    const malformed = await client.request('conversation/serveFiles', { conversationId: '../etc', read: true, write: true }).catch((error: unknown) => error);
    expect(malformed).toBeInstanceOf(RuntimeClientError);
    expect((malformed as RuntimeClientError).code).toBe(ErrorCodes.invalidParams);
    expect((malformed as RuntimeClientError).message).toContain('not a conversation id');
  });
});

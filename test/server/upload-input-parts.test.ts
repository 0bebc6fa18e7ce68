/**
 * A `file` content part naming an upload by `attachmentId` alone is enough for `session/input`
 * (docs/protocol.md "Uploads": the server fills in `path`, `name` and `mediaType` from the
 * stored file), over a real server and in the committed JSON Schema; a `file` part naming
 * neither a path nor an upload is refused, naming the part.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_PATH } from '../../src/protocol/generate-schema.js';
import type { Item } from '../../src/protocol/index.js';
import { ProtocolSchema } from '../../src/protocol/message-validator.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';
import { protocolFailure } from '../helpers/protocol-failure.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

const root = path.resolve(import.meta.dirname, '../..');
const schema = new ProtocolSchema(JSON.parse(readFileSync(path.join(root, SCHEMA_PATH), 'utf8')) as Record<string, unknown>);

let harness: InProcessServer;
let conversationId: string;

beforeAll(async () => {
  harness = await startInProcessServer('responses:\n  - text: "seen"\n');
  conversationId = await harness.conversation();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

/** Uploads `body` as `name` to the conversation; resolves the new attachment's id. */
function upload(name: string, body: string): Promise<string> {
  const url = new URL(harness.server.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, method: 'POST', path: `/api/v1/uploads?conversationId=${conversationId}&name=${encodeURIComponent(name)}`, headers: { authorization: `Bearer ${harness.server.token}` } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          if (response.statusCode !== 201) return reject(new Error(`upload answered ${response.statusCode}: ${text}`));
          resolve((JSON.parse(text) as { attachment: { id: string } }).attachment.id);
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('file parts of session/input', () => {
  it('takes an upload named by attachmentId alone and records it with the stored path, name and media type', async () => {
    const attachmentId = await upload('notes.md', 'hello notes\n');
    const params = { conversationId, input: [{ type: 'text', text: 'read this' }, { type: 'file', attachmentId }] };
    expect(schema.check('SessionInputParams', params)).toEqual([]);
    const result = await harness.client.request('session/input', params as never);
    expect(result.turnId).toMatch(/^turn_/);
    const recorded = () =>
      harness.events
        .filter((event) => event.method === 'item/completed')
        .map((event) => (event.params as { item: Item }).item)
        .find((item) => item.kind === 'user_message');
    await until(() => recorded() !== undefined, 10_000, 'the user_message item');
    const stored = recorded();
    expect(stored?.kind === 'user_message' ? stored.content[1] : undefined).toEqual({ type: 'file', path: `attachments/${attachmentId}-notes.md`, name: 'notes.md', mediaType: 'text/plain', attachmentId });
  });

  it('refuses a file part that names neither a path nor an upload, in the server and in the schema', async () => {
    allowInvalidSentMessages();
    const params = { conversationId, input: [{ type: 'text', text: 'hi' }, { type: 'file', name: 'x.md' }] };
    expect(schema.check('SessionInputParams', params)).not.toEqual([]);
    const failure = await protocolFailure(harness.client.request('session/input', params as never));
    expect(failure.code).toBe(-32602);
    expect(failure.message).toContain('params.input[1]');
  });

  it('still takes a file part that names a path only', async () => {
    const params = { conversationId, input: [{ type: 'file', path: 'README.md' }] };
    expect(schema.check('SessionInputParams', params)).toEqual([]);
  });
});

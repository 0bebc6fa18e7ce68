/**
 * `POST /api/v1/uploads` over real HTTP against a real server: the file is stored in the
 * conversation's directory (in `<data-dir>/staging/<id>/` until the conversation's first input
 * commits it, then moved), and a `file` part naming it in `session/input` reaches the mock
 * model (text as text, an image as an image). Uploads running while the first input commits
 * the conversation all end up in its directory. Uploads of a conversation never committed are
 * gone after a restart. Refusals: token, Origin, Host, size, unknown conversation, a missing
 * name, and unsupported files at input time.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { createLogger } from '../../src/logger.js';
import type { ContentPart } from '../../src/protocol/index.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment } from '../helpers/environment.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/processes.js';
import { protocolFailure } from '../helpers/protocol-failure.js';

const LIMIT = 4096;
/** A PNG signature and a header chunk: enough to be recognised as an image by its bytes. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('0000000d4948445200000001000000010806000000', 'hex')]);

let harness: InProcessServer;
let conversationId: string;

beforeAll(async () => {
  harness = await startInProcessServer('responses:\n  - text: "seen"\n  - text: "again"\n', {
    beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), `limits:\n  maxUploadBytes: ${LIMIT}\n`),
  });
  conversationId = await harness.conversation();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Sends a request with exactly these headers (Host included) and reads the JSON answer. */
function send(options: { method?: string; query: string; body?: Buffer | string; headers?: Record<string, string>; token?: string | null; server?: RunningServer }): Promise<Answer> {
  const server = options.server ?? harness.server;
  const url = new URL(server.url);
  const token = options.token === undefined ? server.token : options.token;
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? 'POST',
        path: `/api/v1/uploads?${options.query}`,
        headers: { ...(token !== null ? { authorization: `Bearer ${token}` } : {}), ...options.headers },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    request.on('error', reject);
    request.end(options.body ?? '');
  });
}

function query(name: string, conversation = conversationId): string {
  return new URLSearchParams({ conversationId: conversation, name }).toString();
}

describe('uploads', () => {
  it('stores files in the conversation directory and the model receives them', async () => {
    const text = await send({ query: query('notes.md'), body: 'the secret word is pelican\n' });
    expect(text.status).toBe(201);
    const attachment = text.body.attachment as { id: string; name: string; mediaType: string; size: number };
    expect(attachment).toEqual({ id: expect.stringMatching(/^att_[0-9a-z]+$/), name: 'notes.md', mediaType: 'text/plain', size: 27 });
    expect(text.body.contentPart).toEqual({ type: 'file', path: `attachments/${attachment.id}-notes.md`, name: 'notes.md', mediaType: 'text/plain', attachmentId: attachment.id });
    // The conversation has had no input: it is staged, and so is the file, outside conversations/.
    const dataDir = harness.environment.paths.dataDir;
    const staged = path.join(dataDir, 'staging', conversationId, `${attachment.id}-notes.md`);
    expect(readFileSync(staged, 'utf8')).toBe('the secret word is pelican\n');
    expect(existsSync(path.join(dataDir, 'conversations', conversationId))).toBe(false);

    const image = await send({ query: query('pixel.png'), body: PNG, headers: { 'content-type': 'image/png' } });
    expect(image.status).toBe(201);
    expect(image.body.attachment).toMatchObject({ name: 'pixel.png', mediaType: 'image/png', size: PNG.byteLength });

    const input: ContentPart[] = [{ type: 'text', text: 'look at these' }, text.body.contentPart as ContentPart, image.body.contentPart as ContentPart];
    await harness.client.request('session/input', { conversationId, input });
    await harness.turnsCompleted(1);
    // The input committed the conversation; its uploads moved into its directory.
    const stored = path.join(dataDir, 'conversations', conversationId, 'attachments', `${attachment.id}-notes.md`);
    expect(readFileSync(stored, 'utf8')).toBe('the secret word is pelican\n');
    expect(readdirSync(path.dirname(stored))).toHaveLength(2);
    expect(existsSync(path.join(dataDir, 'staging', conversationId))).toBe(false);
    const body = JSON.stringify(harness.environment.mock.requests[0]?.body);
    expect(body).toContain('[attached file notes.md]\\nthe secret word is pelican');
    expect(body).toContain(PNG.toString('base64'));
    // The log keeps the reference, not the bytes.
    const userMessage = harness.completedItems().find((item) => item.kind === 'user_message');
    expect(JSON.stringify(userMessage)).not.toContain(PNG.toString('base64'));
    expect(JSON.stringify(userMessage)).toContain(attachment.id);
  });

  it('sanitises names to one safe segment', async () => {
    const answer = await send({ query: query('../../evil\u0000name;rm -rf.txt'), body: 'x' });
    expect(answer.status).toBe(201);
    const { id, name } = answer.body.attachment as { id: string; name: string };
    expect(name).toBe('evil_name_rm -rf.txt');
    expect(existsSync(path.join(harness.environment.paths.dataDir, 'conversations', conversationId, 'attachments', `${id}-${name}`))).toBe(true);
    // Nothing usable left: a generic name, not a refusal (upload-names.test.ts has more).
    for (const odd of ['..', '...', '/']) {
      const generic = await send({ query: query(odd), body: 'x' });
      expect(generic.status, odd).toBe(201);
      expect((generic.body.attachment as { name: string }).name, odd).toBe('file');
    }
    expect(await send({ query: query(''), body: 'x' })).toEqual({ status: 400, body: { error: 'query name: the file name is missing' } });
  });

  it('refuses requests without the right token, from foreign pages and hosts', async () => {
    const missing = await send({ query: query('a.txt'), body: 'x', token: null });
    expect(missing).toEqual({ status: 401, body: { error: 'missing token: send "Authorization: Bearer <token>" (or sign in to the web UI)' } });
    expect((await send({ query: query('a.txt'), body: 'x', token: 'wrong' })).status).toBe(401);
    const foreign = await send({ query: query('a.txt'), body: 'x', headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(String(foreign.body.error)).toContain('origin https://evil.example may not use this server');
    expect((await send({ query: query('a.txt'), body: 'x', headers: { host: 'evil.example' } })).status).toBe(421);
    expect((await send({ method: 'GET', query: query('a.txt') })).status).toBe(405);
  });

  it('refuses a body over the limit, and unknown or malformed conversations', async () => {
    const declared = await send({ query: query('big.bin'), body: Buffer.alloc(LIMIT + 1) });
    expect(declared.status).toBe(413);
    expect(String(declared.body.error)).toContain(`over the upload limit of ${LIMIT} bytes`);
    // Without a length announced, the count of bytes received decides.
    const chunked = await send({ query: query('big.bin'), body: Buffer.alloc(LIMIT + 1), headers: { 'transfer-encoding': 'chunked' } });
    expect(chunked.status).toBe(413);
    expect((await send({ query: query('max.bin'), body: Buffer.alloc(LIMIT, 'a') })).status).toBe(201);
    const unknown = await send({ query: query('a.txt', 'conv_nothere'), body: 'x' });
    expect(unknown).toEqual({ status: 404, body: { error: 'conversation conv_nothere does not exist' } });
    const malformed = await send({ query: query('a.txt', '../../etc'), body: 'x' });
    expect(malformed.status).toBe(400);
    expect(String(malformed.body.error)).toContain('query conversationId: not a conversation id');
    expect(existsSync(path.join(harness.environment.paths.dataDir, 'conversations', 'conv_nothere'))).toBe(false);
  });

  it('refuses at input time a file the model cannot read, or one of another conversation', async () => {
    const binary = await send({ query: query('blob.bin'), body: Buffer.from([0, 1, 2, 0xff]) });
    expect(binary.status).toBe(201);
    expect(binary.body.attachment).toMatchObject({ mediaType: 'application/octet-stream' });
    const unsupported = await protocolFailure(harness.client.request('session/input', { conversationId, input: [binary.body.contentPart as ContentPart] }));
    expect(unsupported.code).toBe(-32602);
    expect(unsupported.message).toBe('session/input: params.input[0]: attachment "blob.bin" (application/octet-stream) cannot be given to the model: only images (PNG, JPEG, GIF, WebP) and UTF-8 text files are supported');
    const { conversation: other } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir });
    const elsewhere = await protocolFailure(harness.client.request('session/input', { conversationId: other.id, input: [{ type: 'text', text: 'hi' }, binary.body.contentPart as ContentPart] }));
    expect(elsewhere.code).toBe(-32602);
    expect(elsewhere.message).toContain(`session/input: params.input[1].attachmentId: no attachment "${(binary.body.attachment as { id: string }).id}" was uploaded to conversation ${other.id}`);
  });
});

describe('uploads racing the first input', () => {
  it('all land in the conversation directory, none in the staging directory', async () => {
    const racing = await harness.conversation();
    const dataDir = harness.environment.paths.dataDir;
    // Two streams of uploads, one after another each, run from before the input until after it was accepted.
    const answers: { index: number; answer: Answer }[] = [];
    let accepted = false;
    let afterwards = 0;
    let next = 0;
    const stream = async () => {
      while (!accepted || afterwards < 10) {
        const index = next++;
        if (accepted) afterwards++;
        answers.push({ index, answer: await send({ query: query(`race-${index}.txt`, racing), body: `file ${index}\n` }) });
      }
    };
    const streams = [stream(), stream()];
    // Some uploads have landed in staging before the input moves the conversation's files.
    await until(() => answers.length >= 2, 10_000, 'the first uploads');
    await harness.client.request('session/input', { conversationId: racing, input: [{ type: 'text', text: 'go' }] });
    accepted = true;
    await Promise.all(streams);
    expect(answers.length).toBeGreaterThan(12);
    const directory = path.join(dataDir, 'conversations', racing, 'attachments');
    for (const { index, answer } of answers) {
      expect(answer.status).toBe(201);
      const { id } = answer.body.attachment as { id: string };
      expect(readFileSync(path.join(directory, `${id}-race-${index}.txt`), 'utf8')).toBe(`file ${index}\n`);
    }
    expect(readdirSync(directory)).toHaveLength(answers.length);
    expect(existsSync(path.join(dataDir, 'staging', racing))).toBe(false);
    expect(readdirSync(path.join(dataDir, 'staging')).filter((entry) => entry !== '.incoming')).toEqual([]);
  });
});

describe('uploads to a conversation that never receives an input', () => {
  it('leave nothing under conversations/, and the staging directory is emptied at the next start', async () => {
    const environment = await createTestEnvironment('responses:\n  - text: "ok"\n');
    const start = () => startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent') });
    const dataDir = environment.paths.dataDir;
    try {
      let server = await start();
      const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: 'test' });
      const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
      const uploaded = await send({ server, query: query('draft.txt', conversation.id), body: 'never sent' });
      expect(uploaded.status).toBe(201);
      const { id } = uploaded.body.attachment as { id: string };
      await client.close();
      await server.stop();
      expect(existsSync(path.join(dataDir, 'conversations', conversation.id))).toBe(false);
      expect(readdirSync(path.join(dataDir, 'staging', conversation.id))).toEqual([`${id}-draft.txt`]);

      server = await start();
      try {
        expect(existsSync(path.join(dataDir, 'conversations', conversation.id))).toBe(false);
        expect(readdirSync(path.join(dataDir, 'staging'))).toEqual([]);
        // The conversation is gone, so is any way to upload to it.
        expect((await send({ server, query: query('late.txt', conversation.id), body: 'x' })).status).toBe(404);
        expect(existsSync(path.join(dataDir, 'conversations', conversation.id))).toBe(false);
        expect(readdirSync(path.join(dataDir, 'staging'))).toEqual([]);
      } finally {
        await server.stop();
      }
    } finally {
      await environment.dispose();
    }
  }, 60_000);
});

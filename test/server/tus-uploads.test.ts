/**
 * Resumable uploads (`/api/v1/uploads/tus`, tus 1.0.0) with the real tus-js-client against a
 * real server: an upload whose connection is cut half-way resumes from the offset the server
 * kept and ends byte-equal; an upload over the limit is refused at creation before any byte is
 * stored (also with a deferred length); the finished file lands in the workspace's
 * `.openvaala/attachments/` (git-ignored, never overwriting) and as an attachment the model
 * receives as an image, also over an SSH executor and never through a symlink leading out of the
 * workspace; every request is authenticated; bad metadata is refused naming the key; a complete
 * upload whose hand-over failed is handed over when its client resumes; old uploads are swept.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { DetailedError, Upload } from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentPart } from '../../src/protocol/index.js';
import { rawRequest } from '../helpers/http-exchange.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';
import { numberedName } from '../../src/runtime/workspace-attachments.js';
import { newUploadId, TusUploadStore } from '../../src/server/tus-upload-store.js';
import { Upload as TusUpload } from '@tus/server';

const LIMIT = 300_000;
/** A PNG signature and a header chunk: recognised as an image by its bytes. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('0000000d4948445200000001000000010806000000', 'hex')]);

let harness: InProcessServer;
let ssh: TestSshServer;
let conversationId: string;

beforeAll(async () => {
  ssh = await startSshServer();
  harness = await startInProcessServer('responses:\n  - text: "seen"\n', {
    beforeStart: (environment) => {
      writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), `limits:\n  maxUploadBytes: ${LIMIT}\n`);
      const box = `  box: { kind: ssh, host: 127.0.0.1, port: ${ssh.port}, user: ${ssh.user}, identityFile: ${ssh.identityFile}, knownHostsFile: ${ssh.knownHostsFile} }`;
      writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), `executors:\n${box}\n`);
    },
  });
  // The workspace is a git repository with one commit, so `git status` shows any stray file.
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: harness.environment.workDir });
  git('init', '-q');
  writeFileSync(path.join(harness.environment.workDir, 'README.md'), 'project\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'start');
  conversationId = await harness.conversation();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await ssh?.dispose();
});

const endpoint = () => `${harness.server.url}/api/v1/uploads/tus`;
const auth = () => ({ authorization: `Bearer ${harness.server.token}` });
const uploadsDirectory = () => path.join(harness.environment.paths.dataDir, 'uploads');
const uploadFiles = () => (existsSync(uploadsDirectory()) ? readdirSync(uploadsDirectory()).sort() : []);

interface Finished {
  url: string;
  body: { attachment: { id: string; name: string; mediaType: string; size: number }; contentPart: ContentPart; workspacePath: string | null };
}

/** Runs one tus-js-client upload to its end. */
function tusUpload(bytes: Buffer, options: { metadata?: Record<string, string>; endpoint?: string; uploadUrl?: string; headers?: Record<string, string>; onUrl?: (url: string) => void } = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const upload = new Upload(bytes, {
      endpoint: options.endpoint ?? endpoint(),
      ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : {}),
      headers: options.headers ?? auth(),
      metadata: options.metadata ?? { conversationId, filename: 'file.bin' },
      retryDelays: null,
      storeFingerprintForResuming: false,
      onUploadUrlAvailable: () => options.onUrl?.(upload.url as string),
      onSuccess: ({ lastResponse }) => resolve({ url: upload.url as string, body: JSON.parse(lastResponse.getBody() || '{}') as Finished['body'] }),
      onError: reject,
    });
    upload.start();
  });
}

/** The status and body of the response a failed tus-js-client upload got. */
function refusalOf(error: unknown): { status: number; body: string } {
  expect(error).toBeInstanceOf(DetailedError);
  const response = (error as DetailedError).originalResponse;
  return { status: response?.getStatus() ?? 0, body: response?.getBody() ?? '' };
}

/**
 * A TCP relay to the server counting the bytes sent towards it; it cuts every connection (both
 * sides) once `cutAfter` bytes have passed in total.
 */
async function startRelay(cutAfter = Number.POSITIVE_INFINITY): Promise<{ url: string; forwarded: () => number; close: () => Promise<void> }> {
  const target = new URL(harness.server.url);
  let forwarded = 0;
  const sockets = new Set<Socket>();
  const relay: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    sockets.add(client).add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      forwarded += chunk.byteLength;
      if (forwarded > cutAfter) {
        // Only the part up to the cut goes through, then the connection is gone.
        upstream.write(chunk.subarray(0, chunk.byteLength - (forwarded - cutAfter)), cut);
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.on('error', cut);
    upstream.on('error', cut);
    client.on('close', cut);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const port = (relay.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/api/v1/uploads/tus`,
    forwarded: () => forwarded,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}

/** The offset the server reports for an upload (tus HEAD). */
async function offsetOf(url: string): Promise<number> {
  const answer = await rawRequest(harness.server.url, new URL(url).pathname, { method: 'HEAD', headers: { ...auth(), 'tus-resumable': '1.0.0' } });
  return Number(answer.headers['upload-offset'] ?? -1);
}

describe('resumable uploads', () => {
  it('resume after a cut connection from the offset the server kept and end byte-equal', async () => {
    const bytes = Buffer.alloc(200_000);
    for (let index = 0; index < bytes.length; index++) bytes[index] = (index * 7 + (index >> 8)) & 0xff;
    const cutting = await startRelay(80_000);
    let url = '';
    const failure = await tusUpload(bytes, { endpoint: cutting.url, metadata: { conversationId, filename: 'data.bin' }, onUrl: (given) => (url = given) }).catch((error: unknown) => error);
    await cutting.close();
    expect(failure).toBeInstanceOf(Error);
    expect(url).toMatch(/\/api\/v1\/uploads\/tus\/[0-9a-f]{32}$/);
    // The bytes that reached the server before the cut are kept (the cut PATCH may still be writing).
    await expect.poll(() => offsetOf(url.replace(/^http:\/\/[^/]+/, harness.server.url))).toBeGreaterThan(10_000);
    const kept = await offsetOf(url.replace(/^http:\/\/[^/]+/, harness.server.url));
    expect(kept).toBeLessThan(bytes.length);

    // The client resumes the same upload: only what is missing crosses the wire.
    const counting = await startRelay();
    const resumed = await tusUpload(bytes, { endpoint: counting.url, uploadUrl: url.replace(/^http:\/\/[^/]+/, counting.url.replace('/api/v1/uploads/tus', '')) });
    await counting.close();
    expect(counting.forwarded()).toBeLessThan(bytes.length - kept + 2_000);
    expect(resumed.body.workspacePath).toBe('.openvaala/attachments/data.bin');
    expect(readFileSync(path.join(harness.environment.workDir, '.openvaala', 'attachments', 'data.bin')).equals(bytes)).toBe(true);
    expect(resumed.body.attachment).toMatchObject({ name: 'data.bin', size: bytes.length, mediaType: 'application/octet-stream' });
    // The partial data is gone; only the record of the finished upload remains.
    expect(uploadFiles().filter((name) => !name.endsWith('.json'))).toEqual([]);
  });

  it('refuse an upload over the limit at creation, before any byte, naming the limit', async () => {
    const before = uploadFiles();
    const refused = refusalOf(await tusUpload(Buffer.alloc(LIMIT + 1), { metadata: { conversationId, filename: 'big.bin' } }).catch((error: unknown) => error));
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body)).toEqual({ error: `the upload is over the upload limit of ${LIMIT} bytes (server.yaml limits.maxUploadBytes)` });
    expect(uploadFiles()).toEqual(before);

    // A deferred length is bounded too: the PATCH declaring more than the limit is refused unread.
    const created = await rawRequest(harness.server.url, '/api/v1/uploads/tus', {
      method: 'POST',
      headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-defer-length': '1', 'upload-metadata': `conversationId ${Buffer.from(conversationId).toString('base64')},filename ${Buffer.from('later.bin').toString('base64')}` },
    });
    expect(created.status, created.body).toBe(201);
    const location = String(created.headers.location);
    const tooMuch = await rawRequest(harness.server.url, location, { method: 'PATCH', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: Buffer.alloc(LIMIT + 1) });
    expect(tooMuch.status).toBe(413);
    expect(JSON.parse(tooMuch.body).error).toContain(`${LIMIT} bytes`);
    expect(readFileSync(path.join(uploadsDirectory(), path.basename(location))).byteLength).toBe(0);
    expect((await rawRequest(harness.server.url, location, { method: 'DELETE', headers: { ...auth(), 'tus-resumable': '1.0.0' } })).status).toBe(204);
    expect(uploadFiles()).toEqual(before);
  });

  it('answer 410 naming the problem for an upload whose record was damaged, keeping its files and other uploads', async () => {
    const create = async (filename: string) => {
      const created = await rawRequest(harness.server.url, '/api/v1/uploads/tus', {
        method: 'POST',
        headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-length': '10', 'upload-metadata': `conversationId ${Buffer.from(conversationId).toString('base64')},filename ${Buffer.from(filename).toString('base64')}` },
      });
      expect(created.status, created.body).toBe(201);
      return String(created.headers.location);
    };
    const truncated = await create('truncated.bin');
    const reshaped = await create('reshaped.bin');
    const intact = await create('intact.bin');
    const recordOf = (location: string) => path.join(uploadsDirectory(), `${path.basename(location)}.json`);
    writeFileSync(recordOf(truncated), readFileSync(recordOf(truncated), 'utf8').slice(0, 25));
    const record = JSON.parse(readFileSync(recordOf(reshaped), 'utf8')) as Record<string, unknown>;
    writeFileSync(recordOf(reshaped), JSON.stringify({ ...record, metadata: 'not a mapping' }));
    const head = (location: string) => rawRequest(harness.server.url, location, { method: 'HEAD', headers: { ...auth(), 'tus-resumable': '1.0.0' } });
    const patch = (location: string) => rawRequest(harness.server.url, location, { method: 'PATCH', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: Buffer.from('0123456789') });

    const truncatedHead = await head(truncated);
    expect(truncatedHead.status).toBe(410);
    const truncatedPatch = await patch(truncated);
    expect(truncatedPatch.status).toBe(410);
    expect(JSON.parse(truncatedPatch.body).error).toMatch(new RegExp(`^upload ${path.basename(truncated)} cannot be resumed: its record on the server is damaged \\(not JSON \\(.+\\)\\); start a new upload$`));
    const reshapedPatch = await patch(reshaped);
    expect(reshapedPatch.status).toBe(410);
    expect(JSON.parse(reshapedPatch.body).error).toContain('its record on the server is damaged (metadata: ');
    // The damaged uploads' files stay for the sweep; the intact upload goes on.
    expect(existsSync(recordOf(truncated))).toBe(true);
    expect(existsSync(path.join(uploadsDirectory(), path.basename(reshaped)))).toBe(true);
    const finished = await patch(intact);
    expect(finished.status, finished.body).toBe(200);
    expect(JSON.parse(finished.body).attachment).toMatchObject({ name: 'intact.bin', size: 10 });
  });

  it('place the file git-ignored in the workspace without overwriting, and the model receives the image', async () => {
    const first = await tusUpload(PNG, { metadata: { conversationId, filename: 'pixel.png' } });
    const second = await tusUpload(Buffer.from('not the same picture'), { metadata: { conversationId, filename: 'pixel.png' } });
    expect(first.body.workspacePath).toBe('.openvaala/attachments/pixel.png');
    expect(second.body.workspacePath).toBe('.openvaala/attachments/pixel-2.png');
    const folder = path.join(harness.environment.workDir, '.openvaala', 'attachments');
    expect(readFileSync(path.join(folder, 'pixel.png')).equals(PNG)).toBe(true);
    expect(readFileSync(path.join(folder, 'pixel-2.png'), 'utf8')).toBe('not the same picture');
    expect(readFileSync(path.join(folder, '.gitignore'), 'utf8')).toBe('*\n');
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: harness.environment.workDir, encoding: 'utf8' })).toBe('');
    // A HEAD of the finished upload tells the attachment it became (for a client that lost the last answer).
    const head = await rawRequest(harness.server.url, new URL(first.url).pathname, { method: 'HEAD', headers: { ...auth(), 'tus-resumable': '1.0.0' } });
    expect(head.headers['upload-offset']).toBe(String(PNG.byteLength));
    expect(String(head.headers['upload-metadata'])).toContain(`attachmentId ${Buffer.from(first.body.attachment.id).toString('base64')}`);

    expect(first.body.attachment).toMatchObject({ name: 'pixel.png', mediaType: 'image/png', size: PNG.byteLength });
    await harness.client.request('session/input', { conversationId, input: [{ type: 'text', text: 'what is this?' }, first.body.contentPart] });
    await harness.turnsCompleted(1);
    const request = JSON.stringify(harness.environment.mock.requests[0]?.body);
    expect(request).toContain('input_image');
    expect(request).toContain(PNG.toString('base64'));
  });

  it('authenticate every request and refuse bad metadata naming the key', async () => {
    const refusal = async (options: Parameters<typeof tusUpload>[1]) => refusalOf(await tusUpload(Buffer.from('x'), options).catch((error: unknown) => error));
    expect(await refusal({ headers: {} })).toEqual({ status: 401, body: JSON.stringify({ error: 'missing token: send "Authorization: Bearer <token>" (or sign in to the web UI)' }) });
    expect((await refusal({ headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await refusal({ headers: { ...auth(), origin: 'https://evil.example' } })).status).toBe(403);
    expect(await refusal({ metadata: { conversationId: 'conv_doesnotexist', filename: 'a.txt' } })).toEqual({ status: 404, body: JSON.stringify({ error: 'Upload-Metadata conversationId: conversation conv_doesnotexist does not exist' }) });
    expect(JSON.parse((await refusal({ metadata: { conversationId: '../etc', filename: 'a.txt' } })).body).error).toBe('Upload-Metadata conversationId: "../etc" is not a conversation id (expected conv_ followed by letters and digits)');
    expect(JSON.parse((await refusal({ metadata: { conversationId } })).body).error).toBe('Upload-Metadata filename: missing (send conversationId and filename, base64 encoded)');
    // A long value is quoted cut, by whole characters.
    expect(JSON.parse((await refusal({ metadata: { conversationId: '😀'.repeat(100), filename: 'a.txt' } })).body).error).toBe(`Upload-Metadata conversationId: "${'😀'.repeat(79)}…" is not a conversation id (expected conv_ followed by letters and digits)`);

    // An upload's URL gives nothing without the token: HEAD, PATCH and DELETE are refused too.
    const created = await rawRequest(harness.server.url, '/api/v1/uploads/tus', { method: 'POST', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-length': '4', 'upload-metadata': `conversationId ${Buffer.from(conversationId).toString('base64')},filename ${Buffer.from('a.txt').toString('base64')}` } });
    const location = String(created.headers.location);
    for (const method of ['HEAD', 'PATCH', 'DELETE', 'OPTIONS']) {
      const answer = await rawRequest(harness.server.url, location, { method, headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: method === 'PATCH' ? 'abcd' : undefined });
      expect(answer.status, method).toBe(401);
    }
    expect(await offsetOf(`${harness.server.url}${location}`)).toBe(0);
    const unknown = await rawRequest(harness.server.url, '/api/v1/uploads/tus/0123456789abcdef0123456789abcdef', { method: 'DELETE', headers: { ...auth(), 'tus-resumable': '1.0.0' } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toBe('application/json');
    expect(JSON.parse(unknown.body)).toEqual({ error: 'upload 0123456789abcdef0123456789abcdef does not exist' });
    const traversal = await rawRequest(harness.server.url, '/api/v1/uploads/tus/..%2f..%2fserver.yaml', { method: 'PATCH', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: 'x' });
    expect(traversal.status).toBe(404);
    // Metadata tus cannot decode, or none at all.
    const undecodable = await rawRequest(harness.server.url, '/api/v1/uploads/tus', { method: 'POST', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': 'conversationId !!not-base64!!' } });
    expect(undecodable.status).toBe(400);
    // Refused by tus's own header checks: JSON naming the header and the value, like every other refusal.
    const json = (answer: { status: number; headers: Record<string, unknown>; body: string }) => ({ status: answer.status, type: answer.headers['content-type'], body: JSON.parse(answer.body) as unknown, tus: answer.headers['tus-resumable'] });
    expect(json(undecodable)).toEqual({ status: 400, type: 'application/json', tus: '1.0.0', body: { error: 'Upload-Metadata: "conversationId !!not-base64!!" is not valid (comma-separated pairs of a key and its value in base64)' } });
    const badLength = await rawRequest(harness.server.url, '/api/v1/uploads/tus', { method: 'POST', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-length': 'abc' } });
    expect(json(badLength)).toEqual({ status: 400, type: 'application/json', tus: '1.0.0', body: { error: 'Upload-Length: "abc" is not valid (a whole number of bytes, 0 or more)' } });
    const noVersion = await rawRequest(harness.server.url, '/api/v1/uploads/tus', { method: 'POST', headers: { ...auth(), 'upload-length': '1' } });
    expect(json(noVersion)).toMatchObject({ status: 412, type: 'application/json', body: { error: 'Tus-Resumable: the header is required (this server speaks tus 1.0.0)' } });
    const wrongOffset = await rawRequest(harness.server.url, location, { method: 'PATCH', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-offset': '2', 'content-type': 'application/offset+octet-stream' }, body: 'cd' });
    expect(json(wrongOffset)).toMatchObject({ status: 409, type: 'application/json', tus: '1.0.0' });
    expect(String((json(wrongOffset).body as { error: string }).error)).toContain('Upload-Offset');
    expect(await offsetOf(`${harness.server.url}${location}`)).toBe(0);
    const without = await rawRequest(harness.server.url, '/api/v1/uploads/tus', { method: 'POST', headers: { ...auth(), 'tus-resumable': '1.0.0', 'upload-length': '1' } });
    expect(JSON.parse(without.body)).toEqual({ error: 'Upload-Metadata conversationId: missing (send conversationId and filename, base64 encoded)' });
    const rebound = await rawRequest(harness.server.url, '/api/v1/uploads/tus', { method: 'POST', headers: { ...auth(), host: 'evil.example', 'tus-resumable': '1.0.0', 'upload-length': '1' } });
    expect(rebound.status).toBe(421);
  });

  it('write the workspace copy through the executor: over SSH, and never through a symlink leading out', async () => {
    const remote = path.join(harness.environment.root, 'remote-work');
    mkdirSync(remote);
    const overSsh = (await harness.client.request('conversation/create', { cwd: remote, executor: 'box' })).conversation.id;
    const uploaded = await tusUpload(Buffer.from('over ssh\n'), { metadata: { conversationId: overSsh, filename: 'notes.txt' } });
    expect(uploaded.body.workspacePath).toBe('.openvaala/attachments/notes.txt');
    expect(readFileSync(path.join(remote, '.openvaala', 'attachments', 'notes.txt'), 'utf8')).toBe('over ssh\n');
    expect(readFileSync(path.join(remote, '.openvaala', 'attachments', '.gitignore'), 'utf8')).toBe('*\n');

    // A workspace whose .openvaala leads outside it: the attachment is stored, the copy is not written.
    const linked = path.join(harness.environment.root, 'linked-work');
    const outside = path.join(harness.environment.root, 'outside');
    mkdirSync(linked);
    mkdirSync(outside);
    symlinkSync(outside, path.join(linked, '.openvaala'));
    const inLinked = (await harness.client.request('conversation/create', { cwd: linked })).conversation.id;
    const refused = await tusUpload(Buffer.from('stay inside\n'), { metadata: { conversationId: inLinked, filename: 'x.txt' } });
    expect(refused.body.workspacePath).toBeNull();
    expect((refused.body as { workspaceError?: string }).workspaceError).toContain('leads outside the workspace');
    expect(refused.body.attachment).toMatchObject({ name: 'x.txt', size: 12 });
    expect(readdirSync(outside)).toEqual([]);
  });

  it('hand a complete upload over when its client comes back, if the first hand-over failed', async () => {
    const staged = (await harness.client.request('conversation/create', { cwd: harness.environment.workDir })).conversation.id;
    // A file where the conversation's staging directory would go: storing the attachment fails.
    const blocker = path.join(harness.environment.paths.dataDir, 'staging', staged);
    mkdirSync(path.dirname(blocker), { recursive: true });
    writeFileSync(blocker, 'in the way');
    let url = '';
    const failed = refusalOf(await tusUpload(Buffer.from('kept\n'), { metadata: { conversationId: staged, filename: 'kept.txt' }, onUrl: (given) => (url = given) }).catch((error: unknown) => error));
    expect(failed).toEqual({ status: 500, body: JSON.stringify({ error: 'the upload could not be stored; see the server log' }) });
    rmSync(blocker);
    // Resuming finds the upload complete; its HEAD hands it over and names the attachment.
    const resumed = await new Promise<string>((resolve, reject) => {
      const upload = new Upload(Buffer.from('kept\n'), {
        endpoint: endpoint(),
        uploadUrl: url,
        headers: auth(),
        retryDelays: null,
        storeFingerprintForResuming: false,
        onSuccess: ({ lastResponse }) => resolve(lastResponse.getHeader('Upload-Metadata') ?? ''),
        onError: reject,
      });
      upload.start();
    });
    const attachmentId = /attachmentId ([^,]+)/.exec(resumed)?.[1];
    expect(attachmentId).toBeDefined();
    const decoded = Buffer.from(attachmentId as string, 'base64').toString();
    expect(readdirSync(path.join(harness.environment.paths.dataDir, 'staging', staged))).toEqual([`${decoded}-kept.txt`]);
    // Asking again hands nothing over twice.
    expect(await offsetOf(url)).toBe(5);
    expect(readdirSync(path.join(harness.environment.paths.dataDir, 'staging', staged))).toHaveLength(1);
  });

  it('forget uploads left untouched for a day, and data files without a record', async () => {
    const directory = mkdtempSync(path.join(harness.environment.root, 'sweep-'));
    const store = new TusUploadStore(directory);
    const stale = newUploadId();
    const fresh = newUploadId();
    for (const id of [stale, fresh]) await store.create(new TusUpload({ id, size: 3, offset: 0, metadata: { conversationId, filename: 'a.txt' } }));
    const orphan = newUploadId();
    writeFileSync(path.join(store.directory, orphan), 'x');
    const day = 24 * 60 * 60 * 1000;
    const later = Date.now() + day + 60_000;
    // The fresh one was written to an hour before `later`: it stays.
    utimesSync(path.join(store.directory, fresh), new Date(later - 3_600_000), new Date(later - 3_600_000));
    expect(await store.removeOlderThan(day, later)).toBe(1);
    expect(readdirSync(store.directory).sort()).toEqual([fresh, `${fresh}.json`].sort());
    expect(await store.info(stale)).toBeUndefined();
  });

  it('number a taken name before its extension', () => {
    expect([1, 2, 3].map((attempt) => numberedName('photo.png', attempt))).toEqual(['photo.png', 'photo-2.png', 'photo-3.png']);
    expect(numberedName('archive.tar.gz', 2)).toBe('archive.tar-2.gz');
    expect(numberedName('Makefile', 2)).toBe('Makefile-2');
  });
});

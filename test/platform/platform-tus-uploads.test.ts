/**
 * Resumable uploads (`/api/v1/uploads/tus`) in platform mode (docs/platform.md, "Members and
 * access"), over real HTTP with users signed in through the sign-in API: the access rule is
 * checked on every request, not only at creation. A member of another project who has an
 * upload's URL is refused its HEAD, PATCH and DELETE and the upload is unchanged; a member
 * removed from the project mid-upload is refused the next chunk; a read-only token and a cookie
 * request without the CSRF header are refused; the member finishes with tus-js-client.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Upload } from 'tus-js-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/runtime-server.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { rawRequest, type RawAnswer } from '../helpers/http-exchange.js';
import { BrowserLike } from './platform-client.js';
import { startPlatformServer, type PlatformServer } from './platform-server.js';

let environment: TestEnvironment;
let server: RunningServer;
let addressCount = 0;

function newBrowser(): BrowserLike {
  addressCount++;
  return new BrowserLike(server.url, { 'x-forwarded-for': `198.51.100.${addressCount}` });
}

/** The headers a signed-in page sends. */
function cookieHeaders(browser: BrowserLike): Record<string, string> {
  return { ...browser.headers, cookie: browser.cookieHeader, origin: server.url, 'x-csrf-token': browser.csrfToken };
}

/** One tus request with exactly these headers (plus `Tus-Resumable`). */
function tus(method: string, target: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const chunk: Record<string, string> = method === 'PATCH' ? { 'upload-offset': headers['upload-offset'] ?? '0', 'content-type': 'application/offset+octet-stream' } : {};
  return rawRequest(server.url, target, { method, headers: { 'tus-resumable': '1.0.0', ...chunk, ...headers }, ...(body !== undefined ? { body } : {}) });
}

function metadata(conversationId: string, filename: string): string {
  return `conversationId ${Buffer.from(conversationId).toString('base64')},filename ${Buffer.from(filename).toString('base64')}`;
}

/** The server's offset of an upload, asked as its owner. */
async function offset(target: string, owner: Record<string, string>): Promise<string | undefined> {
  return (await tus('HEAD', target, owner)).headers['upload-offset'] as string | undefined;
}

async function signUp(admin: Awaited<ReturnType<BrowserLike['connect']>>, email: string): Promise<{ browser: BrowserLike; id: string }> {
  const invitation = await admin.result('users/invite', { email, role: 'member' });
  const code = /#invitation=([A-Za-z0-9_-]{43})$/.exec(String(invitation.url))?.[1] as string;
  const browser = newBrowser();
  await browser.state();
  const id = String(((await browser.post('invitation', { code, password: `${email} long password` })).json.user as { id: string }).id);
  return { browser, id };
}

let platform: PlatformServer | undefined;

beforeAll(async () => {
  platform = await startPlatformServer();
  ({ environment, server } = platform);
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

it('checks the conversation’s project on every request: other members, removed members, read-only tokens and missing CSRF are refused', async () => {
  const admin = newBrowser();
  await admin.state();
  expect((await admin.post('claim', { email: 'ada@example.com', password: 'correct horse battery' })).status).toBe(200);
  const adminSocket = await admin.connect();
  const bob = await signUp(adminSocket, 'bob@example.com');
  const carol = await signUp(adminSocket, 'carol@example.com');
  const workspace = { executor: 'local', directory: environment.workDir };
  const mine = (await adminSocket.result('projects/create', { name: 'Mine', workspace })).project as { id: string };
  const theirs = (await adminSocket.result('projects/create', { name: 'Theirs', workspace })).project as { id: string };
  await adminSocket.result('projects/members/add', { projectId: mine.id, userId: bob.id });
  await adminSocket.result('projects/members/add', { projectId: theirs.id, userId: carol.id });
  const inMine = ((await adminSocket.result('conversation/create', { projectId: mine.id })).conversation as { id: string }).id;

  // Bob starts an upload with his session cookie and sends the first chunk.
  const bobHeaders = cookieHeaders(bob.browser);
  const created = await tus('POST', '/api/v1/uploads/tus', { ...bobHeaders, 'upload-length': '12', 'upload-metadata': metadata(inMine, 'notes.txt') });
  expect(created.status, created.body).toBe(201);
  const location = String(created.headers.location);
  expect((await tus('PATCH', location, { ...bobHeaders, 'upload-offset': '0' }, 'hello ')).status).toBe(204);

  // Carol, signed in but in another project, has the URL: every method is refused, nothing changes.
  const carolHeaders = cookieHeaders(carol.browser);
  const refused = { error: `upload ${path.basename(location)}: conversation ${inMine} is not in a project you are a member of` };
  const head = await tus('HEAD', location, carolHeaders);
  expect(head.status).toBe(403);
  expect(head.headers['upload-offset']).toBeUndefined();
  const patch = await tus('PATCH', location, { ...carolHeaders, 'upload-offset': '6' }, 'evil!!');
  expect(patch.status).toBe(403);
  expect(JSON.parse(patch.body)).toEqual(refused);
  expect((await tus('DELETE', location, carolHeaders)).status).toBe(403);
  // Nor may she create an upload for Bob's conversation, or for an unknown one (same answer).
  const foreignCreation = await tus('POST', '/api/v1/uploads/tus', { ...carolHeaders, 'upload-length': '1', 'upload-metadata': metadata(inMine, 'x.txt') });
  expect(foreignCreation.status).toBe(403);
  expect(JSON.parse(foreignCreation.body)).toEqual({ error: `Upload-Metadata conversationId: conversation ${inMine} is not in a project you are a member of` });
  expect((await tus('POST', '/api/v1/uploads/tus', { ...carolHeaders, 'upload-length': '1', 'upload-metadata': metadata('conv_doesnotexist', 'x.txt') })).status).toBe(403);
  // A token scoped to her project is refused the same way.
  const carolSocket = await carol.browser.connect();
  const carolToken = String((await carolSocket.result('account/tokens/create', { name: 'ci', scope: { kind: 'project', projectId: theirs.id } })).token);
  expect((await tus('PATCH', location, { authorization: `Bearer ${carolToken}`, 'upload-offset': '6' }, 'evil!!')).status).toBe(403);
  expect(await offset(location, bobHeaders)).toBe('6');

  // Bob's read-only token and his cookie without the CSRF header are refused too.
  const bobSocket = await bob.browser.connect();
  const reader = String((await bobSocket.result('account/tokens/create', { name: 'reader', scope: { kind: 'read-only' } })).token);
  const readOnly = await tus('HEAD', location, { authorization: `Bearer ${reader}` });
  expect(readOnly.status).toBe(403);
  const { 'x-csrf-token': _csrf, ...withoutCsrf } = bobHeaders;
  const noCsrf = await tus('PATCH', location, { ...withoutCsrf, 'upload-offset': '6' }, 'world!');
  expect(noCsrf.status).toBe(403);
  expect(JSON.parse(noCsrf.body).error).toContain('missing x-csrf-token header');

  // Bob finishes with tus-js-client, resuming from the server's offset.
  const finished = await new Promise<{ workspacePath: string; attachment: { id: string } }>((resolve, reject) => {
    const upload = new Upload(Buffer.from('hello world!'), {
      endpoint: `${server.url}/api/v1/uploads/tus`,
      uploadUrl: `${server.url}${location}`,
      headers: bobHeaders,
      retryDelays: null,
      storeFingerprintForResuming: false,
      onSuccess: ({ lastResponse }) => resolve(JSON.parse(lastResponse.getBody()) as { workspacePath: string; attachment: { id: string } }),
      onError: reject,
    });
    upload.start();
  });
  expect(readFileSync(path.join(environment.workDir, finished.workspacePath), 'utf8')).toBe('hello world!');

  // Access is read on every request: removed from the project mid-upload, Bob is refused the next chunk.
  const second = await tus('POST', '/api/v1/uploads/tus', { ...bobHeaders, 'upload-length': '4', 'upload-metadata': metadata(inMine, 'late.txt') });
  expect(second.status).toBe(201);
  const secondLocation = String(second.headers.location);
  await adminSocket.result('projects/members/remove', { projectId: mine.id, userId: bob.id });
  const late = await tus('PATCH', secondLocation, { ...bobHeaders, 'upload-offset': '0' }, 'late');
  expect(late.status).toBe(403);
  expect(JSON.parse(late.body)).toEqual({ error: `upload ${path.basename(secondLocation)}: conversation ${inMine} is not in a project you are a member of` });
  // The administrator may still see it: nothing was written.
  expect((await tus('HEAD', secondLocation, cookieHeaders(admin))).headers['upload-offset']).toBe('0');
  carolSocket.close();
  bobSocket.close();
  adminSocket.close();
}, 60_000);

/**
 * `POST /api/v1/uploads` in platform mode (docs/platform.md, "Members and access"), over real
 * HTTP with users signed in through the sign-in API: a member uploads to a conversation of their
 * project with their session cookie or an API token; a non-member, a read-only token and a
 * token scoped to another project are refused and nothing is stored; a cookie upload must pass
 * the CSRF rule (X-CSRF-Token header, same Origin).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/runtime-server.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { rawRequest, type RawAnswer } from '../helpers/http-exchange.js';
import { ProxiedBrowsers, signInAdministratorAndMember, type BrowserLike } from './platform-client.js';
import { startPlatformServer, type PlatformServer } from './platform-server.js';

let environment: TestEnvironment;
let server: RunningServer;

/** Uploads `body` as `name` to a conversation with exactly the headers given. */
function upload(conversationId: string, name: string, headers: Record<string, string>, body = 'hello'): Promise<RawAnswer> {
  return rawRequest(server.url, `/api/v1/uploads?conversationId=${conversationId}&name=${name}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers }, body });
}

/** The headers a signed-in page sends with an upload. */
function cookieHeaders(browser: BrowserLike): Record<string, string> {
  return { ...browser.headers, cookie: browser.cookieHeader, origin: server.url, 'x-csrf-token': browser.csrfToken };
}

/** The stored files of a conversation (staged until its first input, then in its directory). */
function storedFiles(conversationId: string): string[] {
  const { dataDir } = environment.paths;
  const directories = [path.join(dataDir, 'staging', conversationId), path.join(dataDir, 'conversations', conversationId, 'attachments')];
  return directories.filter((directory) => existsSync(directory)).flatMap((directory) => readdirSync(directory));
}

let platform: PlatformServer | undefined;

beforeAll(async () => {
  platform = await startPlatformServer();
  ({ environment, server } = platform);
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

it('members upload to their projects’ conversations; non-members, read-only and other-project tokens and cookie uploads failing CSRF are refused', async () => {
  const { adminSocket, member: bob, memberId: bobId } = await signInAdministratorAndMember(new ProxiedBrowsers(server.url));

  const workspace = { executor: 'local', directory: environment.workDir };
  const mine = (await adminSocket.result('projects/create', { name: 'Mine', workspace })).project as { id: string };
  const theirs = (await adminSocket.result('projects/create', { name: 'Theirs', workspace })).project as { id: string };
  await adminSocket.result('projects/members/add', { projectId: mine.id, userId: bobId });
  const inMine = ((await adminSocket.result('conversation/create', { projectId: mine.id })).conversation as { id: string }).id;
  const inTheirs = ((await adminSocket.result('conversation/create', { projectId: theirs.id })).conversation as { id: string }).id;

  // A member's session cookie, with the CSRF header and the page's Origin.
  const stored = await upload(inMine, 'notes.md', cookieHeaders(bob));
  expect(stored.status, stored.body).toBe(201);
  const attachmentId = (JSON.parse(stored.body) as { attachment: { id: string } }).attachment.id;
  expect(storedFiles(inMine)).toEqual([`${attachmentId}-notes.md`]);

  // Not a member of the conversation's project: refused, nothing stored.
  const outside = await upload(inTheirs, 'notes.md', cookieHeaders(bob));
  expect(outside.status).toBe(403);
  expect(JSON.parse(outside.body)).toEqual({ error: `query conversationId: conversation ${inTheirs} is not in a project you are a member of` });
  expect(storedFiles(inTheirs)).toEqual([]);

  // A cookie upload without the CSRF header, with a wrong one, or from a foreign Origin.
  const { 'x-csrf-token': _token, ...withoutCsrf } = cookieHeaders(bob);
  const missing = await upload(inMine, 'a.md', withoutCsrf);
  expect(missing.status).toBe(403);
  expect(JSON.parse(missing.body).error).toContain('missing x-csrf-token header');
  expect((await upload(inMine, 'b.md', { ...cookieHeaders(bob), 'x-csrf-token': 'forged' })).status).toBe(403);
  const foreign = await upload(inMine, 'c.md', { ...cookieHeaders(bob), origin: 'https://evil.example' });
  expect(foreign.status).toBe(403);
  expect(JSON.parse(foreign.body).error).toContain('origin https://evil.example may not use this server');
  expect(storedFiles(inMine)).toEqual([`${attachmentId}-notes.md`]);

  // API tokens: the member's token scoped to their project works; read-only and another project's are refused.
  const bobSocket = await bob.connect();
  const ownProject = String((await bobSocket.result('account/tokens/create', { name: 'ci', scope: { kind: 'project', projectId: mine.id } })).token);
  expect((await upload(inMine, 'ci.txt', { authorization: `Bearer ${ownProject}` })).status).toBe(201);
  const reader = String((await bobSocket.result('account/tokens/create', { name: 'reader', scope: { kind: 'read-only' } })).token);
  const readOnly = await upload(inMine, 'r.txt', { authorization: `Bearer ${reader}` });
  expect(readOnly.status).toBe(403);
  expect(JSON.parse(readOnly.body)).toEqual({ error: 'this API token is read-only; an upload changes state' });
  const scoped = String((await adminSocket.result('account/tokens/create', { name: 'theirs', scope: { kind: 'project', projectId: theirs.id } })).token);
  expect((await upload(inMine, 's.txt', { authorization: `Bearer ${scoped}` })).status).toBe(403);
  expect((await upload(inTheirs, 's.txt', { authorization: `Bearer ${scoped}` })).status).toBe(201);
  expect(storedFiles(inMine).filter((file) => !file.endsWith('-notes.md'))).toHaveLength(1);

  // No or unknown credentials, and an unknown conversation.
  expect((await upload(inMine, 'x.txt', {})).status).toBe(401);
  const unknown = await upload(inMine, 'x.txt', { authorization: 'Bearer ov_unknown' });
  expect(unknown.status).toBe(401);
  expect(JSON.parse(unknown.body)).toEqual({ error: 'wrong token' });
  // A member cannot tell an unknown conversation from one of another project.
  const nowhere = await upload('conv_doesnotexist', 'x.txt', cookieHeaders(bob));
  expect(nowhere.status).toBe(403);
  expect(JSON.parse(nowhere.body)).toEqual({ error: 'query conversationId: conversation conv_doesnotexist is not in a project you are a member of' });
  bobSocket.close();
  adminSocket.close();
}, 60_000);

/**
 * Identity and projects as one platform (SPEC §9, docs/platform.md), with users signed in
 * through the real sign-in API over HTTP and WebSocket: a member reaches only their projects,
 * a project-scoped API token only its project, and removing a user takes their memberships.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/runtime-server.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { ProxiedBrowsers, RpcSocket, signInAdministratorAndMember } from './platform-client.js';
import { startPlatformServer, type PlatformServer } from './platform-server.js';

let environment: TestEnvironment;
let server: RunningServer;

let platform: PlatformServer | undefined;

beforeAll(async () => {
  platform = await startPlatformServer();
  ({ environment, server } = platform);
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

it('signed-in members reach only their projects, project tokens only theirs, and a removed user loses their memberships', async () => {
  const { adminSocket, member: bob, memberId: bobId } = await signInAdministratorAndMember(new ProxiedBrowsers(server.url));

  const workspace = { executor: 'local', directory: environment.workDir };
  const mine = (await adminSocket.result('projects/create', { name: 'Mine', workspace })).project as { id: string };
  const theirs = (await adminSocket.result('projects/create', { name: 'Theirs', workspace })).project as { id: string };
  await adminSocket.result('projects/members/add', { projectId: mine.id, userId: bobId });
  const inMine = (await adminSocket.result('conversation/create', { projectId: mine.id })).conversation as { id: string };
  const inTheirs = (await adminSocket.result('conversation/create', { projectId: theirs.id })).conversation as { id: string };

  const bobSocket = await bob.connect();
  expect(((await bobSocket.result('projects/list', {})).projects as { id: string }[]).map((project) => project.id)).toEqual([mine.id]);
  expect((await bobSocket.failure('conversation/get', { conversationId: inTheirs.id })).code).toBe(-32003);

  // A project-scoped token of an administrator reaches only its project.
  const scoped = String((await adminSocket.result('account/tokens/create', { name: 'ci', scope: { kind: 'project', projectId: theirs.id } })).token);
  const script = await RpcSocket.open(server.url, { authorization: `Bearer ${scoped}` });
  expect(((await script.result('conversation/get', { conversationId: inTheirs.id })).conversation as { id: string }).id).toBe(inTheirs.id);
  const outside = await script.failure('conversation/get', { conversationId: inMine.id });
  expect(outside.code).toBe(-32003);
  expect(outside.message).toContain('params.conversationId');
  expect((await script.failure('projects/members/list', { projectId: mine.id })).code).toBe(-32003);
  script.close();

  // Removing the user through identity ends their connection and takes their memberships.
  await adminSocket.result('users/remove', { userId: bobId });
  await expect.poll(() => bobSocket.closed?.code).toBe(1008);
  const members = (await adminSocket.result('projects/members/list', { projectId: mine.id })).members as { userId: string }[];
  expect(members.map((member) => member.userId)).not.toContain(bobId);
  expect(((await server.platform.inventory()).project_members ?? []).some((key) => key.includes(bobId))).toBe(false);
  adminSocket.close();
}, 60_000);

/**
 * Project lifecycle over a real server (docs/platform.md, "Projects" and "Deletion"): slugs,
 * start and stop with a persisted status recovered after a restart (gap "in-memory-only run
 * state"), members, bindings and secrets surviving a restart, deletion cascades that leave
 * nothing in any store (gap "project deletion not cascading to chats"), and secret removal
 * leaving no copy of the value in the workspace (gap "secret removal leaving stale .env
 * copies").
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { RuntimeClientError } from '../../src/client/runtime-client.js';
import { ErrorCodes } from '../../src/protocol/index.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';
import { startPlatformServer, type PlatformHarness } from './two-users.js';

const SCRIPT = `
responses:
  - text: "first"
  - text: "second"
  - text: "third"
`;

let harness: PlatformHarness | undefined;
let environment: TestEnvironment | undefined;
afterEach(async () => {
  await harness?.stop();
  await environment?.dispose();
  harness = undefined;
  environment = undefined;
});

async function turn(client: Awaited<ReturnType<PlatformHarness['connect']>>, conversationId: string, input: string): Promise<void> {
  const before = client.events.filter((event) => event.method === 'turn/completed').length;
  await client.client.request('conversation/subscribe', { conversationId });
  await client.client.request('session/input', { conversationId, input });
  await expect.poll(() => client.events.filter((event) => event.method === 'turn/completed').length).toBeGreaterThan(before);
}

it('status, members, bindings and secrets are persisted and recovered after a restart; an unreachable workspace starts as error', async () => {
  environment = await createTestEnvironment(SCRIPT);
  harness = await startPlatformServer(SCRIPT, { environment });
  let owner = await harness.connect();
  const kept = harness.directory('kept');
  const vanishing = harness.directory('vanishing');
  const { project } = await owner.client.request('projects/create', { name: 'Kept', workspace: { executor: 'local', directory: kept }, resources: { cpuSeconds: 60, memoryMiB: 512, processes: 64 } });
  const { project: other } = await owner.client.request('projects/create', { name: 'Vanishing', workspace: { executor: 'local', directory: vanishing } });
  expect(project.status).toBe('stopped');
  expect((await owner.client.request('projects/start', { projectId: project.id })).project.status).toBe('running');
  expect((await owner.client.request('projects/start', { projectId: other.id })).project.status).toBe('running');
  await owner.client.request('projects/members/add', { projectId: project.id, userId: 'alice' });
  await owner.client.request('projects/secrets/set', { projectId: project.id, name: 'API_TOKEN', value: 'restart-value-1' });
  const { conversation } = await owner.client.request('conversation/create', { projectId: project.id });
  await harness.server.stop();
  rmSync(vanishing, { recursive: true });

  harness = await startPlatformServer(SCRIPT, { environment });
  owner = await harness.connect();
  const alice = await harness.connect('alice');
  await expect.poll(async () => (await owner.client.request('projects/list', {})).projects.map((each) => [each.name, each.status])).toEqual([
    ['Kept', 'running'],
    ['Vanishing', 'error'],
  ]);
  const listed = (await owner.client.request('projects/list', {})).projects;
  expect(listed[1]?.statusMessage).toContain(`"${vanishing}" is not a directory on executor "local"`);
  expect(listed[0]?.resources).toEqual({ cpuSeconds: 60, memoryMiB: 512, processes: 64 });
  expect((await alice.client.request('projects/list', {})).projects.map((each) => each.id)).toEqual([project.id]);
  expect((await owner.client.request('projects/secrets/list', { projectId: project.id })).secrets).toMatchObject([{ name: 'API_TOKEN', value: 'restart-value-1' }]);
  // Alice is a plain member: she sees the name, never the value.
  expect((await alice.client.request('projects/secrets/list', { projectId: project.id })).secrets).toMatchObject([{ name: 'API_TOKEN', value: '***' }]);
  expect(harness.server.platform.projects.projectOf(conversation.id)).toBe(project.id);
  expect((await owner.client.request('projects/stop', { projectId: project.id })).project.status).toBe('stopped');
});

it('slugs: Unicode names work, slugs are unique, names without letters get distinct fallbacks; bad input names the field', async () => {
  harness = await startPlatformServer(SCRIPT);
  const owner = await harness.connect();
  const workspace = { executor: 'local', directory: harness.directory('slugs') };
  const slugs: string[] = [];
  for (const name of ['Café Ünïcode', 'Проект', '項目 二', 'Café Unicode', '🚀', '🛸']) slugs.push((await owner.client.request('projects/create', { name, workspace })).project.slug);
  expect(slugs.slice(0, 4)).toEqual(['cafe-unicode', 'проект', '項目-二', 'cafe-unicode-2']);
  expect(slugs[4]).toMatch(/^project-[0-9a-f]{8}$/);
  expect(slugs[5]).toMatch(/^project-[0-9a-f]{8}$/);
  expect(slugs[4]).not.toBe(slugs[5]);
  const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: RuntimeClientError) => ({ code: error.code, message: error.message }));
  expect(await refusal(owner.client.request('projects/create', { name: 'x', workspace: { executor: 'local', directory: '/does/not/exist' } }))).toEqual({ code: ErrorCodes.invalidParams, message: 'projects/create: params.workspace: "/does/not/exist" is not a directory on executor "local"' });
  expect(await refusal(owner.client.request('projects/create', { name: 'x', workspace: { executor: 'nowhere', directory: '/' } }))).toMatchObject({ code: ErrorCodes.invalidParams, message: expect.stringContaining('params.workspace: executor "nowhere" is not configured') });
  expect(await refusal(owner.client.request('projects/update', { projectId: 'proj_missing', name: 'y' }))).toEqual({ code: ErrorCodes.notFound, message: 'projects/update: params.projectId: project "proj_missing" does not exist' });
  allowInvalidSentMessages();
  expect((await refusal(owner.client.request('projects/secrets/set', { projectId: 'proj_x', name: '1BAD', value: 'abcdefgh' })))?.message).toContain('params.name');
  expect((await refusal(owner.client.request('projects/secrets/set', { projectId: 'proj_x', name: 'SHORT', value: 'abc' })))?.message).toContain('params.value');
});

it('deleting a project removes its conversations, read markers, secrets (and their .env block), members and home; a conversation deletion removes its records', async () => {
  harness = await startPlatformServer(SCRIPT);
  const owner = await harness.connect();
  const workspace = harness.directory('doomed');
  writeFileSync(path.join(workspace, '.env'), 'MINE=1\n');
  const { project } = await owner.client.request('projects/create', { name: 'Doomed', workspace: { executor: 'local', directory: workspace } });
  const { project: survivor } = await owner.client.request('projects/create', { name: 'Survivor', workspace: { executor: 'local', directory: harness.directory('survivor') } });
  await owner.client.request('projects/members/add', { projectId: project.id, userId: 'alice' });
  await owner.client.request('projects/secrets/set', { projectId: project.id, name: 'DOOMED_KEY', value: 'doomed-value-1' });
  const home = harness.server.platform.agentHome(project.id);
  const first = (await owner.client.request('conversation/create', { projectId: project.id })).conversation.id;
  const second = (await owner.client.request('conversation/create', { projectId: project.id })).conversation.id;
  const kept = (await owner.client.request('conversation/create', { projectId: survivor.id })).conversation.id;
  await turn(owner, first, 'one');
  await turn(owner, second, 'two');
  await turn(owner, kept, 'three');
  for (const id of [first, second, kept]) await owner.client.request('conversations/markRead', { conversationId: id });
  const listedBefore = (await owner.client.request('conversation/list', {})).conversations;
  expect(listedBefore.map((summary) => [summary.id, summary.projectId, summary.unread]).sort()).toEqual([[first, project.id, false], [kept, survivor.id, false], [second, project.id, false]].sort());

  // A conversation deletion takes its read markers and binding with it.
  await owner.client.request('conversation/delete', { conversationId: second });
  let inventory = await harness.server.platform.inventory();
  expect(inventory.project_conversations?.sort()).toEqual([first, kept].sort());
  expect(inventory.read_markers?.sort()).toEqual([`local-owner/${first}`, `local-owner/${kept}`].sort());

  const { deletedConversations } = await owner.client.request('projects/delete', { projectId: project.id });
  expect(deletedConversations).toBe(1);
  inventory = await harness.server.platform.inventory();
  expect(inventory).toEqual({
    projects: [survivor.id],
    project_members: [],
    project_conversations: [kept],
    project_secrets: [],
    user_settings: [],
    read_markers: [`local-owner/${kept}`],
  });
  expect((await owner.client.request('conversation/list', {})).conversations.map((summary) => summary.id)).toEqual([kept]);
  const conversationsDirectory = path.join(harness.environment.paths.dataDir, 'conversations');
  expect(readdirSync(conversationsDirectory).filter((name) => name === first || name === second)).toEqual([]);
  expect(existsSync(home)).toBe(false);
  expect(readFileSync(path.join(workspace, '.env'), 'utf8')).toBe('MINE=1\n');
  const gone = await owner.client.request('conversation/get', { conversationId: first }).then(() => undefined, (error: RuntimeClientError) => error.code);
  expect(gone).toBe(ErrorCodes.notFound);
});

it('removing a secret removes its .env line and leaves no copy of the value in the workspace', async () => {
  harness = await startPlatformServer(SCRIPT);
  const owner = await harness.connect();
  const workspace = harness.directory('stale');
  writeFileSync(path.join(workspace, '.env'), 'FIRST=user\n');
  const { project } = await owner.client.request('projects/create', { name: 'Stale', workspace: { executor: 'local', directory: workspace } });
  await owner.client.request('projects/secrets/set', { projectId: project.id, name: 'KEEP_ME', value: 'keep-value-1' });
  await owner.client.request('projects/secrets/set', { projectId: project.id, name: 'DROP_ME', value: 'drop-value-1' });
  writeFileSync(path.join(workspace, '.env'), `${readFileSync(path.join(workspace, '.env'), 'utf8')}LAST=user too\n`);
  expect((await owner.client.request('projects/secrets/remove', { projectId: project.id, name: 'DROP_ME' })).removed).toBe(true);
  expect((await owner.client.request('projects/secrets/remove', { projectId: project.id, name: 'DROP_ME' })).removed).toBe(false);
  const text = readFileSync(path.join(workspace, '.env'), 'utf8');
  expect(text).toContain('FIRST=user\n');
  expect(text).toContain('LAST=user too\n');
  expect(text).toContain('KEEP_ME=keep-value-1\n');
  expect(text).not.toContain('DROP_ME');
  expect(readdirSync(workspace)).toEqual(['.env']);
  for (const name of readdirSync(workspace)) expect(readFileSync(path.join(workspace, name), 'utf8')).not.toContain('drop-value-1');
});

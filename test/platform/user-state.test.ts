/**
 * Per-user state over the protocol (docs/platform.md, "Settings and the model catalog"):
 * settings kept apart per user, cleared with null, refused naming the field when they name an
 * unknown agent or model; read markers giving `unread` in `conversation/list`; scoped API
 * tokens (read-only, one project) held to their scope.
 */
import { afterEach, expect, it } from 'vitest';
import { RuntimeClientError } from '../../src/client/runtime-client.js';
import { ErrorCodes } from '../../src/protocol/index.js';
import { startPlatformServer, type PlatformHarness } from './two-users.js';

const SCRIPT = `
responses:
  - text: "first answer"
  - text: "second answer"
`;

let harness: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: RuntimeClientError) => ({ code: error.code, message: error.message }));

it('settings are per user, cleared with null and checked against the catalog', async () => {
  harness = await startPlatformServer(SCRIPT);
  const alice = await harness.connect('alice');
  const bob = await harness.connect('bob');
  expect((await alice.client.request('settings/get', {})).settings).toEqual({});
  expect((await alice.client.request('settings/update', { changes: { theme: 'dark', model: 'mock/mock-model', reasoningEffort: 'high', defaultAgent: 'default' } })).settings).toEqual({ theme: 'dark', model: 'mock/mock-model', reasoningEffort: 'high', defaultAgent: 'default' });
  expect((await bob.client.request('settings/get', {})).settings).toEqual({});
  expect((await alice.client.request('settings/update', { changes: { reasoningEffort: null } })).settings).toEqual({ theme: 'dark', model: 'mock/mock-model', defaultAgent: 'default' });
  expect(await refusal(alice.client.request('settings/update', { changes: { model: 'mock/unknown' } }))).toEqual({ code: ErrorCodes.invalidParams, message: 'settings/update: params.changes.model: model "mock/unknown" is not in the catalog (see models/list)' });
  expect(await refusal(alice.client.request('settings/update', { changes: { defaultAgent: 'nobody' } }))).toEqual({ code: ErrorCodes.invalidParams, message: 'settings/update: params.changes.defaultAgent: agent "nobody" is not defined in agents.yaml' });
  // Nothing was lost by the refusals.
  expect((await alice.client.request('settings/get', {})).settings).toEqual({ theme: 'dark', model: 'mock/mock-model', defaultAgent: 'default' });
});

it('read markers: a conversation is unread until marked, and again after it changes', async () => {
  harness = await startPlatformServer(SCRIPT);
  const owner = await harness.connect();
  const { project } = await owner.client.request('projects/create', { name: 'Reading', workspace: { executor: 'local', directory: harness.directory('reading') } });
  await owner.client.request('projects/members/add', { projectId: project.id, userId: 'alice' });
  const alice = await harness.connect('alice');
  const { conversation } = await alice.client.request('conversation/create', { projectId: project.id });
  await alice.client.request('conversation/subscribe', { conversationId: conversation.id });
  await alice.client.request('session/input', { conversationId: conversation.id, input: 'one' });
  await expect.poll(() => alice.events.filter((event) => event.method === 'turn/completed').length).toBe(1);
  const unread = async (client: typeof alice) => (await client.client.request('conversation/list', {})).conversations.find((summary) => summary.id === conversation.id)?.unread;
  await expect.poll(() => unread(alice)).toBe(true);
  await alice.client.request('conversations/markRead', { conversationId: conversation.id });
  expect(await unread(alice)).toBe(false);
  // The owner's marker is their own.
  expect(await unread(owner)).toBe(true);
  await alice.client.request('session/input', { conversationId: conversation.id, input: 'two' });
  await expect.poll(() => alice.events.filter((event) => event.method === 'turn/completed').length).toBe(2);
  await expect.poll(() => unread(alice)).toBe(true);
});

it('a read-only token reads but never writes; a project token reaches only its project', async () => {
  harness = await startPlatformServer(SCRIPT);
  const owner = await harness.connect();
  const { project } = await owner.client.request('projects/create', { name: 'Scoped', workspace: { executor: 'local', directory: harness.directory('scoped') } });
  const { project: other } = await owner.client.request('projects/create', { name: 'Other', workspace: { executor: 'local', directory: harness.directory('other') } });
  for (const each of [project, other]) await owner.client.request('projects/members/add', { projectId: each.id, userId: 'alice' });
  const { conversation } = await owner.client.request('conversation/create', { projectId: project.id });
  const { conversation: elsewhere } = await owner.client.request('conversation/create', { projectId: other.id });
  const readOnly = await harness.connect('read-only:alice');
  expect((await readOnly.client.request('conversation/get', { conversationId: conversation.id })).conversation.id).toBe(conversation.id);
  expect(await refusal(readOnly.client.request('session/input', { conversationId: conversation.id, input: 'x' }))).toEqual({ code: ErrorCodes.forbidden, message: 'session/input: this API token is read-only; the method changes state' });
  expect((await refusal(readOnly.client.request('settings/update', { changes: { theme: 'light' } })))?.code).toBe(ErrorCodes.forbidden);
  // Listing scheduled tasks changes nothing; marking a conversation read records the caller's read position.
  expect((await readOnly.client.request('schedules/list', { conversationId: conversation.id })).tasks).toEqual([]);
  expect(await refusal(readOnly.client.request('conversations/markRead', { conversationId: conversation.id }))).toEqual({ code: ErrorCodes.forbidden, message: 'conversations/markRead: this API token is read-only; the method changes state' });
  const scoped = await harness.connect(`project:${project.id}:alice`);
  expect((await scoped.client.request('projects/list', {})).projects.map((each) => each.id)).toEqual([project.id]);
  expect((await refusal(scoped.client.request('conversation/get', { conversationId: elsewhere.id })))?.code).toBe(ErrorCodes.forbidden);
  expect((await scoped.client.request('conversation/get', { conversationId: conversation.id })).conversation.projectId).toBe(project.id);
});

it('removing a user takes their memberships, settings and read markers, and their access ends at once', async () => {
  harness = await startPlatformServer(SCRIPT);
  const owner = await harness.connect();
  const { project } = await owner.client.request('projects/create', { name: 'Leaving', workspace: { executor: 'local', directory: harness.directory('leaving') } });
  await owner.client.request('projects/members/add', { projectId: project.id, userId: 'carol' });
  await owner.client.request('projects/members/add', { projectId: project.id, userId: 'dave' });
  const carol = await harness.connect('carol');
  const { conversation } = await carol.client.request('conversation/create', { projectId: project.id });
  await carol.client.request('conversation/subscribe', { conversationId: conversation.id });
  await carol.client.request('settings/update', { changes: { theme: 'light' } });
  await carol.client.request('conversations/markRead', { conversationId: conversation.id });
  expect(await harness.server.platform.removeUserProjectData('carol')).toEqual([project.id]);
  const inventory = await harness.server.platform.inventory();
  expect(inventory.project_members).toEqual([`${project.id}/dave`]);
  expect(inventory.user_settings).toEqual([]);
  expect(inventory.read_markers).toEqual([]);
  expect((await refusal(carol.client.request('conversation/get', { conversationId: conversation.id })))?.code).toBe(ErrorCodes.forbidden);
  const before = carol.events.length;
  await owner.client.request('conversation/update', { conversationId: conversation.id, title: 'after carol left' });
  await owner.client.request('conversation/get', { conversationId: conversation.id });
  expect(carol.events.slice(before)).toEqual([]);
});

/**
 * How a project shows and is named over real HTTP + WebSocket (docs/platform.md, "Members and
 * access"; docs/protocol.md, "Projects, members and access"):
 * - every answer and notification that carries a conversation of a project carries its
 *   `projectId`, forks included, also after a restart;
 * - a project that does not exist is not found (-32004) for administrators and the local
 *   owner, while a member gets the same refusal for it as for a project of others, so a member
 *   cannot tell whether a project exists.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClientError } from '../../src/client/runtime-client.js';
import { METHOD_RULES } from '../../src/platform/access/access-rules.js';
import { ErrorCodes, type AnyNotification, type MethodName } from '../../src/protocol/index.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { startPlatformServer, type PlatformHarness } from './two-users.js';

const SCRIPT = `
responses:
  - text: "first answer"
  - text: "second answer"
`;

let harness: PlatformHarness | undefined;
let environment: TestEnvironment | undefined;
afterEach(async () => {
  await harness?.stop();
  await environment?.dispose();
  harness = undefined;
  environment = undefined;
});

/** The code and message a request fails with. */
async function failure(promise: Promise<unknown>, what: string): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RuntimeClientError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error(`${what} succeeded`);
}

/** Valid params for every method that names a project in `params.projectId`. */
function projectParams(projectId: string): Partial<Record<MethodName, Record<string, unknown>>> {
  return {
    'projects/update': { projectId, name: 'x' },
    'projects/delete': { projectId },
    'projects/start': { projectId },
    'projects/stop': { projectId },
    'projects/members/list': { projectId },
    'projects/members/add': { projectId, userId: 'mallory' },
    'projects/members/remove': { projectId, userId: 'alice' },
    'projects/secrets/list': { projectId },
    'projects/secrets/set': { projectId, name: 'STOLEN', value: 'value-123' },
    'projects/secrets/remove': { projectId, name: 'STOLEN' },
    'costs/project': { projectId },
    'costs/setThresholds': { projectId, warnUsd: 1 },
    'conversation/create': { projectId },
  };
}

describe('a project that does not exist', () => {
  it('every method naming one covers every project rule', () => {
    const projectMethods = Object.entries(METHOD_RULES).filter(([, rule]) => rule.kind === 'project' || rule.kind === 'create-conversation').map(([method]) => method);
    expect(Object.keys(projectParams('proj_x'))).toEqual(expect.arrayContaining(projectMethods));
  });

  it('is not found for administrators and the local owner; a member is refused alike for it and for a project of others', async () => {
    harness = await startPlatformServer(SCRIPT);
    const owner = await harness.connect();
    const admin = await harness.connect('admin-ann');
    const alice = await harness.connect('alice');
    const { project: others } = await owner.client.request('projects/create', { name: 'Others', workspace: { executor: 'local', directory: harness.directory('others') } });
    const missing = 'proj_doesnotexist';
    for (const [method, params] of Object.entries(projectParams(missing))) {
      for (const [who, caller] of [['administrator', admin], ['local owner', owner]] as const) {
        const { code, message } = await failure(caller.client.request(method as MethodName, params as never), `${method} of the ${who}`);
        expect({ who, method, code }).toEqual({ who, method, code: ErrorCodes.notFound });
        expect(message).toContain(`project "${missing}" does not exist`);
        expect(message).toMatch(new RegExp(`^${method}: params\\.projectId: `));
      }
      // A member: the same answer for a missing project and one of others, naming only the id given.
      const forMissing = await failure(alice.client.request(method as MethodName, params as never), `${method} of a member on a missing project`);
      const forOthers = await failure(alice.client.request(method as MethodName, projectParams(others.id)[method as MethodName] as never), `${method} of a member on a project of others`);
      expect({ method, code: forMissing.code }).toEqual({ method, code: forOthers.code });
      expect(forMissing.message.replaceAll(missing, '<id>')).toBe(forOthers.message.replaceAll(others.id, '<id>'));
      expect(forMissing.message).not.toContain('does not exist');
    }
  });
});

/** The `projectId` of the conversation (and summary) of each conversation notification about `conversationId`. */
function notifiedProjects(events: AnyNotification[], conversationId: string): { method: string; conversation?: unknown; summary?: unknown }[] {
  return events.flatMap((event) => {
    if (event.method !== 'conversation/created' && event.method !== 'conversation/updated') return [];
    const params = event.params as { conversation: { id: string; projectId?: string }; summary?: { projectId?: string } };
    if (params.conversation.id !== conversationId) return [];
    return [{ method: event.method, conversation: params.conversation.projectId, ...(params.summary ? { summary: params.summary.projectId } : {}) }];
  });
}

describe('projectId on every conversation of a project', () => {
  it('create, get, subscribe, update, fork, archive, unarchive and the notifications carry it, and get still does after a restart', async () => {
    environment = await createTestEnvironment(SCRIPT);
    harness = await startPlatformServer(SCRIPT, { environment });
    const owner = await harness.connect();
    const alice = await harness.connect('alice');
    const { project } = await owner.client.request('projects/create', { name: 'P', workspace: { executor: 'local', directory: harness.directory('p') } });
    await owner.client.request('projects/members/add', { projectId: project.id, userId: 'alice' });
    await alice.client.request('conversations/subscribe', {});

    const { conversation: source } = await alice.client.request('conversation/create', { projectId: project.id });
    expect(source.projectId).toBe(project.id);
    await alice.client.request('conversation/subscribe', { conversationId: source.id });
    await alice.client.request('session/input', { conversationId: source.id, input: 'hello' });
    await expect.poll(() => alice.events.some((event) => event.method === 'turn/completed')).toBe(true);
    const completed = alice.events.find((event) => event.method === 'turn/completed')?.params as { turn: { id: string } };

    const { conversation: fork } = await alice.client.request('conversation/fork', { conversationId: source.id, lastTurnId: completed.turn.id });
    const results: Record<string, { projectId?: string }> = {
      'conversation/fork': fork,
      'conversation/get': (await alice.client.request('conversation/get', { conversationId: fork.id })).conversation,
      'conversation/subscribe': (await alice.client.request('conversation/subscribe', { conversationId: fork.id })).conversation,
      'conversation/update': (await alice.client.request('conversation/update', { conversationId: fork.id, title: 'renamed fork' })).conversation,
      'conversation/archive': (await alice.client.request('conversation/archive', { conversationId: fork.id })).conversation,
      'conversation/unarchive': (await alice.client.request('conversation/unarchive', { conversationId: fork.id })).conversation,
    };
    for (const [method, conversation] of Object.entries(results)) expect({ method, projectId: conversation.projectId }).toEqual({ method, projectId: project.id });
    const listed = (await alice.client.request('conversation/list', {})).conversations.find((summary) => summary.id === fork.id);
    expect(listed?.projectId).toBe(project.id);

    // The member heard the fork being made and changed, each time with its project.
    await expect.poll(() => notifiedProjects(alice.events, fork.id).length).toBeGreaterThanOrEqual(2);
    const heard = notifiedProjects(alice.events, fork.id);
    expect(heard.map((event) => event.method)).toContain('conversation/created');
    for (const event of heard) expect(event).toEqual({ method: event.method, conversation: project.id, ...('summary' in event ? { summary: project.id } : {}) });

    // After a restart, read back from what was stored.
    await harness.stop();
    harness = await startPlatformServer(SCRIPT, { environment });
    const again = await harness.connect('alice');
    expect((await again.client.request('conversation/get', { conversationId: fork.id })).conversation.projectId).toBe(project.id);
    expect((await again.client.request('conversation/get', { conversationId: source.id })).conversation.projectId).toBe(project.id);
  });

  it('an imported conversation is outside every project: get says the same as list', async () => {
    harness = await startPlatformServer(SCRIPT);
    const owner = await harness.connect();
    const { project } = await owner.client.request('projects/create', { name: 'P', workspace: { executor: 'local', directory: harness.directory('p') } });
    const { conversation } = await owner.client.request('conversation/create', { projectId: project.id });
    await owner.client.request('session/input', { conversationId: conversation.id, input: 'hello' });
    await expect.poll(async () => (await owner.client.request('conversation/get', { conversationId: conversation.id })).sessions[0]?.status).toBe('idle');
    const { archive } = await owner.client.request('conversation/export', { conversationId: conversation.id });
    const imported = (await owner.client.request('conversation/import', { archive, asNew: true })).conversation;
    const listed = (await owner.client.request('conversation/list', {})).conversations.find((summary) => summary.id === imported.id);
    expect(listed).toBeDefined();
    expect(imported.projectId).toBe(listed?.projectId);
    expect((await owner.client.request('conversation/get', { conversationId: imported.id })).conversation.projectId).toBe(listed?.projectId);
  });
});

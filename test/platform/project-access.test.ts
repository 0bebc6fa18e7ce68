/**
 * Members and access over real HTTP + WebSocket (docs/platform.md, "Members and access"):
 * two users in two projects. A member never receives an answer or a notification about a
 * project they are not in, across every method and every notification kind; removing a member
 * ends their subscriptions and terminals at once. Covers the source document's gap
 * "unfiltered live broadcasts".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { METHOD_RULES, NOTIFICATION_RULES } from '../../src/platform/access/access-rules.js';
import { ErrorCodes, type MethodName } from '../../src/protocol/index.js';
import { RuntimeClientError } from '../../src/client/runtime-client.js';
import { startPlatformServer, type PlatformHarness, type RecordingClient } from './two-users.js';

const SCRIPT = `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo from-project-a" } }]
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which one?", choices: ["left", "right"], allow_free_text: false } }]
  - text: "done in project a"
  - text: "project b answer"
  - text: "after the removal"
  - text: "scheduled run answer"
`;

let harness: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** The error code a request fails with (undefined when it succeeds). */
async function failureCode(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (error instanceof RuntimeClientError) return error.code;
    throw error;
  }
}

/** Valid params for every method that names a conversation (the access check runs after validation). */
function conversationParams(conversationId: string): Partial<Record<MethodName, Record<string, unknown>>> {
  return {
    'conversation/get': { conversationId },
    'conversation/export': { conversationId },
    'worktree/diff': { conversationId },
    'worktree/merge': { conversationId },
    'worktree/rebase': { conversationId },
    'worktree/discard': { conversationId },
    'schedules/list': { conversationId },
    'costs/conversation': { conversationId },
    'schedules/create': { conversationId, name: 'nightly', prompt: 'x', schedule: { kind: 'once', at: 0 } },
    'conversation/subscribe': { conversationId },
    'conversation/unsubscribe': { conversationId },
    'conversations/markRead': { conversationId },
    'items/list': { conversationId },
    'session/list': { conversationId },
    'fs/list': { conversationId, path: '.' },
    'fs/read': { conversationId, path: 'a.txt' },
    'fs/stat': { conversationId, path: '.' },
    'workspace/gitLog': { conversationId },
    'workspace/gitShow': { conversationId, commit: 'abcdef12' },
    'browser/state': { conversationId },
    'browser/screenshot': { conversationId },
    'browser/input': { conversationId, action: { kind: 'navigate', url: 'http://127.0.0.1:1/' } },
    'browser/stop': { conversationId },
    'conversation/update': { conversationId, title: 'stolen' },
    'conversation/delete': { conversationId },
    'conversation/archive': { conversationId },
    'conversation/unarchive': { conversationId },
    'conversation/fork': { conversationId, fromItemId: 'item_1' },
    'conversation/rewind': { conversationId, afterItemId: 'item_1' },
    'conversation/serveFiles': { conversationId, read: true, write: false },
    'conversation/serveCommands': { conversationId, run: true },
    'session/input': { conversationId, input: 'hello' },
    'session/interrupt': { conversationId },
    'session/setModel': { conversationId, model: 'mock/mock-model' },
    'session/setAgent': { conversationId, agent: 'default' },
    'session/compact': { conversationId },
    'session/dequeue': { conversationId, inputId: 'input_1' },
    'approval/respond': { conversationId, approvalId: 'appr_1', decision: 'allow_once' },
    'input/respond': { conversationId, requestId: 'input_1', answer: 'x' },
    'terminal/create': { conversationId, cols: 80, rows: 24 },
  };
}

/** Valid params for every method that names only a scheduled task (the access check follows its conversation). */
function taskParams(taskId: string): Partial<Record<MethodName, Record<string, unknown>>> {
  return {
    'schedules/history': { taskId },
    'schedules/update': { taskId, name: 'taken over' },
    'schedules/pause': { taskId },
    'schedules/resume': { taskId },
    'schedules/runNow': { taskId },
    'schedules/delete': { taskId },
  };
}

/** Valid params for every method that names a project. */
function projectParams(projectId: string): Partial<Record<MethodName, Record<string, unknown>>> {
  return {
    'projects/update': { projectId, name: 'taken over' },
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
  };
}

/** Whether anything `client` received mentions one of `needles`. */
function mentions(client: RecordingClient, needles: string[], from = 0): string[] {
  return client.events.slice(from).flatMap((event) => {
    const text = JSON.stringify(event);
    return needles.some((needle) => text.includes(needle)) ? [event.method] : [];
  });
}

describe('members and access', () => {
  it('every method that names a conversation or a project is covered by a rule, and every notification kind too', () => {
    const conversationMethods = Object.entries(METHOD_RULES).filter(([, rule]) => rule.kind === 'conversation').map(([method]) => method).sort();
    expect(Object.keys(conversationParams('conv_x')).sort()).toEqual(conversationMethods);
    const projectMethods = Object.entries(METHOD_RULES).filter(([, rule]) => rule.kind === 'project').map(([method]) => method).sort();
    expect(Object.keys(projectParams('proj_x')).sort()).toEqual(projectMethods);
    const taskMethods = Object.entries(METHOD_RULES).filter(([, rule]) => rule.kind === 'task-conversation').map(([method]) => method).sort();
    expect(Object.keys(taskParams('task_x')).sort()).toEqual(taskMethods);
    expect(Object.values(NOTIFICATION_RULES).filter((rule) => rule === 'conversation').length).toBeGreaterThan(15);
  });

  it('a member hears and reaches nothing of a project they are not in, and loses access at once when removed', async () => {
    harness = await startPlatformServer(SCRIPT);
    const owner = await harness.connect();
    const alice = await harness.connect('alice');
    const bob = await harness.connect('bob');
    const { project: projectA } = await owner.client.request('projects/create', { name: 'Project A', workspace: { executor: 'local', directory: harness.directory('a') } });
    const { project: projectB } = await owner.client.request('projects/create', { name: 'Project B', workspace: { executor: 'local', directory: harness.directory('b') } });
    await owner.client.request('projects/members/add', { projectId: projectA.id, userId: 'alice' });
    await owner.client.request('projects/members/add', { projectId: projectB.id, userId: 'bob', role: 'manager' });
    for (const each of [owner, alice, bob]) await each.client.request('conversations/subscribe', {});

    const { conversation: inA } = await alice.client.request('conversation/create', { projectId: projectA.id, approvalPolicy: { default: 'ask' } });
    expect(inA.projectId).toBe(projectA.id);
    expect(inA.workLocation[0]?.cwd).toBe(projectA.workspace.directory);
    await alice.client.request('conversation/subscribe', { conversationId: inA.id });
    await owner.client.request('conversation/subscribe', { conversationId: inA.id });
    const { conversation: inB } = await bob.client.request('conversation/create', { projectId: projectB.id });
    await bob.client.request('conversation/subscribe', { conversationId: inB.id });

    // A turn in project A with an approval, a question, tool output and plain text.
    await alice.client.request('session/input', { conversationId: inA.id, input: 'run it' });
    const approval = await expect.poll(() => alice.events.find((event) => event.method === 'approval/requested')).toBeTruthy().then(() => alice.events.find((event) => event.method === 'approval/requested'));
    const approvalId = (approval?.params as { approval: { approvalId: string } }).approval.approvalId;
    // Bob cannot answer it, even knowing its id.
    expect(await failureCode(bob.client.request('approval/respond', { conversationId: inA.id, approvalId, decision: 'deny' }))).toBe(ErrorCodes.forbidden);
    await alice.client.request('approval/respond', { conversationId: inA.id, approvalId, decision: 'allow_once' });
    await expect.poll(() => alice.events.some((event) => event.method === 'input/requested')).toBe(true);
    const question = alice.events.find((event) => event.method === 'input/requested')?.params as { request: { requestId: string } };
    await alice.client.request('input/respond', { conversationId: inA.id, requestId: question.request.requestId, answer: 'left' });
    await expect.poll(() => alice.events.some((event) => event.method === 'turn/completed')).toBe(true);
    await bob.client.request('session/input', { conversationId: inB.id, input: 'hello' });
    await expect.poll(() => bob.events.some((event) => event.method === 'turn/completed')).toBe(true);

    // Alice heard every kind of event of her conversation; Bob none of them, and nothing of project A.
    const aliceKinds = new Set(alice.events.map((event) => event.method));
    for (const kind of ['conversation/created', 'conversation/updated', 'session/updated', 'turn/started', 'turn/completed', 'item/started', 'item/delta', 'item/completed', 'approval/requested', 'approval/resolved', 'input/requested', 'input/resolved', 'session/usage']) expect(aliceKinds).toContain(kind);
    expect(mentions(bob, [inA.id, projectA.id, 'from-project-a', 'done in project a'])).toEqual([]);
    expect(mentions(alice, [inB.id, projectB.id, 'project b answer'])).toEqual([]);
    expect(bob.events.some((event) => event.method === 'conversation/created')).toBe(true);

    // Every method naming project A's conversation or project A is refused to Bob, with a clear error.
    for (const [method, params] of Object.entries(conversationParams(inA.id))) {
      const error = await bob.client.request(method as MethodName, params as never).then(() => undefined, (failure: unknown) => failure as RuntimeClientError);
      expect({ method, code: error?.code }).toEqual({ method, code: ErrorCodes.forbidden });
      expect(error?.message).toContain(`${method}: forbidden: params.conversationId: conversation ${inA.id} is not in a project you are a member of`);
    }
    for (const [method, params] of Object.entries(projectParams(projectA.id))) {
      expect({ method, code: await failureCode(bob.client.request(method as MethodName, params as never)) }).toEqual({ method, code: ErrorCodes.forbidden });
    }
    // Alice is a plain member: she may not manage project A.
    expect(await failureCode(alice.client.request('projects/members/add', { projectId: projectA.id, userId: 'mallory' }))).toBe(ErrorCodes.forbidden);
    expect(await failureCode(alice.client.request('config/get', {}))).toBe(ErrorCodes.forbidden);
    expect(await failureCode(alice.client.request('conversation/create', { cwd: harness.environment.workDir }))).toBe(ErrorCodes.forbidden);
    // Lists are narrowed to the caller.
    expect((await bob.client.request('projects/list', {})).projects.map((project) => project.id)).toEqual([projectB.id]);
    expect((await bob.client.request('projects/list', {})).projects[0]?.role).toBe('manager');
    expect((await bob.client.request('conversation/list', {})).conversations.map((summary) => summary.id)).toEqual([inB.id]);
    expect((await owner.client.request('conversation/list', {})).conversations.map((summary) => summary.id).sort()).toEqual([inA.id, inB.id].sort());
    expect(mentions(bob, [inA.id, projectA.id])).toEqual([]);

    // Removal: Alice's terminal in project A ends and her subscriptions stop at once.
    const { terminalId } = await alice.client.request('terminal/create', { conversationId: inA.id, cols: 80, rows: 24, command: 'cat' });
    const beforeRemoval = alice.events.length;
    await owner.client.request('projects/members/remove', { projectId: projectA.id, userId: 'alice' });
    await expect.poll(() => alice.events.some((event) => event.method === 'terminal/output' && (event.params as { terminalId: string; exited?: boolean }).terminalId === terminalId && (event.params as { exited?: boolean }).exited === true)).toBe(true);
    expect(await failureCode(alice.client.request('conversation/get', { conversationId: inA.id }))).toBe(ErrorCodes.forbidden);
    expect((await alice.client.request('projects/list', {})).projects).toEqual([]);
    const afterTerminal = alice.events.length;
    await owner.client.request('conversation/update', { conversationId: inA.id, title: 'renamed after removal' });
    await owner.client.request('session/input', { conversationId: inA.id, input: 'again' });
    await expect.poll(() => owner.events.filter((event) => event.method === 'turn/completed' && JSON.stringify(event).includes(inA.id)).length).toBe(2);
    expect(alice.events.slice(afterTerminal).map((event) => event.method)).toEqual([]);
    expect(mentions(alice, ['after the removal', 'renamed after removal'], beforeRemoval)).toEqual([]);

    // Scheduled tasks follow their conversation: Alice, a member of project A again, manages a
    // task of her conversation by its id; Bob gets for it the answer a missing task gets.
    await owner.client.request('projects/members/add', { projectId: projectA.id, userId: 'alice' });
    const { task } = await alice.client.request('schedules/create', { conversationId: inA.id, name: 'nightly', prompt: 'scheduled prompt', schedule: { kind: 'once', at: Date.now() + 86_400_000 }, userId: 'bob' });
    // A member's task acts for that member, whatever params.userId says.
    expect(task.userId).toBe('alice');
    const missing = 'task_0missing';
    for (const [method, params] of Object.entries(taskParams(task.id))) {
      const error = await bob.client.request(method as MethodName, params as never).then(() => undefined, (failure: unknown) => failure as RuntimeClientError);
      expect({ method, code: error?.code, message: error?.message }).toEqual({ method, code: ErrorCodes.notFound, message: `${method}: params.taskId: scheduled task "${task.id}" does not exist` });
      const missingError = await bob.client.request(method as MethodName, taskParams(missing)[method as MethodName] as never).then(() => undefined, (failure: unknown) => failure as RuntimeClientError);
      expect({ method, code: missingError?.code, message: missingError?.message }).toEqual({ method, code: ErrorCodes.notFound, message: `${method}: params.taskId: scheduled task "${missing}" does not exist` });
      expect(mentions(bob, [task.id])).toEqual([]);
    }
    // Bob's refusals changed nothing: the task is still there, enabled and named as created.
    expect((await alice.client.request('schedules/list', { conversationId: inA.id })).tasks).toMatchObject([{ id: task.id, name: 'nightly', enabled: true }]);
    expect((await alice.client.request('schedules/pause', { taskId: task.id })).task.enabled).toBe(false);
    expect((await alice.client.request('schedules/update', { taskId: task.id, name: 'renamed' })).task.name).toBe('renamed');
    const { run } = await alice.client.request('schedules/runNow', { taskId: task.id });
    expect(run.taskId).toBe(task.id);
    await expect.poll(async () => (await alice.client.request('schedules/history', { taskId: task.id })).runs.map((each) => each.status)).toEqual(['completed']);
    expect((await alice.client.request('schedules/resume', { taskId: task.id })).task.enabled).toBe(true);
    expect(await alice.client.request('schedules/delete', { taskId: task.id })).toEqual({ taskId: task.id });
    // Once deleted, Alice too gets the not-found answer.
    expect(await failureCode(alice.client.request('schedules/pause', { taskId: task.id }))).toBe(ErrorCodes.notFound);
  });
});

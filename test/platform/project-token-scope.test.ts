/**
 * A project-scoped API token used outside its project is told so (docs/platform.md, "Sessions
 * and tokens"): every method naming a project or a conversation, the administrators' methods
 * and creating a project answer forbidden (-32003) with "this API token is limited to project
 * <id>", not "you are not a member of", which is false for a member of both projects and
 * sends its user looking at the wrong thing. Uploads say the same. Over a platform-mode server
 * with users signed in through the real sign-in API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/runtime-server.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { ProxiedBrowsers, RpcSocket, signInAdministratorAndMember, type SignedInUsers } from './platform-client.js';
import { startPlatformServer, type PlatformServer } from './platform-server.js';

const FORBIDDEN = -32003;

let platform: PlatformServer | undefined;
let environment: TestEnvironment;
let server: RunningServer;
let users: SignedInUsers;
let own: string;
let other: string;
let otherConversation: string;
let looseConversation: string;
const sockets: RpcSocket[] = [];

/** A connection holding a new project token of the member (or, with `admin`, of the administrator) for `projectId`. */
async function tokenSocket(projectId: string, admin = false): Promise<RpcSocket> {
  const owner = admin ? users.adminSocket : await users.member.connect();
  if (!admin) sockets.push(owner);
  const { token } = await owner.result('account/tokens/create', { name: 'ci', scope: { kind: 'project', projectId } });
  const socket = await RpcSocket.open(server.url, { authorization: `Bearer ${String(token)}` });
  sockets.push(socket);
  return socket;
}

beforeAll(async () => {
  platform = await startPlatformServer();
  ({ environment, server } = platform);
  users = await signInAdministratorAndMember(new ProxiedBrowsers(server.url));
  const made: string[] = [];
  for (const name of ['Own', 'Other']) {
    const { project } = (await users.adminSocket.result('projects/create', { name, workspace: { executor: 'local', directory: environment.workDir } })) as { project: { id: string } };
    // The member belongs to both: only the token's scope keeps it out of the second.
    await users.adminSocket.result('projects/members/add', { projectId: project.id, userId: users.memberId, role: 'manager' });
    made.push(project.id);
  }
  [own = '', other = ''] = made;
  otherConversation = String(((await users.adminSocket.result('conversation/create', { projectId: other })).conversation as { id: string }).id);
  looseConversation = String(((await users.adminSocket.result('conversation/create', { cwd: environment.workDir })).conversation as { id: string }).id);
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.close();
  users?.adminSocket.close();
  await platform?.stop();
});

describe('a project token outside its project', () => {
  it('methods naming another project say the token is limited to its project', async () => {
    const script = await tokenSocket(own);
    const calls: [string, Record<string, unknown>][] = [
      ['projects/members/list', { projectId: other }],
      ['projects/secrets/list', { projectId: other }],
      ['projects/update', { projectId: other, name: 'renamed' }],
      ['projects/start', { projectId: other }],
      ['projects/secrets/set', { projectId: other, name: 'KEY', value: 'value-123' }],
      ['costs/project', { projectId: other }],
      ['conversation/create', { projectId: other }],
    ];
    for (const [method, params] of calls) {
      const failure = await script.failure(method, params);
      expect(failure.code, method).toBe(FORBIDDEN);
      expect(failure.message, method).toBe(`${method}: forbidden: params.projectId: this API token is limited to project ${own}; project ${other} is outside it`);
    }
    // Within its project it works.
    await script.result('projects/members/list', { projectId: own });
  });

  it('methods naming a conversation of another project, or of none, say so too', async () => {
    const script = await tokenSocket(own);
    for (const conversationId of [otherConversation, looseConversation]) {
      for (const method of ['conversation/get', 'items/list', 'session/input', 'schedules/list']) {
        const params = method === 'session/input' ? { conversationId, input: [{ type: 'text', text: 'hi' }] } : { conversationId };
        const failure = await script.failure(method, params);
        expect(failure.code, method).toBe(FORBIDDEN);
        expect(failure.message, method).toBe(`${method}: forbidden: params.conversationId: this API token is limited to project ${own}; conversation ${conversationId} is not in it`);
      }
    }
  });

  it('a conversation outside projects and a new project are refused naming the token, not the role', async () => {
    const script = await tokenSocket(own, true);
    const loose = await script.failure('conversation/create', { cwd: environment.workDir });
    expect(loose.code).toBe(FORBIDDEN);
    expect(loose.message).toBe(`conversation/create: forbidden: params.projectId: this API token is limited to project ${own}; give projectId ${own}`);
    const created = await script.failure('projects/create', { name: 'New', workspace: { executor: 'local', directory: environment.workDir } });
    expect(created.code).toBe(FORBIDDEN);
    expect(created.message).toBe(`projects/create: forbidden: this API token is limited to project ${own}; it cannot create projects`);
    // An administrator's project token is not an administrator's token.
    const listed = await script.failure('users/list', {});
    expect(listed.code).toBe(FORBIDDEN);
    expect(listed.message).toBe(`users/list: forbidden: this API token is limited to project ${own}; only administrators, signed in or with an admin-scoped token, may do this`);
  });

  it('an upload to a conversation outside its project says the token is limited to its project', async () => {
    const owner = await users.member.connect();
    sockets.push(owner);
    const { token } = await owner.result('account/tokens/create', { name: 'upload', scope: { kind: 'project', projectId: own } });
    const response = await fetch(`${server.url}/api/v1/uploads?conversationId=${otherConversation}&name=a.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${String(token)}`, 'content-type': 'application/octet-stream' },
      body: 'hello',
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain(`this API token is limited to project ${own}; conversation ${otherConversation} is not in it`);
  });
});

describe('creating a project token', () => {
  it('is refused, naming params.scope.projectId, for a project its user cannot reach', async () => {
    const { project } = (await users.adminSocket.result('projects/create', { name: 'Elsewhere', workspace: { executor: 'local', directory: environment.workDir } })) as { project: { id: string } };
    const member = await users.member.connect();
    sockets.push(member);
    const failure = await member.failure('account/tokens/create', { name: 'stray', scope: { kind: 'project', projectId: project.id } });
    expect(failure.code).toBe(-32602);
    expect(failure.message).toBe(`account/tokens/create: params.scope.projectId: you are not a member of project ${project.id}`);
    // Nothing was made: the member's tokens are those of the tests before.
    const { tokens } = (await member.result('account/tokens/list', {})) as { tokens: { name: string }[] };
    expect(tokens.map((token) => token.name)).not.toContain('stray');
    // A project they belong to is fine, and an administrator may scope a token to any project.
    await member.result('account/tokens/create', { name: 'own', scope: { kind: 'project', projectId: own } });
    await users.adminSocket.result('account/tokens/create', { name: 'any', scope: { kind: 'project', projectId: project.id } });
  });
});

/**
 * Project workspaces and project conversations stay away from the server's own directories
 * (docs/platform.md, "Where members work"), over a platform-mode server with users signed in
 * through the real sign-in API: a member can neither make a project of the server's
 * configuration, data or state directory (or of a directory holding one), nor point a project
 * conversation outside its project's workspace, however the path is spelled (`..`, symlinks,
 * a sibling sharing the workspace's name as a prefix).
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/runtime-server.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { ProxiedBrowsers, RpcSocket, signInAdministratorAndMember, type SignedInUsers } from './platform-client.js';
import { startPlatformServer, type PlatformServer } from './platform-server.js';

const INVALID_PARAMS = -32602;
const NOT_FOUND = -32004;

let platform: PlatformServer | undefined;
let environment: TestEnvironment;
let server: RunningServer;
let users: SignedInUsers;
let bob: RpcSocket;

beforeAll(async () => {
  // Members may use every directory of the machine on `local` here (docs/configuration.md,
  // `platform.memberWorkspaces`): what is left to refuse is the server's own directories.
  platform = await startPlatformServer('  memberWorkspaces:\n    local: [/]\n');
  ({ environment, server } = platform);
  users = await signInAdministratorAndMember(new ProxiedBrowsers(server.url));
  bob = await users.member.connect();
}, 60_000);

afterAll(async () => {
  bob?.close();
  users?.adminSocket.close();
  await platform?.stop();
});

/** A new directory under the environment's work directory. */
function directory(...parts: string[]): string {
  const made = path.join(environment.workDir, ...parts);
  mkdirSync(made, { recursive: true });
  return made;
}

/** A project made by the administrator at `workspaceDirectory`, with bob as `role`. */
async function adminProject(name: string, workspaceDirectory: string, role: 'member' | 'manager' = 'member'): Promise<string> {
  const { project } = (await users.adminSocket.result('projects/create', { name, workspace: { executor: 'local', directory: workspaceDirectory } })) as { project: { id: string } };
  await users.adminSocket.result('projects/members/add', { projectId: project.id, userId: users.memberId, role });
  return project.id;
}

describe('project workspaces of members', () => {
  it('a member cannot make a project of the server directories, a directory holding one, or a path leading there', async () => {
    const { configDir, dataDir, stateDir } = environment.paths;
    const link = path.join(directory('links'), 'to-data');
    symlinkSync(dataDir, link);
    // `..` after a link goes up from where the link leads: here, to the data directory.
    mkdirSync(path.join(dataDir, 'projects'), { recursive: true });
    const intoProjects = path.join(directory('links'), 'to-projects');
    symlinkSync(path.join(dataDir, 'projects'), intoProjects);
    const refused = [dataDir, configDir, stateDir, '/', environment.root, path.join(dataDir, 'projects'), `${environment.workDir}/../data/openvaala`, link, `${intoProjects}/..`];
    for (const candidate of refused) {
      const failure = await bob.failure('projects/create', { name: 'x', workspace: { executor: 'local', directory: candidate } });
      expect(failure.code, candidate).toBe(INVALID_PARAMS);
      expect(failure.message, candidate).toMatch(/^projects\/create: params\.workspace\.directory: /);
      expect(failure.message, candidate).toContain("the server's own directories");
    }
    // None of them was made.
    expect(((await bob.result('projects/list', {})).projects as unknown[]).length).toBe(0);
    // A directory of their own is fine: they manage the project.
    const { project } = (await bob.result('projects/create', { name: 'Own', workspace: { executor: 'local', directory: directory('bobs') } })) as { project: { id: string; role: string } };
    expect(project.role).toBe('manager');
  });

  it('administrators may still choose any directory', async () => {
    const { project } = (await users.adminSocket.result('projects/create', { name: 'Everything', workspace: { executor: 'local', directory: environment.root } })) as { project: { id: string } };
    expect(project.id).toMatch(/^proj_/);
  });
});

describe('conversations of members in a project', () => {
  it('stay inside the project workspace: cwd, workLocation and executor outside it are refused', async () => {
    const workspace = directory('p1');
    const inside = directory('p1', 'sub');
    directory('p1-other');
    symlinkSync(environment.paths.dataDir, path.join(workspace, 'escape'));
    symlinkSync('/', path.join(workspace, 'root'));
    // Lexically inside the workspace, but `..` after the link leaves it.
    symlinkSync(directory('p1-away', 'inner'), path.join(workspace, 'away'));
    const projectId = await adminProject('P1', workspace);

    const refusedCwd = ['/', '/etc', environment.paths.dataDir, environment.paths.stateDir, `${workspace}/../../data/openvaala`, `${workspace}-other`, path.join(workspace, 'escape'), path.join(workspace, 'root'), path.join(workspace, 'away'), `${path.join(workspace, 'away')}/..`];
    for (const cwd of refusedCwd) {
      const failure = await bob.failure('conversation/create', { projectId, cwd });
      expect(failure.code, cwd).toBe(INVALID_PARAMS);
      expect(failure.message, cwd).toMatch(/^conversation\/create: params\.cwd: /);
      expect(failure.message, cwd).toContain(`project ${projectId}`);
    }
    const outsideLocation = await bob.failure('conversation/create', { projectId, workLocation: [{ executor: 'local', cwd: '/' }] });
    expect(outsideLocation.code).toBe(INVALID_PARAMS);
    expect(outsideLocation.message).toMatch(/^conversation\/create: params\.workLocation\[0\]\.cwd: /);
    const otherExecutor = await bob.failure('conversation/create', { projectId, cwd: inside, executor: 'elsewhere' });
    expect(otherExecutor.code).toBe(INVALID_PARAMS);
    expect(otherExecutor.message).toMatch(/^conversation\/create: params\.executor: /);

    // Inside the workspace is fine, spelled either way.
    const { conversation } = (await bob.result('conversation/create', { projectId, cwd: inside })) as { conversation: { id: string; workLocation: { executor: string; cwd: string }[] } };
    expect(conversation.workLocation).toEqual([{ executor: 'local', cwd: inside }]);
    await bob.result('conversation/create', { projectId, workLocation: [{ executor: 'local', cwd: workspace }] });

    // Moving the conversation out later is refused too.
    for (const cwd of ['/', environment.paths.dataDir, path.join(workspace, 'escape')]) {
      const failure = await bob.failure('conversation/update', { conversationId: conversation.id, workLocation: [{ executor: 'local', cwd }] });
      expect(failure.code, cwd).toBe(INVALID_PARAMS);
      expect(failure.message, cwd).toMatch(/^conversation\/update: params\.workLocation\[0\]\.cwd: /);
    }
    await bob.result('conversation/update', { conversationId: conversation.id, workLocation: [{ executor: 'local', cwd: workspace }] });

    // Nothing of the server's directories can be read from it.
    const read = await bob.failure('fs/read', { conversationId: conversation.id, executor: 'local', path: '../../state/openvaala/runtime-server.yaml' });
    expect(read.code).toBe(INVALID_PARAMS);
  });

  it('the manager of a project is held to its workspace too, and so is an administrator’s project-scoped token', async () => {
    const workspace = directory('p2');
    const projectId = await adminProject('P2', workspace, 'manager');
    const asManager = await bob.failure('conversation/create', { projectId, cwd: environment.paths.dataDir });
    expect(asManager.code).toBe(INVALID_PARAMS);
    expect(asManager.message).toMatch(/^conversation\/create: params\.cwd: /);

    const token = String((await users.adminSocket.result('account/tokens/create', { name: 'ci', scope: { kind: 'project', projectId } })).token);
    const script = await RpcSocket.open(server.url, { authorization: `Bearer ${token}` });
    try {
      const scoped = await script.failure('conversation/create', { projectId, cwd: '/' });
      expect(scoped.code).toBe(INVALID_PARAMS);
      expect(scoped.message).toMatch(/^conversation\/create: params\.cwd: /);
      await script.result('conversation/create', { projectId });
    } finally {
      script.close();
    }
  });

  it('a member cannot work in a project whose workspace holds the server directories', async () => {
    const projectId = await adminProject('Wide', environment.root);
    const failure = await bob.failure('conversation/create', { projectId });
    expect(failure.code).toBe(INVALID_PARAMS);
    expect(failure.message).toMatch(/^conversation\/create: params\.projectId: /);
    expect(failure.message).toContain("the server's own directories");
    // A directory of the workspace away from them is fine.
    await bob.result('conversation/create', { projectId, cwd: directory('wide-inside') });
  });

  it('administrators may place a project conversation anywhere', async () => {
    const projectId = await adminProject('Free', directory('p3'));
    const { conversation } = (await users.adminSocket.result('conversation/create', { projectId, cwd: directory('elsewhere') })) as { conversation: { id: string } };
    expect(conversation.id).toMatch(/^conv_/);
  });
});

describe('project members', () => {
  it('adding a user that does not exist is refused as not found, naming params.userId', async () => {
    const projectId = await adminProject('Members', directory('members'), 'manager');
    const failure = await users.adminSocket.failure('projects/members/add', { projectId, userId: 'user_nonexistent', role: 'member' });
    expect(failure.code).toBe(NOT_FOUND);
    expect(failure.message).toMatch(/^projects\/members\/add: params\.userId: /);
    expect(failure.message).toContain('user_nonexistent');
    const byManager = await bob.failure('projects/members/add', { projectId, userId: 'user_nonexistent' });
    expect(byManager.code).toBe(NOT_FOUND);
    const members = (await users.adminSocket.result('projects/members/list', { projectId })).members as { userId: string }[];
    // The administrator who made the project manages it; bob was added; nobody else.
    expect(members.map((member) => member.userId)).not.toContain('user_nonexistent');
    expect(members.map((member) => member.userId)).toContain(users.memberId);
    expect(members).toHaveLength(2);
  });
});

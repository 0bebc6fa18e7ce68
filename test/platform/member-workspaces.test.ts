/**
 * Where a member (anyone but the local owner and administrators) may make a project
 * (docs/platform.md, "Where members work"; docs/configuration.md, `platform.memberWorkspaces`):
 * on the plain `local` executor, whose commands run unsandboxed as the server's own user, only
 * inside directories an administrator listed in `server.yaml`, and nowhere by default; never
 * over the workspace of a project the member does not belong to. Administrators choose freely.
 * Over platform-mode servers with users signed in through the real sign-in API.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProxiedBrowsers, RpcSocket, signInAdministratorAndMember, type SignedInUsers } from './platform-client.js';
import { startPlatformServer, type PlatformServer } from './platform-server.js';

const INVALID_PARAMS = -32602;

/** A platform server with an administrator and a member (bob) signed in. */
interface Team {
  platform: PlatformServer;
  users: SignedInUsers;
  bob: RpcSocket;
}

const teams: Team[] = [];
let outside: string;

async function team(platformYaml = ''): Promise<Team> {
  const platform = await startPlatformServer(platformYaml);
  const users = await signInAdministratorAndMember(new ProxiedBrowsers(platform.server.url));
  const made = { platform, users, bob: await users.member.connect() };
  teams.push(made);
  return made;
}

/** A new directory under `parent`. */
function directory(parent: string, ...parts: string[]): string {
  const made = path.join(parent, ...parts);
  mkdirSync(made, { recursive: true });
  return made;
}

beforeAll(() => {
  outside = mkdtempSync(path.join(os.tmpdir(), 'ov-member-ws-'));
});

afterAll(async () => {
  for (const { platform, users, bob } of teams) {
    bob.close();
    users.adminSocket.close();
    await platform.stop();
  }
  rmSync(outside, { recursive: true, force: true });
});

describe('without platform.memberWorkspaces', () => {
  let current: Team;
  beforeAll(async () => {
    current = await team();
  }, 60_000);

  it('a member cannot make a project on the unsandboxed local executor, wherever it is', async () => {
    for (const candidate of [directory(outside, 'bobs-own'), '/', '/tmp']) {
      const failure = await current.bob.failure('projects/create', { name: 'Mine', workspace: { executor: 'local', directory: candidate } });
      expect(failure.code, candidate).toBe(INVALID_PARAMS);
      expect(failure.message, candidate).toMatch(/^projects\/create: params\.workspace\.(executor|directory): /);
    }
    const plain = await current.bob.failure('projects/create', { name: 'Mine', workspace: { executor: 'local', directory: directory(outside, 'bobs-own') } });
    expect(plain.message).toMatch(/^projects\/create: params\.workspace\.executor: executor "local" runs the commands of a project's members unsandboxed, as the server's own user/);
    expect(plain.message).toContain('platform.memberWorkspaces.local');
    expect(((await current.bob.result('projects/list', {})).projects as unknown[]).length).toBe(0);
  });

  it('a sandboxed executor stays open to members, outside the server directories and other projects', async () => {
    writeFileSync(path.join(current.platform.environment.paths.configDir, 'executors.yaml'), 'executors:\n  boxed:\n    kind: local\n    sandbox: bwrap\n');
    await current.users.adminSocket.result('config/reload', {});
    const mine = directory(outside, 'boxed-own');
    const { project } = (await current.bob.result('projects/create', { name: 'Boxed', workspace: { executor: 'boxed', directory: mine } })) as { project: { role: string } };
    expect(project.role).toBe('manager');
    // The plain local executor's projects are other projects for it too: both are on this machine.
    const admins = directory(outside, 'admins-boxed');
    await current.users.adminSocket.result('projects/create', { name: 'Admins', workspace: { executor: 'local', directory: admins } });
    const over = await current.bob.failure('projects/create', { name: 'Over', workspace: { executor: 'boxed', directory: admins } });
    expect(over.code).toBe(INVALID_PARAMS);
    expect(over.message).toBe(`projects/create: params.workspace.directory: "${admins}" is the workspace of another project, one you are not a member of; only its members and administrators may work there`);
  });

  it('a workspace cannot be changed afterwards: projects/update takes no workspace', async () => {
    const { project } = (await current.users.adminSocket.result('projects/create', { name: 'Set', workspace: { executor: 'local', directory: directory(outside, 'set') } })) as { project: { id: string } };
    await current.users.adminSocket.result('projects/members/add', { projectId: project.id, userId: current.users.memberId, role: 'manager' });
    const failure = await current.bob.failure('projects/update', { projectId: project.id, workspace: { executor: 'local', directory: '/' } });
    expect(failure.code).toBe(INVALID_PARAMS);
    expect(failure.message).toContain('projects/update: params.workspace: unknown field');
  });

  it('an administrator still makes a project anywhere', async () => {
    const { project } = (await current.users.adminSocket.result('projects/create', { name: 'Anywhere', workspace: { executor: 'local', directory: directory(outside, 'admins') } })) as { project: { id: string } };
    expect(project.id).toMatch(/^proj_/);
  });
});

describe('with platform.memberWorkspaces listing a directory for local', () => {
  let current: Team;
  let allowed: string;
  beforeAll(async () => {
    allowed = directory(outside, 'allowed');
    current = await team(`  memberWorkspaces:\n    local: [${JSON.stringify(allowed)}]\n`);
  }, 60_000);

  it('a member makes a project inside it, and nowhere else, however the path is spelled', async () => {
    const { project } = (await current.bob.result('projects/create', { name: 'Inside', workspace: { executor: 'local', directory: directory(allowed, 'bob') } })) as { project: { role: string } };
    expect(project.role).toBe('manager');
    directory(outside, 'allowed-sibling');
    symlinkSync(directory(outside, 'elsewhere'), path.join(allowed, 'link-out'));
    const refused = [directory(outside, 'elsewhere'), `${allowed}-sibling`, `${allowed}/../elsewhere`, path.join(allowed, 'link-out'), '/'];
    for (const candidate of refused) {
      const failure = await current.bob.failure('projects/create', { name: 'Out', workspace: { executor: 'local', directory: candidate } });
      expect(failure.code, candidate).toBe(INVALID_PARAMS);
      expect(failure.message, candidate).toMatch(/^projects\/create: params\.workspace\.directory: /);
    }
    const plain = await current.bob.failure('projects/create', { name: 'Out', workspace: { executor: 'local', directory: path.join(outside, 'elsewhere') } });
    expect(plain.message).toBe(
      `projects/create: params.workspace.directory: "${path.join(outside, 'elsewhere')}" is outside the directories members may use on executor "local" (server.yaml platform.memberWorkspaces.local: ${allowed}); only administrators may make a project elsewhere`,
    );
  });

  it("a member cannot make a project over another project's workspace, until they are its member", async () => {
    const theirs = directory(allowed, 'theirs');
    directory(theirs, 'sub');
    const { project } = (await current.users.adminSocket.result('projects/create', { name: 'Theirs', workspace: { executor: 'local', directory: theirs } })) as { project: { id: string } };
    for (const candidate of [theirs, path.join(theirs, 'sub'), allowed]) {
      const failure = await current.bob.failure('projects/create', { name: 'Over', workspace: { executor: 'local', directory: candidate } });
      expect(failure.code, candidate).toBe(INVALID_PARAMS);
      expect(failure.message, candidate).toMatch(/^projects\/create: params\.workspace\.directory: ".*" (is|lies inside|contains) the workspace of another project, one you are not a member of; /);
      expect(failure.message, candidate).not.toContain(project.id);
    }
    await current.users.adminSocket.result('projects/members/add', { projectId: project.id, userId: current.users.memberId, role: 'member' });
    await current.bob.result('projects/create', { name: 'Beside', workspace: { executor: 'local', directory: path.join(theirs, 'sub') } });
  });
});

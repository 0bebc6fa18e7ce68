/**
 * A member stays inside their project's confinement however they ask (docs/platform.md, "Where
 * members work"), over a real server: external agents, which run unsandboxed on the server's
 * machine, are refused to members in a sandboxed project (chosen at creation, by
 * `session/setAgent`, by an administrator before them, or by the model as a subagent); a work
 * location an administrator placed outside the workspace is refused at use; a worktree made for
 * a member stays inside the workspace; a member's MCP servers run on the project's executor,
 * in its workspace, without the server's environment, and its HTTP MCP servers do not reach
 * the server's machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeClientError, type RuntimeClient } from '../../src/client/runtime-client.js';
import { ErrorCodes } from '../../src/protocol/index.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { startPlatformServer, type PlatformHarness, type RecordingClient } from './two-users.js';

const SCRIPT = `
responses:
  - toolCalls: [{ name: spawn_agent, arguments: { task: "read the server's keys", agent: outside } }]
  - text: "the subagent was refused"
`;

let environment: TestEnvironment;
let harness: PlatformHarness;
let owner: RecordingClient;
let bob: RecordingClient;

beforeAll(async () => {
  environment = await createTestEnvironment(SCRIPT);
  writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  boxed:\n    kind: local\n    sandbox: bwrap\n');
  writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), 'agents:\n  default:\n    default: true\n  outside:\n    kind: acp\n    command: ["false"]\n');
  harness = await startPlatformServer(SCRIPT, { environment });
  owner = await harness.connect();
  bob = await harness.connect('bob');
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await environment?.dispose();
});

/** The error a request fails with. @throws when it succeeds */
async function failure(promise: Promise<unknown>): Promise<RuntimeClientError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RuntimeClientError) return error;
    throw error;
  }
  throw new Error('the request succeeded but should have failed');
}

/** A project made by the local owner on `executor`, with bob as a member. */
async function project(name: string, executor: string, directory = harness.directory(name)): Promise<{ id: string; directory: string }> {
  const { project: made } = await owner.client.request('projects/create', { name, workspace: { executor, directory } });
  await owner.client.request('projects/members/add', { projectId: made.id, userId: 'bob' });
  return { id: made.id, directory };
}

function git(cwd: string, args: string[]): string {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.org' };
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
}

/** A repository with one commit at `directory`. */
function repository(directory: string): string {
  mkdirSync(directory, { recursive: true });
  git(directory, ['init', '-q', '-b', 'main']);
  writeFileSync(path.join(directory, 'notes.txt'), 'notes\n');
  git(directory, ['add', 'notes.txt']);
  git(directory, ['commit', '-q', '-m', 'Start']);
  return directory;
}

function sessionOf(client: RuntimeClient, conversationId: string) {
  return client.request('session/list', { conversationId });
}

describe('external agents in a sandboxed project', () => {
  it('are refused to a member, named with the reason, however chosen; administrators keep them', async () => {
    const boxed = await project('boxed-agents', 'boxed');
    const atCreate = await failure(bob.client.request('conversation/create', { projectId: boxed.id, agent: 'outside' }));
    expect(atCreate.code).toBe(ErrorCodes.forbidden);
    expect(atCreate.message).toMatch(/^conversation\/create: forbidden: params\.agent: agent "outside" \(kind acp\) is a program the server runs on its own machine/);
    expect(atCreate.message).toContain('sandbox of executor "boxed"');

    const { conversation } = await bob.client.request('conversation/create', { projectId: boxed.id });
    const setAgent = await failure(bob.client.request('session/setAgent', { conversationId: conversation.id, agent: 'outside' }));
    expect(setAgent.code).toBe(ErrorCodes.forbidden);
    expect(setAgent.message).toMatch(/^session\/setAgent: forbidden: params\.agent: agent "outside"/);
    expect((await sessionOf(bob.client, conversation.id)).sessions[0]?.agent).toBe('default');

    // An administrator may choose it; the member then cannot start its turns.
    await owner.client.request('session/setAgent', { conversationId: conversation.id, agent: 'outside' });
    const input = await failure(bob.client.request('session/input', { conversationId: conversation.id, input: 'hello' }));
    expect(input.code).toBe(ErrorCodes.forbidden);
    expect(input.message).toMatch(/^session\/input: forbidden: session sess_[0-9a-z]+: agent "outside" \(kind acp\)/);
    expect((await sessionOf(bob.client, conversation.id)).sessions[0]?.status).toBe('idle');
    const compact = await failure(bob.client.request('session/compact', { conversationId: conversation.id }));
    expect(compact.code).toBe(ErrorCodes.forbidden);

    // On a plain local executor the member's commands have the server's account anyway.
    const plain = await project('plain-agents', 'local');
    const { conversation: onPlain } = await bob.client.request('conversation/create', { projectId: plain.id, agent: 'outside' });
    expect(onPlain.id).toMatch(/^conv_/);
  });

  it('a subagent the model starts there is never an external agent', async () => {
    const boxed = await project('boxed-subagents', 'boxed');
    const { conversation } = await bob.client.request('conversation/create', { projectId: boxed.id });
    await bob.client.request('conversation/subscribe', { conversationId: conversation.id });
    await bob.client.request('session/input', { conversationId: conversation.id, input: 'spawn it' });
    await expect.poll(() => bob.events.some((event) => event.method === 'turn/completed' && event.params.conversationId === conversation.id), { timeout: 20_000 }).toBe(true);
    const calls = bob.events.filter((event) => event.method === 'item/completed' && event.params.conversationId === conversation.id && event.params.item.kind === 'tool_call');
    expect(JSON.stringify(calls)).toContain('agent \\"outside\\" (kind acp) is a program the server runs on its own machine');
    expect((await sessionOf(bob.client, conversation.id)).sessions).toHaveLength(1);
  });
});

describe('work locations checked at use', () => {
  it('a conversation an administrator placed outside the workspace is refused to a member until moved back', async () => {
    const plain = await project('placed', 'local');
    const elsewhere = harness.directory('placed-elsewhere');
    writeFileSync(path.join(elsewhere, 'private.txt'), 'not the project\'s\n');
    const { conversation } = await owner.client.request('conversation/create', { projectId: plain.id, cwd: elsewhere });
    const uses: [string, Promise<unknown>][] = [
      ['session/input', bob.client.request('session/input', { conversationId: conversation.id, input: 'hello' })],
      ['fs/read', bob.client.request('fs/read', { conversationId: conversation.id, path: 'private.txt' })],
      ['fs/list', bob.client.request('fs/list', { conversationId: conversation.id, path: '.' })],
      ['terminal/create', bob.client.request('terminal/create', { conversationId: conversation.id, cols: 80, rows: 24 })],
      ['schedules/create', bob.client.request('schedules/create', { conversationId: conversation.id, name: 'n', prompt: 'x', schedule: { kind: 'once', at: Date.now() + 3_600_000 } })],
    ];
    for (const [method, use] of uses) {
      const refused = await failure(use);
      expect(refused.code, method).toBe(ErrorCodes.forbidden);
      expect(refused.message, method).toContain(`${method}: forbidden: conversation ${conversation.id} works in "${elsewhere}" on executor "local"`);
      expect(refused.message, method).toContain(`is outside the workspace of project ${plain.id}`);
    }
    // The administrator still reaches it; once moved into the workspace, so does the member.
    expect((await owner.client.request('fs/read', { conversationId: conversation.id, path: 'private.txt' })).content).toContain('not the project');
    await owner.client.request('conversation/update', { conversationId: conversation.id, workLocation: [{ executor: 'local', cwd: plain.directory }] });
    expect((await bob.client.request('fs/list', { conversationId: conversation.id, path: '.' })).entries).toEqual([]);
  });
});

describe('worktrees of a member', () => {
  it('are refused for a workspace inside a larger repository, leaving nothing behind', async () => {
    const larger = repository(harness.directory('larger'));
    const inner = path.join(larger, 'inner');
    mkdirSync(inner);
    const nested = await project('nested', 'local', inner);
    const refused = await failure(bob.client.request('conversation/create', { projectId: nested.id, worktree: {} }));
    expect(refused.code).toBe(ErrorCodes.invalidParams);
    expect(refused.message).toMatch(/^conversation\/create: params\.cwd: the git repository holding .* has its checkout at .*larger, which is not inside .*inner; a worktree of it would hold and change what lies outside/);
    expect(existsSync(`${larger}.worktrees`)).toBe(false);
    expect(git(larger, ['branch', '--list', 'openvaala/*'])).toBe('');
  });

  it('of a workspace that is the repository stay inside it, out of git status, and are discarded cleanly', async () => {
    const own = repository(harness.directory('own-repository'));
    const whole = await project('whole', 'local', own);
    const { conversation } = await bob.client.request('conversation/create', { projectId: whole.id, worktree: {} });
    const cwd = conversation.workLocation[0]?.cwd ?? '';
    expect(cwd.startsWith(`${own}/.openvaala/worktrees/`)).toBe(true);
    expect(existsSync(path.join(cwd, 'notes.txt'))).toBe(true);
    expect(existsSync(`${own}.worktrees`)).toBe(false);
    expect(git(own, ['status', '--porcelain'])).toBe('');
    expect((await bob.client.request('fs/list', { conversationId: conversation.id, path: '.' })).entries.map((entry) => entry.name)).toContain('notes.txt');
    await bob.client.request('worktree/discard', { conversationId: conversation.id });
    expect(existsSync(cwd)).toBe(false);
    // Administrators keep the place next to the checkout.
    const { conversation: administrators } = await owner.client.request('conversation/create', { projectId: whole.id, worktree: {} });
    expect(administrators.workLocation[0]?.cwd.startsWith(`${own}.worktrees/`)).toBe(true);
    // A member cannot work in the administrator's worktree, outside the workspace.
    const diff = await failure(bob.client.request('worktree/diff', { conversationId: administrators.id }));
    expect(diff.code).toBe(ErrorCodes.forbidden);
  });
});

describe('MCP servers of a member', () => {
  it('run on the project executor, inside the workspace, without the server environment', async () => {
    const boxed = await project('boxed-mcp', 'boxed');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ transport: 'stdio', command: 'cat' }, /^conversation\/create: params\.mcpServers\.tool\.executor: executor "local" \(the default\) is not the executor of project/],
      [{ transport: 'stdio', command: 'cat', executor: 'local' }, /params\.mcpServers\.tool\.executor: executor "local" is not the executor/],
      [{ transport: 'stdio', command: 'cat', executor: 'boxed', env: { KEY: 'env:HOME' } }, /params\.mcpServers\.tool\.env\.KEY: "env:HOME" reads the server's own environment variable HOME/],
      [{ transport: 'stdio', command: 'cat', executor: 'boxed', cwd: '../..' }, /params\.mcpServers\.tool\.cwd: ".*" is outside the workspace of project/],
      [{ transport: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'env:OPENAI_API_KEY' } }, /params\.mcpServers\.tool\.headers\.Authorization: "env:OPENAI_API_KEY" reads/],
      // Called from the server itself: not its own machine or link-local network, however spelled.
      [{ transport: 'http', url: `${harness.server.url}/mcp` }, /^conversation\/create: params\.mcpServers\.tool\.url: http:\/\/127\.0\.0\.1:\d+ reaches 127\.0\.0\.1, a loopback address of the server's machine/],
      [{ transport: 'http', url: 'http://localhost:9222/json' }, /params\.mcpServers\.tool\.url: http:\/\/localhost:9222 reaches localhost \((127\.0\.0\.1|::1)\), a loopback address/],
      [{ transport: 'http', url: 'http://[::ffff:7f00:1]:1/mcp' }, /params\.mcpServers\.tool\.url: .* a loopback address/],
      [{ transport: 'http', url: 'http://169.254.169.254/latest/meta-data/' }, /params\.mcpServers\.tool\.url: http:\/\/169\.254\.169\.254 reaches 169\.254\.169\.254, a link-local address/],
    ];
    for (const [server, expected] of cases) {
      const refused = await failure(bob.client.request('conversation/create', { projectId: boxed.id, mcpServers: { tool: server } }));
      expect(refused.code, JSON.stringify(server)).toBe(ErrorCodes.invalidParams);
      expect(refused.message, JSON.stringify(server)).toMatch(expected);
    }
    const { conversation } = await bob.client.request('conversation/create', { projectId: boxed.id, mcpServers: { tool: { transport: 'stdio', command: 'cat', executor: 'boxed', cwd: '.' } } });
    expect(conversation.id).toMatch(/^conv_/);
    const { conversation: remote } = await bob.client.request('conversation/create', { projectId: boxed.id, mcpServers: { tool: { transport: 'http', url: 'http://203.0.113.7/mcp' } } });
    expect(remote.id).toMatch(/^conv_/);
    const { conversation: administrators } = await owner.client.request('conversation/create', { projectId: boxed.id, mcpServers: { tool: { transport: 'stdio', command: 'cat', env: { KEY: 'env:HOME' } } } });
    expect(administrators.id).toMatch(/^conv_/);
  });
});

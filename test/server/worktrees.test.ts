/**
 * Conversation worktrees over a real WebSocket against a real server, on real git
 * repositories in temp directories, through the local executor and through a real sshd: two
 * conversations in worktrees of one repository change the same file without touching each
 * other; the diff shows each change; merge lands one on the base branch, discard removes the
 * other; deleting a conversation removes its worktree only when confirmed; conflicts and bad
 * input get clear errors that leave the repository as it was.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { protocolFailure } from '../helpers/protocol-failure.js';
import { startSshServer, type TestSshServer } from '../helpers/ssh-server.js';

let harness: InProcessServer;
let ssh: TestSshServer;
let counter = 0;

/** Runs git in `cwd` with a fixed identity. */
function git(cwd: string, args: string[]): string {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.org' };
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
}

/** A new repository on branch main with one commit of `notes.txt`; its identity is in its own config (the server's merges use it). */
function makeRepository(): string {
  const repository = path.join(harness.environment.root, `repository-${++counter}`);
  mkdirSync(repository);
  git(repository, ['init', '-q', '-b', 'main']);
  git(repository, ['config', 'user.name', 'Ada']);
  git(repository, ['config', 'user.email', 'ada@example.org']);
  writeFileSync(path.join(repository, 'notes.txt'), 'line one\nline two\n');
  git(repository, ['add', 'notes.txt']);
  git(repository, ['commit', '-q', '-m', 'Start']);
  return repository;
}

/** Changes a file in a worktree and commits it there, as an agent's command would. */
function commitIn(cwd: string, file: string, content: string, message: string): void {
  writeFileSync(path.join(cwd, file), content);
  git(cwd, ['add', file]);
  git(cwd, ['commit', '-q', '-m', message]);
}

beforeAll(async () => {
  ssh = await startSshServer();
  harness = await startInProcessServer('responses:\n  - deltas: ["working ", "on it"]\n    holds: [{ afterDeltas: 1, gate: agent-writing }]\n', {
    beforeStart: (environment) => {
      writeFileSync(
        path.join(environment.paths.configDir, 'executors.yaml'),
        ['executors:', `  box: { kind: ssh, host: 127.0.0.1, port: ${ssh.port}, user: ${ssh.user}, identityFile: ${ssh.identityFile}, knownHostsFile: ${ssh.knownHostsFile} }`, ''].join('\n'),
      );
    },
  });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await ssh?.dispose();
});

describe.each(['local', 'box'])('worktrees on executor %s', (executor) => {
  it('keeps two conversations apart, diffs, merges one and discards the other', async () => {
    const repository = makeRepository();
    const first = (await harness.client.request('conversation/create', { cwd: repository, executor, worktree: {} })).conversation;
    const second = (await harness.client.request('conversation/create', { cwd: repository, executor, worktree: { baseBranch: 'main' } })).conversation;
    for (const conversation of [first, second]) {
      expect(conversation.worktree).toMatchObject({ executor, repositoryRoot: repository, baseBranch: 'main', baseCommit: git(repository, ['rev-parse', 'main']) });
      expect(conversation.worktree?.branch).toMatch(/^openvaala\/[0-9a-z]{10}$/);
      expect(conversation.workLocation).toEqual([{ executor, cwd: conversation.worktree?.path }]);
      expect(conversation.worktree?.path).toMatch(new RegExp(`^${repository}\\.worktrees/`));
    }
    const firstPath = first.worktree?.path as string;
    const secondPath = second.worktree?.path as string;
    expect(firstPath).not.toBe(secondPath);

    commitIn(firstPath, 'notes.txt', 'line one\nline two\nfrom the first\n', 'First adds a line');
    writeFileSync(path.join(secondPath, 'notes.txt'), 'line one changed by the second\nline two\n');
    writeFileSync(path.join(secondPath, 'scratch.txt'), 'new\n');
    // Each sees only its own change; the main checkout sees neither.
    expect(readFileSync(path.join(firstPath, 'notes.txt'), 'utf8')).toBe('line one\nline two\nfrom the first\n');
    expect(readFileSync(path.join(secondPath, 'notes.txt'), 'utf8')).toBe('line one changed by the second\nline two\n');
    expect(readFileSync(path.join(repository, 'notes.txt'), 'utf8')).toBe('line one\nline two\n');

    const firstDiff = await harness.client.request('worktree/diff', { conversationId: first.id });
    expect(firstDiff.files).toEqual([{ path: 'notes.txt', status: 'M' }]);
    expect(firstDiff.diff).toContain('+from the first');
    expect(firstDiff.mergeBase).toBe(git(repository, ['rev-parse', 'main']));
    const secondDiff = await harness.client.request('worktree/diff', { conversationId: second.id });
    expect(secondDiff.files).toEqual([{ path: 'notes.txt', status: 'M' }, { path: 'scratch.txt', status: '?' }]);
    expect(secondDiff.diff).toContain('+line one changed by the second');
    expect(secondDiff.diff).not.toContain('from the first');

    // Uncommitted work is not merged behind the user's back.
    const dirty = await protocolFailure(harness.client.request('worktree/merge', { conversationId: second.id }));
    expect(dirty.code).toBe(-32009);
    expect(dirty.data).toMatchObject({ reason: 'worktree_dirty', files: ['notes.txt', 'scratch.txt'] });

    const merged = await harness.client.request('worktree/merge', { conversationId: first.id });
    expect(git(repository, ['rev-parse', 'main'])).toBe(merged.commit);
    expect(readFileSync(path.join(repository, 'notes.txt'), 'utf8')).toBe('line one\nline two\nfrom the first\n');

    const discarded = await harness.client.request('worktree/discard', { conversationId: second.id });
    expect(discarded.conversation.worktree?.removedAt).toEqual(expect.any(Number));
    expect(existsSync(secondPath)).toBe(false);
    expect(git(repository, ['branch', '--list', second.worktree?.branch as string])).toBe('');
    expect(readFileSync(path.join(repository, 'notes.txt'), 'utf8')).toBe('line one\nline two\nfrom the first\n');
    expect(git(repository, ['status', '--porcelain'])).toBe('');
    const again = await protocolFailure(harness.client.request('worktree/diff', { conversationId: second.id }));
    expect(again.data).toEqual({ reason: 'no_worktree' });

    // Deleting asks for confirmation, then removes the worktree and its branch.
    const refused = await protocolFailure(harness.client.request('conversation/delete', { conversationId: first.id }));
    expect(refused.data).toEqual({ reason: 'worktree_present' });
    expect(refused.message).toContain(firstPath);
    expect(existsSync(firstPath)).toBe(true);
    await harness.client.request('conversation/delete', { conversationId: first.id, removeWorktree: true });
    expect(existsSync(firstPath)).toBe(false);
    expect(git(repository, ['branch', '--list', 'openvaala/*'])).toBe('');
    expect(existsSync(`${repository}.worktrees`)).toBe(false);
    // A discarded worktree needs no confirmation.
    await harness.client.request('conversation/delete', { conversationId: second.id });
  }, 60_000);
});

describe('worktree conflicts and rebase', () => {
  it('reports a merge conflict without leaving a half-merge, and rebases onto the base', async () => {
    const repository = makeRepository();
    const first = (await harness.client.request('conversation/create', { cwd: repository, worktree: {} })).conversation;
    const second = (await harness.client.request('conversation/create', { cwd: repository, worktree: {} })).conversation;
    commitIn(first.worktree?.path as string, 'notes.txt', 'first\n', 'First rewrites');
    commitIn(second.worktree?.path as string, 'notes.txt', 'second\n', 'Second rewrites');
    await harness.client.request('worktree/merge', { conversationId: first.id, message: 'Take the first' });
    expect(git(repository, ['log', '-1', '--format=%s'])).toBe('Take the first');
    const head = git(repository, ['rev-parse', 'HEAD']);

    const conflict = await protocolFailure(harness.client.request('worktree/merge', { conversationId: second.id }));
    expect(conflict.code).toBe(-32009);
    expect(conflict.data).toEqual({ reason: 'merge_conflict', files: ['notes.txt'] });
    expect(conflict.message).toMatch(/conflicts in notes\.txt; the merge was aborted/);
    expect(git(repository, ['rev-parse', 'HEAD'])).toBe(head);
    expect(git(repository, ['status', '--porcelain'])).toBe('');
    expect(existsSync(path.join(repository, '.git', 'MERGE_HEAD'))).toBe(false);

    const rebaseConflict = await protocolFailure(harness.client.request('worktree/rebase', { conversationId: second.id }));
    expect(rebaseConflict.data).toEqual({ reason: 'merge_conflict', files: ['notes.txt'] });
    expect(readFileSync(path.join(second.worktree?.path as string, 'notes.txt'), 'utf8')).toBe('second\n');

    // A change that does not conflict rebases cleanly onto the merged base.
    const third = (await harness.client.request('conversation/create', { cwd: repository, worktree: {} })).conversation;
    commitIn(repository, 'other.txt', 'on main\n', 'Main moves on');
    commitIn(third.worktree?.path as string, 'third.txt', 'third\n', 'Third adds a file');
    const rebased = await harness.client.request('worktree/rebase', { conversationId: third.id });
    expect(git(third.worktree?.path as string, ['rev-parse', 'HEAD~1'])).toBe(git(repository, ['rev-parse', 'main']));
    expect(rebased.commit).toBe(git(third.worktree?.path as string, ['rev-parse', 'HEAD']));
    for (const conversation of [first, second, third]) await harness.client.request('conversation/delete', { conversationId: conversation.id, removeWorktree: true });
  }, 60_000);

  it('refuses a merge while the main checkout is dirty or on another branch', async () => {
    const repository = makeRepository();
    const conversation = (await harness.client.request('conversation/create', { cwd: repository, worktree: {} })).conversation;
    commitIn(conversation.worktree?.path as string, 'notes.txt', 'changed\n', 'Change');
    writeFileSync(path.join(repository, 'notes.txt'), 'edited by hand\n');
    const dirty = await protocolFailure(harness.client.request('worktree/merge', { conversationId: conversation.id }));
    expect(dirty.data).toMatchObject({ reason: 'worktree_dirty', files: ['notes.txt'] });
    expect(dirty.message).toContain(`the main checkout ${repository} has uncommitted changes`);
    expect(readFileSync(path.join(repository, 'notes.txt'), 'utf8')).toBe('edited by hand\n');
    git(repository, ['checkout', '-q', '--', 'notes.txt']);
    git(repository, ['checkout', '-q', '-b', 'elsewhere']);
    const elsewhere = await protocolFailure(harness.client.request('worktree/merge', { conversationId: conversation.id }));
    expect(elsewhere.data).toEqual({ reason: 'worktree_not_on_base' });
    expect(elsewhere.message).toContain('branch "elsewhere" checked out, not the base branch "main"');
    await harness.client.request('conversation/delete', { conversationId: conversation.id, removeWorktree: true });
  }, 30_000);
});

describe('worktree bad input', () => {
  it('names the field: not a repository, unknown branch, malformed branch', async () => {
    const plain = path.join(harness.environment.root, 'plain');
    mkdirSync(plain, { recursive: true });
    const notRepository = await protocolFailure(harness.client.request('conversation/create', { cwd: plain, worktree: {} }));
    expect(notRepository.code).toBe(-32602);
    expect(notRepository.message).toMatch(/^conversation\/create: params\.cwd: .*plain on executor "local" is not in a git repository/);
    const viaLocation = await protocolFailure(harness.client.request('conversation/create', { workLocation: [{ executor: 'local', cwd: plain }], worktree: {} }));
    expect(viaLocation.message).toMatch(/^conversation\/create: params\.workLocation\[0\]\.cwd: /);

    const repository = makeRepository();
    const unknown = await protocolFailure(harness.client.request('conversation/create', { cwd: repository, worktree: { baseBranch: 'nope' } }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toBe(`conversation/create: params.worktree.baseBranch: no local branch "nope" in the repository of ${repository} on executor "local"`);
    const malformed = await protocolFailure(harness.client.request('conversation/create', { cwd: repository, worktree: { baseBranch: '--force' } }));
    expect(malformed.message).toBe('conversation/create: params.worktree.baseBranch: "--force" is not a branch name git accepts');
    expect(git(repository, ['worktree', 'list']).split('\n')).toHaveLength(1);
    const listed = await harness.client.request('conversation/list', { cwd: repository });
    expect(listed.conversations).toEqual([]);

    // While a turn runs the agent may be writing in the worktree: no merge, rebase or discard.
    const busy = (await harness.client.request('conversation/create', { cwd: repository, worktree: {} })).conversation;
    await harness.client.request('session/input', { conversationId: busy.id, input: 'work' });
    await harness.environment.mock.waitForHold('agent-writing', 10_000);
    for (const method of ['worktree/merge', 'worktree/rebase', 'worktree/discard'] as const) {
      const running = await protocolFailure(harness.client.request(method, { conversationId: busy.id }));
      expect(running.data).toEqual({ reason: 'turn_running' });
      expect(running.message).toMatch(new RegExp(`^${method}: a turn is running`));
    }
    expect(existsSync(busy.worktree?.path as string)).toBe(true);
    harness.environment.mock.release('agent-writing');
    await expect.poll(async () => (await harness.client.request('conversation/get', { conversationId: busy.id })).sessions[0]?.status).toBe('idle');
    await harness.client.request('worktree/discard', { conversationId: busy.id });

    const ordinary = (await harness.client.request('conversation/create', { cwd: repository })).conversation;
    const none = await protocolFailure(harness.client.request('worktree/merge', { conversationId: ordinary.id }));
    expect(none.data).toEqual({ reason: 'no_worktree' });
    expect(none.message).toContain('does not work in a git worktree');
  }, 30_000);
});

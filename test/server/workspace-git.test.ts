/**
 * `workspace/gitLog` and `workspace/gitShow` over a real WebSocket against a real server, on a
 * real git repository made in a temp directory: pages of commits that stay stable when commits
 * are added, one commit's diff (bounded), and clear errors for a directory outside any
 * repository, an executor without git, unknown commits and malformed params.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIT_SHOW_MAX_DIFF_BYTES } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { protocolFailure } from '../helpers/protocol-failure.js';
import { allowInvalidSentMessages } from '../setup/protocol-validation.js';

let harness: InProcessServer;
let repository: string;
/** Conversations by the directory they work in. */
const conversations: Record<'repository' | 'plain' | 'empty' | 'scratch', string> = { repository: '', plain: '', empty: '', scratch: '' };
/** Commit hashes, oldest first. */
const hashes: string[] = [];

/** Runs git in `cwd` with a fixed identity and date `seconds` (so hashes and dates are known). */
function git(cwd: string, args: string[], seconds = 1_700_000_000): string {
  const date = `${seconds} +0000`;
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Ada Lovelace', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada Lovelace', GIT_COMMITTER_EMAIL: 'ada@example.org', GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd };
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
}

function commit(file: string, content: string, message: string, seconds: number): string {
  writeFileSync(path.join(repository, file), content);
  git(repository, ['add', file]);
  git(repository, ['commit', '-q', '-m', message], seconds);
  const hash = git(repository, ['rev-parse', 'HEAD']);
  hashes.push(hash);
  return hash;
}

beforeAll(async () => {
  harness = await startInProcessServer('responses: []\n', {
    beforeStart: (environment) => {
      writeFileSync(path.join(environment.paths.configDir, 'executors.yaml'), 'executors:\n  scratch: { kind: virtual }\n');
    },
  });
  const root = harness.environment.root;
  repository = path.join(root, 'repository');
  mkdirSync(repository);
  git(repository, ['init', '-q', '-b', 'main']);
  commit('a.txt', 'one\n', 'First commit', 1_700_000_000);
  commit('a.txt', 'one\ntwo\n', 'Second: add a line\n\nThe body explains why.', 1_700_000_100);
  commit('b.txt', 'bee\n', 'Third', 1_700_000_200);
  const empty = path.join(root, 'empty');
  mkdirSync(empty);
  git(empty, ['init', '-q']);
  const plain = path.join(root, 'plain');
  mkdirSync(plain);
  for (const [key, cwd] of [['repository', repository], ['plain', plain], ['empty', empty]] as const) {
    conversations[key] = (await harness.client.request('conversation/create', { cwd })).conversation.id;
  }
  conversations.scratch = (await harness.client.request('conversation/create', { cwd: '/workspace', executor: 'scratch' })).conversation.id;
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

describe('workspace/gitLog', () => {
  it('lists commits newest first with author, date and subject', async () => {
    const { commits, nextCursor } = await harness.client.request('workspace/gitLog', { conversationId: conversations.repository });
    expect(nextCursor).toBeUndefined();
    expect(commits).toEqual([
      { hash: hashes[2], author: 'Ada Lovelace', authorEmail: 'ada@example.org', date: 1_700_000_200_000, subject: 'Third' },
      { hash: hashes[1], author: 'Ada Lovelace', authorEmail: 'ada@example.org', date: 1_700_000_100_000, subject: 'Second: add a line' },
      { hash: hashes[0], author: 'Ada Lovelace', authorEmail: 'ada@example.org', date: 1_700_000_000_000, subject: 'First commit' },
    ]);
  });

  it('pages with a cursor that is not moved by new commits', async () => {
    const first = await harness.client.request('workspace/gitLog', { conversationId: conversations.repository, limit: 2 });
    expect(first.commits.map((entry) => entry.hash)).toEqual([hashes[2], hashes[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const added = commit('c.txt', 'sea\n', 'Fourth, made between two pages', 1_700_000_300);
    try {
      const second = await harness.client.request('workspace/gitLog', { conversationId: conversations.repository, limit: 2, cursor: first.nextCursor as string });
      expect(second.commits.map((entry) => entry.hash)).toEqual([hashes[0]]);
      expect(second.nextCursor).toBeUndefined();
      const fresh = await harness.client.request('workspace/gitLog', { conversationId: conversations.repository, limit: 1 });
      expect(fresh.commits[0]?.hash).toBe(added);
    } finally {
      git(repository, ['reset', '-q', '--hard', hashes[2] as string]);
      hashes.pop();
    }
  });

  it('lists nothing in a repository without commits', async () => {
    expect(await harness.client.request('workspace/gitLog', { conversationId: conversations.empty })).toEqual({ commits: [] });
  });

  it('refuses a directory outside any repository, quoting git', async () => {
    const error = await protocolFailure(harness.client.request('workspace/gitLog', { conversationId: conversations.plain }));
    expect(error.code).toBe(-32009);
    expect(error.data).toEqual({ reason: 'not_a_git_repository' });
    expect(error.message).toMatch(/^workspace\/gitLog: the working directory .*plain on executor "local" is not in a git repository \(git: fatal: not a git repository/);
  });

  it('refuses an executor without git', async () => {
    const error = await protocolFailure(harness.client.request('workspace/gitLog', { conversationId: conversations.scratch }));
    expect(error.code).toBe(-32009);
    expect(error.data).toEqual({ reason: 'git_unavailable' });
    expect(error.message).toBe('workspace/gitLog: git is not installed on executor "scratch"');
  });

  it('refuses malformed params and cursors naming the field', async () => {
    allowInvalidSentMessages();
    const limit = await protocolFailure(harness.client.request('workspace/gitLog', { conversationId: conversations.repository, limit: 0 }));
    expect(limit.code).toBe(-32602);
    expect(limit.message).toContain('params.limit');
    for (const cursor of ['nonsense', `${'a'.repeat(40)};rm -rf /.2`, `${'a'.repeat(40)}.2`]) {
      const error = await protocolFailure(harness.client.request('workspace/gitLog', { conversationId: conversations.repository, cursor }));
      expect(error.code, cursor).toBe(-32602);
      expect(error.message, cursor).toMatch(/^workspace\/gitLog: params\.cursor: /);
    }
  });
});

describe('workspace/gitShow', () => {
  it('gives a commit with its message, parents and unified diff', async () => {
    const shown = await harness.client.request('workspace/gitShow', { conversationId: conversations.repository, commit: hashes[1] as string });
    expect(shown.commit).toEqual({ hash: hashes[1], author: 'Ada Lovelace', authorEmail: 'ada@example.org', date: 1_700_000_100_000, subject: 'Second: add a line', body: 'The body explains why.', parents: [hashes[0]] });
    expect(shown.truncated).toBe(false);
    expect(shown.diff).toContain('diff --git a/a.txt b/a.txt\n');
    expect(shown.diff).toContain('@@ -1 +1,2 @@\n one\n+two\n');
    // An abbreviated hash names the same commit; a root commit has no parents.
    const root = await harness.client.request('workspace/gitShow', { conversationId: conversations.repository, commit: (hashes[0] as string).slice(0, 8).toUpperCase() });
    expect(root.commit.hash).toBe(hashes[0]);
    expect(root.commit.parents).toEqual([]);
    expect(root.diff).toContain('+one\n');
  });

  it('cuts a large diff at a line end and says so', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const big = commit('big.txt', line.repeat(Math.ceil((GIT_SHOW_MAX_DIFF_BYTES * 1.5) / line.length)), 'A big file', 1_700_000_400);
    try {
      const shown = await harness.client.request('workspace/gitShow', { conversationId: conversations.repository, commit: big });
      expect(shown.truncated).toBe(true);
      expect(Buffer.byteLength(shown.diff)).toBeLessThanOrEqual(GIT_SHOW_MAX_DIFF_BYTES);
      expect(Buffer.byteLength(shown.diff)).toBeGreaterThan(GIT_SHOW_MAX_DIFF_BYTES - 200);
      expect(shown.diff.endsWith(`+${line}`)).toBe(true);
      expect(shown.commit.subject).toBe('A big file');
    } finally {
      git(repository, ['reset', '-q', '--hard', hashes[2] as string]);
      hashes.pop();
    }
  });

  it('refuses unknown commits and things that are not hashes', async () => {
    allowInvalidSentMessages();
    const unknown = await protocolFailure(harness.client.request('workspace/gitShow', { conversationId: conversations.repository, commit: 'deadbeef' }));
    expect(unknown.code).toBe(-32004);
    expect(unknown.message).toMatch(/^workspace\/gitShow: params\.commit: no commit by that hash/);
    for (const commit of ['HEAD', '--output=/tmp/x', 'abc', `${hashes[0]};id`]) {
      const error = await protocolFailure(harness.client.request('workspace/gitShow', { conversationId: conversations.repository, commit }));
      expect(error.code, commit).toBe(-32602);
      expect(error.message, commit).toContain('params.commit');
    }
    const plain = await protocolFailure(harness.client.request('workspace/gitShow', { conversationId: conversations.plain, commit: hashes[0] as string }));
    expect(plain.data).toEqual({ reason: 'not_a_git_repository' });
  });
});

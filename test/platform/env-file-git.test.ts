/**
 * The secrets' `.env` the server writes into a project's workspace is kept out of git
 * (docs/platform.md, "Secrets"): when the workspace is in a git repository, the file is named
 * in the repository's `info/exclude`, so `git status` does not list it and `git add -A` does
 * not stage it, and no tracked file (such as `.gitignore`) is changed. Checked with real git
 * repositories: a checkout, a subdirectory of one, and a linked worktree (whose `.git` is a
 * file pointing at the main repository).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { writeEnvFile } from '../../src/platform/secrets/env-file.js';

const SECRETS = new Map([['API_TOKEN', 'value-123456']]);
let root: string;
let executor: LocalExecutor;

/** Runs git in `cwd` with a fixed identity and no user configuration. @returns its standard output */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
}

/** A new repository with one commit (a README and a `.gitignore` that does not name `.env`). */
function repository(name: string): string {
  const directory = path.join(root, name);
  mkdirSync(path.join(directory, 'app'), { recursive: true });
  git(directory, 'init', '-q');
  writeFileSync(path.join(directory, 'README.md'), 'hello\n');
  writeFileSync(path.join(directory, '.gitignore'), 'node_modules/\n');
  writeFileSync(path.join(directory, 'app', 'main.txt'), 'main\n');
  git(directory, 'add', '-A');
  git(directory, 'commit', '-q', '-m', 'first');
  return directory;
}

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'ov-env-git-'));
  executor = new LocalExecutor({ name: 'local' });
});

afterAll(async () => {
  await executor.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the secrets .env and git', () => {
  it('a workspace that is a checkout: .env is excluded, git status stays clean and no tracked file changes', async () => {
    const checkout = repository('checkout');
    await writeEnvFile(executor, checkout, SECRETS);
    expect(readFileSync(path.join(checkout, '.env'), 'utf8')).toContain('API_TOKEN=value-123456');
    expect(git(checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    git(checkout, 'add', '-A');
    expect(git(checkout, 'diff', '--cached', '--name-only')).toBe('');
    expect(readFileSync(path.join(checkout, '.gitignore'), 'utf8')).toBe('node_modules/\n');
    const exclude = readFileSync(path.join(checkout, '.git', 'info', 'exclude'), 'utf8');
    expect(exclude).toContain('/.env\n');
    // Writing again adds nothing more.
    await writeEnvFile(executor, checkout, new Map([['API_TOKEN', 'value-654321']]));
    expect(readFileSync(path.join(checkout, '.git', 'info', 'exclude'), 'utf8')).toBe(exclude);
  });

  it('a workspace inside a checkout: the .env of that directory is excluded, not a .env elsewhere', async () => {
    const checkout = repository('nested');
    const workspace = path.join(checkout, 'app');
    await writeEnvFile(executor, workspace, SECRETS);
    expect(git(checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readFileSync(path.join(checkout, '.git', 'info', 'exclude'), 'utf8')).toContain('/app/.env\n');
    // Only the workspace's own file: a .env at the top of the repository is still the user's to track.
    writeFileSync(path.join(checkout, '.env'), 'PUBLIC=1\n');
    expect(git(checkout, 'status', '--porcelain')).toBe('?? .env\n');
  });

  it('a workspace that is a linked worktree (.git is a file): excluded through the main repository', async () => {
    const checkout = repository('main-repo');
    const worktree = path.join(root, 'main-repo.worktrees', 'one');
    git(checkout, 'worktree', 'add', '-q', '-b', 'feature', worktree);
    expect(readFileSync(path.join(worktree, '.git'), 'utf8')).toMatch(/^gitdir: /);
    await writeEnvFile(executor, worktree, SECRETS);
    expect(existsSync(path.join(worktree, '.env'))).toBe(true);
    expect(git(worktree, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    git(worktree, 'add', '-A');
    expect(git(worktree, 'diff', '--cached', '--name-only')).toBe('');
    expect(readFileSync(path.join(worktree, '.gitignore'), 'utf8')).toBe('node_modules/\n');
  });

  it('a .env the repository already tracks is not touched in git: the warning says to untrack it', async () => {
    const checkout = repository('tracked');
    writeFileSync(path.join(checkout, '.env'), 'PUBLIC=1\n');
    git(checkout, 'add', '.env');
    git(checkout, 'commit', '-q', '-m', 'env');
    const before = readFileSync(path.join(checkout, '.git', 'info', 'exclude'), 'utf8');
    const written = await writeEnvFile(executor, checkout, SECRETS);
    expect(written.gitWarning).toContain(`${checkout}/.env on executor "local" is tracked by git`);
    expect(written.gitWarning).toContain('git rm --cached .env');
    expect(readFileSync(path.join(checkout, '.git', 'info', 'exclude'), 'utf8')).toBe(before);
  });

  it('a workspace outside any repository: nothing but the .env is written', async () => {
    const plain = path.join(root, 'plain');
    mkdirSync(plain);
    // No repository holds it: nothing to exclude, and nothing to warn about.
    expect(await writeEnvFile(executor, plain, SECRETS)).toEqual({});
    expect(existsSync(path.join(plain, '.git'))).toBe(false);
    expect(readFileSync(path.join(plain, '.env'), 'utf8')).toContain('API_TOKEN=');
  });

  it('a workspace whose path has characters special to git patterns is excluded exactly', async () => {
    const checkout = repository('special');
    const workspace = path.join(checkout, 'a [b]*?');
    mkdirSync(workspace);
    writeFileSync(path.join(workspace, 'kept.txt'), 'x\n');
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '-q', '-m', 'second');
    await writeEnvFile(executor, workspace, SECRETS);
    expect(git(checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    // A sibling the pattern would match if its characters were taken as wildcards stays visible.
    const sibling = path.join(checkout, 'a b?x');
    mkdirSync(sibling);
    writeFileSync(path.join(sibling, '.env'), 'OTHER=1\n');
    expect(git(checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('?? "a b?x/.env"\n');
  });
});

/**
 * The worktree drawer in Chromium against a real `openvaala serve`: the diff of a
 * conversation's worktree against its base branch, merge landing the change on the base,
 * then a second conversation's worktree discarded, and deletion removing a worktree after the
 * confirmation names it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebSession, type WebSession } from './web-session.js';

function git(cwd: string, args: string[]): string {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Tester', GIT_AUTHOR_EMAIL: 'tester@example.com', GIT_COMMITTER_NAME: 'Tester', GIT_COMMITTER_EMAIL: 'tester@example.com' };
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
}

describe('worktree drawer', { timeout: 120_000 }, () => {
  let web: WebSession;
  let repository: string;

  beforeAll(async () => {
    web = await startWebSession({ script: 'responses: []\n', viewport: { width: 1280, height: 800 } });
    repository = path.join(web.environment.root, 'project');
    mkdirSync(repository);
    git(repository, ['init', '-q', '-b', 'main']);
    git(repository, ['config', 'user.name', 'Tester']);
    git(repository, ['config', 'user.email', 'tester@example.com']);
    writeFileSync(path.join(repository, 'readme.txt'), 'hello\n');
    git(repository, ['add', 'readme.txt']);
    git(repository, ['commit', '-q', '-m', 'Start']);
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
  });

  it('shows the diff, merges, discards, and deletes with the worktree', async () => {
    const kept = (await web.client.request('conversation/create', { cwd: repository, worktree: {}, title: 'Kept' })).conversation;
    const keptPath = kept.worktree?.path as string;
    writeFileSync(path.join(keptPath, 'readme.txt'), 'hello\nfrom the worktree\n');
    git(keptPath, ['commit', '-q', '-am', 'Add a line']);

    const page = await web.open(`#/c/${kept.id}`);
    await page.getByRole('button', { name: 'Worktree' }).click();
    const drawer = page.getByRole('complementary', { name: 'worktree drawer' });
    await drawer.getByRole('list', { name: 'Changed files' }).getByText('readme.txt').waitFor();
    await drawer.getByText('+from the worktree').waitFor();
    await drawer.getByRole('button', { name: 'Merge' }).click();
    await drawer.getByRole('status').getByText(/^Merged into main as [0-9a-f]{8}\.$/).waitFor();
    expect(readFileSync(path.join(repository, 'readme.txt'), 'utf8')).toBe('hello\nfrom the worktree\n');
    await drawer.getByText('No changes against the base.').waitFor();

    // A refused merge shows the server's reason.
    writeFileSync(path.join(keptPath, 'readme.txt'), 'uncommitted\n');
    await drawer.getByRole('button', { name: 'Merge' }).click();
    await drawer.getByRole('alert').getByText(/has uncommitted changes \(readme\.txt\)/).waitFor();

    // Deleting names the worktree and removes it.
    await page.getByRole('navigation', { name: 'Conversation actions' }).getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: 'Confirm' });
    await confirm.getByText(`Its worktree ${keptPath} and branch ${kept.worktree?.branch as string} are removed.`).waitFor();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL((url) => !url.hash.includes(kept.id));
    await expect.poll(() => existsSync(keptPath)).toBe(false);

    const dropped = (await web.client.request('conversation/create', { cwd: repository, worktree: {}, title: 'Dropped' })).conversation;
    const droppedPath = dropped.worktree?.path as string;
    writeFileSync(path.join(droppedPath, 'readme.txt'), 'thrown away\n');
    await page.goto(page.url().replace(/#.*$/, `#/c/${dropped.id}`));
    await page.getByRole('button', { name: 'Worktree' }).click();
    await drawer.getByText('+thrown away').waitFor();
    await drawer.getByRole('button', { name: 'Discard' }).click();
    await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Discard' }).click();
    await drawer.getByText(`The worktree ${droppedPath} was discarded.`).waitFor();
    expect(existsSync(droppedPath)).toBe(false);
    expect(readFileSync(path.join(repository, 'readme.txt'), 'utf8')).toBe('hello\nfrom the worktree\n');
    expect(git(repository, ['branch', '--list', 'openvaala/*'])).toBe('');
    await page.close();
  });
});

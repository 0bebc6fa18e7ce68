/**
 * The browser flows of the web UI, run at desktop and at phone size (one server and one
 * browser per test file, the pages reused). Timing comes from mock holds and gates, and from
 * a command that waits for a file the test writes, never from sleeps.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { StoredItem } from '../../src/protocol/index.js';
import { conversationIdOf, pageItemIds, screenshot, seriousAccessibilityViolations, type WebSession } from './web-session.js';

/** The parent model's answers, in the order the flows use them. */
export const FLOW_SCRIPT = `
responses:
  - reasoningDeltas: ["The user wants to see every kind of item."]
    deltas: ["Let me ", "plan ", "this."]
    holds:
      - { afterDeltas: 2, gate: first-stream }
    toolCalls:
      - name: update_plan
        arguments: { plan: [{ step: "Run a command", status: in_progress }, { step: "Write notes", status: pending }, { step: "Ask a helper", status: pending }] }
  - text: "Running a command."
    toolCalls:
      - name: exec_command
        arguments: { command: "printf 'first-line\\\\n'; while [ ! -f go.flag ]; do sleep 0.05; done; printf 'second-line\\\\n'" }
  - text: "Now a patch."
    toolCalls:
      - name: apply_patch
        arguments: { patch: "*** Begin Patch\\n*** Add File: notes.md\\n+# Notes\\n+written by the agent\\n*** End Patch\\n" }
  - toolCalls:
      - { name: spawn_agent, arguments: { task: "CHILD-TASK: look around", model: "child/m" } }
  - toolCalls:
      - { name: wait_agent, arguments: { timeout_ms: 20000 } }
  - text: "Everything is **done**."
  - text: "Removing it."
    toolCalls:
      - name: exec_command
        arguments: { command: "rm -f nothing.txt # \\u202etxt.lla" }
  - text: "Removed it."
  - text: "Got the file."
  - text: "Thanks for the review."
  - deltas: ["Working ", "slowly."]
    holds:
      - { afterDeltas: 1, gate: slow }
    toolCalls:
      - name: exec_command
        arguments: { command: "true" }
  - deltas: ["Steered ", "answer ", "here."]
    holds:
      - { afterDeltas: 1, gate: never-released }
`;

/** The subagent's own mock answers. */
export const CHILD_SCRIPT = `responses:\n  - text: "CHILD-ANSWER"\n`;

/** `agents.yaml`: `rm` commands need approval. */
export const AGENTS_YAML = `agents:\n  default:\n    default: true\n    approvals:\n      default: allow\n      rules:\n        - { tool: exec_command, match: { command: ["rm*"] }, decision: ask }\n`;

async function logOf(web: WebSession, conversationId: string): Promise<StoredItem[]> {
  return (await web.client.request('items/list', { conversationId, limit: 1000 })).items;
}

/** The ids of the stored items the transcript draws for the root session, in order. */
async function shownRootItemIds(page: Page): Promise<string[]> {
  const articles = page.locator('.transcript > .rows > .row > article[data-item-id]:not(.live)');
  return articles.evaluateAll((elements) => elements.map((element) => (element as unknown as { dataset: Record<string, string | undefined> }).dataset['itemId'] ?? ''));
}

/** The error the conversation view shows, if any. */
async function shownError(page: Page): Promise<string | undefined> {
  const alert = page.locator('p.error-text[role="alert"]');
  return (await alert.count()) > 0 ? ((await alert.first().textContent()) ?? '') : undefined;
}

/** The ends of the root session's turns (subagent threads have their own, nested). */
const ROOT_TURN_END = '.transcript > .rows > .row > .turn-end';

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousAccessibilityViolations(page)).toEqual([]);
}

/**
 * Creates a conversation and follows its first turn: a streamed answer, a plan, a command with
 * live output, a patch diff and a subagent. Returns the page and the conversation id.
 */
export async function firstTurn(web: WebSession, prefix: string): Promise<{ page: Page; conversationId: string }> {
  const page = await web.open('#/');
  await expectAccessible(page);
  await page.getByRole('button', { name: 'New', exact: true }).click();
  const form = page.getByRole('main', { name: 'New conversation' });
  await form.getByLabel('Working directory', { exact: true }).fill(web.environment.workDir);
  await form.getByLabel('First message (optional)').fill('Show me everything');
  await expectAccessible(page);
  await screenshot(page, `${prefix}-new-conversation`);
  await form.getByRole('button', { name: 'Create conversation' }).click();
  await page.waitForURL(/#\/c\/conv_/);
  const conversationId = conversationIdOf(page);
  const transcript = page.getByRole('log', { name: 'Transcript' });

  // Streaming: the first words are on the page while the model is held mid-answer.
  await web.environment.mock.waitForHold('first-stream', 15_000);
  await transcript.locator('article.live[data-kind="assistant_message"]', { hasText: 'Let me' }).waitFor();
  web.environment.mock.release('first-stream');

  // The command's first line shows while it still runs; the file it waits for lets it end.
  const command = transcript.locator('.tool-command').first();
  await command.locator('.command-output', { hasText: 'first-line' }).waitFor();
  await expect.poll(() => command.locator('.badge').first().textContent()).toBe('running');
  writeFileSync(path.join(web.environment.workDir, 'go.flag'), '');
  await expect.poll(async () => (await transcript.locator('.tool-command').first().locator('.badge').textContent()) ?? '', { timeout: 15_000 }).toMatch(/done · exit 0/);

  await page.locator(`${ROOT_TURN_END}[data-stop-reason="end_turn"]`).waitFor({ timeout: 20_000 });
  await transcript.getByText('Everything is').waitFor();
  // The plan as a checklist, the patch as a diff, the subagent as a nested thread.
  await expect.poll(() => transcript.locator('.plan').first().getAttribute('aria-label')).toBe('Plan, 0 of 3 steps done');
  const diff = transcript.locator('.diff[data-path="notes.md"]');
  await expect.poll(() => diff.locator('tr.add').count()).toBe(2);
  await diff.getByRole('button', { name: 'Side by side' }).click();
  await diff.locator('table.split').waitFor();
  await diff.getByRole('button', { name: 'Unified' }).click();
  const thread = transcript.locator('.subagent-thread').first();
  await thread.locator('summary').click();
  await thread.getByText('CHILD-ANSWER').waitFor();
  await transcript.locator('.tool-command summary').first().click();
  await expectAccessible(page);
  await screenshot(page, `${prefix}-transcript`);
  expect(await pageItemIds(page, conversationId)).toEqual((await logOf(web, conversationId)).map((stored) => stored.item.id));
  return { page, conversationId };
}

/** An approval asked in both tabs, answered in the second, gone from both. */
export async function approvalFromAnotherTab(web: WebSession, page: Page, conversationId: string, prefix: string): Promise<Page> {
  const other = await web.open(`#/c/${conversationId}`);
  await other.getByRole('log', { name: 'Transcript' }).getByText('Everything is').waitFor();
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Remove the temp file');
  await box.press('Control+Enter');
  const card = page.getByRole('alertdialog', { name: /Approval needed for exec_command/ });
  await card.getByText('rm -f nothing.txt').waitFor();
  // A bidirectional override in the command is shown, not obeyed (it would make the end read reversed).
  expect(await card.locator('pre.command-line').textContent()).toContain('# <U+202E>txt.lla');
  await expectAccessible(page);
  await screenshot(page, `${prefix}-approval`);
  const otherCard = other.getByRole('alertdialog', { name: /Approval needed for exec_command/ });
  await otherCard.getByRole('button', { name: 'Allow once' }).click();
  await card.waitFor({ state: 'detached' });
  await otherCard.waitFor({ state: 'detached' });
  await page.getByRole('log').getByText('Removed it.').waitFor();
  await page.locator(ROOT_TURN_END).nth(1).waitFor();
  // The second tab shows the same transcript, live.
  await expect.poll(() => pageItemIds(other, conversationId)).toEqual(await pageItemIds(page, conversationId));
  await expect.poll(() => other.locator('article[data-kind]').count()).toBe(await page.locator('article[data-kind]').count());
  return other;
}

/** An attachment and an @-mention in one input, then line comments sent as a review. */
export async function attachmentMentionReview(page: Page): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await page.getByLabel('Attach files').setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello attachment\n') });
  await page.locator('.attachments').getByText('hello.txt').waitFor();
  await box.fill('');
  await box.pressSequentially('Read @no');
  await page.getByRole('listbox', { name: 'Files' }).getByRole('option', { name: 'notes.md' }).waitFor();
  await box.press('Enter');
  expect(await box.inputValue()).toBe('Read @notes.md ');
  await box.press('Control+Enter');
  const sent = page.locator('article[data-kind="user_message"]', { hasText: 'Read @notes.md' });
  await sent.getByText('hello.txt').waitFor();
  await page.getByRole('log').getByText('Got the file.').waitFor();

  const diff = page.locator('.transcript > .rows .diff[data-path="notes.md"]').first();
  await diff.getByRole('button', { name: 'Comment on line 2 of notes.md' }).click();
  await diff.getByRole('textbox', { name: 'Comment on line 2' }).fill('Say more here.');
  await diff.getByRole('button', { name: 'Add comment' }).click();
  const review = page.getByRole('region', { name: 'Review' });
  await review.getByText('Say more here.').waitFor();
  await review.getByRole('button', { name: 'Send review' }).click();
  await review.waitFor({ state: 'detached' });
  await page.locator('article[data-kind="user_message"]', { hasText: 'Review comments on your changes' }).getByText('written by the agent').waitFor();
  await page.getByRole('log').getByText('Thanks for the review.').waitFor();
}

/** Queue and withdraw an input, steer the running turn, interrupt it with Escape. */
export async function queueSteerInterrupt(web: WebSession, page: Page, prefix: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Work slowly');
  await box.press('Control+Enter');
  await web.environment.mock.waitForHold('slow', 15_000);
  await page.getByRole('button', { name: 'Interrupt' }).waitFor();

  await box.fill('a queued thought');
  await page.getByRole('button', { name: 'Queue', exact: true }).click();
  const queue = page.getByRole('list', { name: 'Queued inputs' });
  await queue.getByText('a queued thought').waitFor();
  await screenshot(page, `${prefix}-queue`);
  await page.getByRole('button', { name: 'Withdraw queued input: a queued thought' }).click();
  await queue.waitFor({ state: 'detached' });

  await page.getByRole('radio', { name: 'Steer' }).check();
  await box.fill('steer this way');
  await page.getByRole('button', { name: 'Steer', exact: true }).click();
  web.environment.mock.release('slow');
  const steered = page.locator('article[data-kind="user_message"]', { hasText: 'steer this way' });
  await steered.locator('.badge', { hasText: 'steer' }).waitFor({ timeout: 15_000 });

  await web.environment.mock.waitForHold('never-released', 15_000);
  await page.locator('article.live[data-kind="assistant_message"]', { hasText: 'Steered' }).waitFor();
  await page.locator('body').press('Escape');
  await page.locator(`${ROOT_TURN_END}[data-stop-reason="user_interrupt"]`).waitFor({ timeout: 15_000 });
  await expect.poll(() => page.getByRole('list', { name: 'Queued inputs' }).count()).toBe(0);
}

/** Fork from the first answer, rewind the fork to its first message, rename it and delete it. */
export async function forkRewindRenameDelete(web: WebSession, page: Page, conversationId: string): Promise<void> {
  const firstAnswer = page.locator('.transcript > .rows > .row > article[data-kind="assistant_message"]').first();
  // By keyboard: what a pointer would hit depends on the rows around the menu.
  await firstAnswer.locator('.item-menu summary').press('Enter');
  await firstAnswer.getByRole('menuitem', { name: 'Fork from here' }).press('Enter');
  await page.waitForURL((url) => /#\/c\/conv_/.test(url.hash) && !url.hash.includes(conversationId));
  const forkId = conversationIdOf(page);
  const forkLog = await logOf(web, forkId);
  // The copy ends with the answer it was forked from.
  const last = forkLog.at(-1)?.item;
  expect(last?.kind === 'assistant_message' && last.text).toBe('Let me plan this.');
  expect(forkLog.length).toBeLessThan((await logOf(web, conversationId)).length);
  await expect.poll(() => pageItemIds(page, forkId)).toEqual(forkLog.map((stored) => stored.item.id));
  // The page's state holds the fork before its transcript is drawn: act on the drawn fork, not on rows of the source still shown.
  await expect.poll(() => shownRootItemIds(page)).toEqual(forkLog.map((stored) => stored.item.id));

  const firstMessage = page.locator('.transcript > .rows > .row > article[data-kind="user_message"]').first();
  await firstMessage.locator('.item-menu summary').press('Enter');
  await firstMessage.getByRole('menuitem', { name: 'Rewind to here' }).press('Enter');
  await page.getByRole('dialog').getByRole('button', { name: 'Rewind' }).click();
  // An error the page shows is part of what is compared, so that a refused rewind says why.
  await expect
    .poll(async () => ({ last: (await logOf(web, forkId)).at(-1)?.item.kind, shownError: await shownError(page) }))
    .toEqual({ last: 'user_message', shownError: undefined });
  const rewound = await logOf(web, forkId);
  await expect.poll(() => pageItemIds(page, forkId)).toEqual(rewound.map((stored) => stored.item.id));
  await expect.poll(() => shownRootItemIds(page)).toEqual(rewound.map((stored) => stored.item.id));

  await page.getByRole('button', { name: 'Rename' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('textbox').fill('The fork, renamed');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: /The fork, renamed/ }).waitFor();
  expect((await web.client.request('conversation/get', { conversationId: forkId })).conversation.title).toBe('The fork, renamed');

  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.waitForURL((url) => url.hash === '#/');
  const listed = await web.client.request('conversation/list', {});
  expect(listed.conversations.map((summary) => summary.id)).not.toContain(forkId);
  expect(await page.locator(`[data-conversation-id="${forkId}"]`).count()).toBe(0);
}

/** The terminal drawer runs a command on the conversation's executor; the files and history drawers. */
export async function terminalDrawer(web: WebSession, page: Page, conversationId: string, prefix: string): Promise<void> {
  await page.goto(page.url().replace(/#.*$/, `#/c/${conversationId}`));
  await page.getByRole('button', { name: 'Terminal' }).click();
  await page.getByText('Terminal: running').waitFor({ timeout: 15_000 });
  await page.locator('.xterm-helper-textarea').focus();
  await page.keyboard.type('echo web-$((6*7))\n');
  await page.locator('.xterm-rows', { hasText: 'web-42' }).waitFor({ timeout: 15_000 });
  await screenshot(page, `${prefix}-terminal`);
  await page.getByRole('button', { name: 'Files' }).click();
  await page.getByRole('tree', { name: 'Workspace files' }).getByRole('button', { name: 'notes.md', exact: true }).click();
  await page.getByRole('region', { name: 'File notes.md' }).getByText('written by the agent').waitFor();
  await expectAccessible(page);

  // The git history of the working directory, and one commit's diff.
  const git = (...args: string[]) => execFileSync('git', args, { cwd: web.environment.workDir, env: { ...process.env, GIT_AUTHOR_NAME: 'Tester', GIT_AUTHOR_EMAIL: 'tester@example.com', GIT_COMMITTER_NAME: 'Tester', GIT_COMMITTER_EMAIL: 'tester@example.com' } });
  git('init', '-q');
  git('add', 'notes.md');
  git('commit', '-q', '-m', 'Add the notes');
  await page.getByRole('button', { name: 'History' }).click();
  const drawer = page.getByRole('complementary', { name: 'git drawer' });
  await drawer.locator('.commits, [role="alert"]').first().waitFor();
  if ((await drawer.getByRole('alert').count()) > 0) throw new Error(`the history drawer failed: ${await drawer.getByRole('alert').innerText()}`);
  await page.getByRole('list', { name: 'Commits' }).getByRole('button', { name: /Add the notes/ }).click();
  await page.getByRole('region', { name: /Commit / }).getByText('+written by the agent').waitFor();
  await screenshot(page, `${prefix}-history`);
  await page.getByRole('button', { name: 'Close drawer' }).click();
}

/** Settings show the configuration; an accessibility check of the page; the app shell's service worker. */
export async function settingsPage(page: Page, prefix: string): Promise<void> {
  // The service worker that caches the app shell is active for the UI's scope.
  expect(await page.evaluate('navigator.serviceWorker.ready.then((registration) => registration.scope)')).toMatch(/\/web\/v1\/$/);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Providers and keys' }).waitFor();
  await page.getByRole('rowheader', { name: 'mock' }).waitFor();
  // A value the server refuses: the files are restored and the error names file and key.
  const form = page.getByRole('region', { name: 'Any value' });
  await form.getByLabel('File').selectOption('server');
  await form.getByLabel('Key path (dots)').fill('limits.maxUploadBytes');
  await form.getByLabel('Value (JSON or text)').fill('"lots"');
  await form.getByRole('button', { name: 'Save value' }).click();
  const problem = page.getByRole('alert');
  await problem.waitFor();
  expect(await problem.innerText()).toMatch(/server\.yaml[\s\S]*maxUploadBytes/);
  await expectAccessible(page);
  await screenshot(page, `${prefix}-settings`);
}

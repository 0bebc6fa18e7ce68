/**
 * The schedules drawer and the cost views in Chromium against a real `openvaala serve` with
 * the mock provider: a task the agent created shows disabled, awaiting enabling, and is
 * enabled; a task created in the drawer is run now and its completed run shows in the history;
 * pause and delete. The conversation header shows its cost, the project list its month total,
 * and the project's costs page sets the thresholds. axe-core finds no serious violation.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Project } from '../../src/protocol/projects.js';
import { screenshot, seriousAccessibilityViolations, startWebSession, type WebSession } from './web-session.js';

// Each answer: 1000 input and 500 output tokens, at $2 and $8 per million: $0.006.
const USAGE = 'usage: { inputTokens: 1000, outputTokens: 500 }';
const SCRIPT = `
responses:
  - toolCalls: [{ name: schedule_task, arguments: { name: "agent nightly", prompt: "check the build", schedule: { kind: "cron", expression: "0 3 * * *", timeZone: "UTC" } } }]
    ${USAGE}
  - { text: "I scheduled it.", ${USAGE} }
  - { text: "The report is written.", ${USAGE} }
`;

const providers = (baseURL: string) => `providers:
  mock:
    kind: openai
    baseURL: ${baseURL}
    apiKey: none
    models:
      mock-model: { prices: { inputPerMillionUsd: 2, outputPerMillionUsd: 8 } }
defaultModel: mock/mock-model
`;

describe('web UI: schedules drawer and costs', { timeout: 120_000 }, () => {
  let web: WebSession;
  let page: Page;
  let project: Project;
  let conversationId: string;

  beforeAll(async () => {
    web = await startWebSession({ script: SCRIPT, viewport: { width: 1280, height: 800 }, providersYaml: providers });
    const directory = path.join(web.environment.workDir, 'reports');
    mkdirSync(directory, { recursive: true });
    project = (await web.client.request('projects/create', { name: 'Reports', workspace: { executor: 'local', directory } })).project;
    conversationId = (await web.client.request('conversation/create', { projectId: project.id, title: 'Nightly checks' })).conversation.id;
    await web.client.request('conversation/subscribe', { conversationId });
    // The agent's schedule_task may ask for approval (it has side effects): allow it.
    const completed = new Promise<void>((resolve) => {
      web.client.onNotification((event) => {
        if (event.method === 'approval/requested') web.client.request('approval/respond', { conversationId, approvalId: event.params.approval.approvalId, decision: 'allow_once' }).catch(() => undefined);
        if (event.method === 'turn/completed' && event.params.conversationId === conversationId) resolve();
      });
    });
    await web.client.request('session/input', { conversationId, input: 'check the build every night' });
    await completed;
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
  });

  it('lists, enables, creates, runs now with history, pauses and deletes tasks', async () => {
    page = await web.open(`#/c/${conversationId}`);
    // Two model calls of $0.006 each.
    await page.getByLabel('Conversation cost').getByText('Conversation: $0.0120').waitFor();
    await page.getByRole('button', { name: 'Schedules' }).click();
    const drawer = page.getByRole('complementary', { name: 'schedules drawer' });
    const task = (name: string) => drawer.getByRole('listitem').filter({ has: page.getByText(name, { exact: true }) });

    // The agent's task waits, disabled, for a person.
    await task('agent nightly').getByText('awaiting enabling').waitFor();
    expect(await task('agent nightly').innerText()).toContain('cron · 0 3 * * * (UTC)');
    await task('agent nightly').getByRole('button', { name: 'Enable' }).click();
    await task('agent nightly').getByText('enabled').waitFor();
    await task('agent nightly').getByText(/next run/).waitFor();

    // A task made in the drawer, run at once: its run completes and shows in the history.
    await drawer.getByRole('button', { name: 'New task' }).click();
    const form = drawer.getByRole('form', { name: 'New scheduled task' });
    await form.getByLabel('Name').fill('report');
    await form.getByLabel('Prompt').fill('write the report');
    await form.getByLabel('Kind').selectOption('interval');
    await form.getByLabel('Every (minutes)').fill('120');
    await form.getByRole('button', { name: 'Create task' }).click();
    await task('report').getByText('interval · every 2 hours').waitFor();
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await task('report').getByRole('button', { name: 'Run now' }).click();
    const history = task('report').getByRole('list', { name: 'Run history' });
    await history.getByText('completed', { exact: true }).waitFor({ timeout: 20_000 });
    expect(await history.innerText()).toContain('run now');
    await page.getByText('The report is written.').first().waitFor();
    const [created] = (await web.client.request('schedules/list', { conversationId })).tasks.filter((each) => each.name === 'report');
    expect((await web.client.request('schedules/history', { taskId: created!.id })).runs.map((run) => [run.trigger, run.status])).toEqual([['manual', 'completed']]);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'schedules-drawer');

    // The cost follows the scheduled run's turn.
    await page.getByLabel('Conversation cost').getByText('Conversation: $0.0180').waitFor();

    await task('report').getByRole('button', { name: 'Pause' }).click();
    await task('report').getByText('paused', { exact: true }).waitFor();
    await task('report').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Confirm' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => task('report').count()).toBe(0);
    expect((await web.client.request('schedules/list', { conversationId })).tasks.map((each) => each.name)).toEqual(['agent nightly']);
  });

  it('shows the month total on the project list and sets the thresholds on the costs page', async () => {
    const month = new Date().toISOString().slice(0, 7);
    await page.goto(`${web.webUrl}#/projects`);
    await page.locator(`[data-project-id="${project.id}"]`).getByText(`$0.0180 in ${month}`).waitFor();
    await page.locator(`[data-project-id="${project.id}"]`).getByRole('button', { name: 'Costs' }).click();
    await page.getByRole('heading', { name: 'Costs of Reports' }).waitFor();
    await page.getByRole('table', { name: 'Costs per user' }).getByText('local-owner').waitFor();
    await page.getByLabel('Warn at (USD)').fill('0.01');
    await page.getByLabel('Pause new turns at (USD)').fill('5');
    await page.getByRole('button', { name: 'Save thresholds' }).click();
    await page.getByRole('status').getByText('Thresholds saved').waitFor();
    await page.getByText('warning threshold reached').waitFor();
    expect((await web.client.request('costs/project', { projectId: project.id })).thresholds).toEqual({ warnUsd: 0.01, pauseUsd: 5 });
    // A warning above the pause is refused with the server's error, naming the field.
    await page.getByLabel('Warn at (USD)').fill('9');
    await page.getByRole('button', { name: 'Save thresholds' }).click();
    expect(await page.getByRole('alert').innerText()).toContain('params.warnUsd');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'project-costs');
  });
});

/**
 * The web UI's project pages in Chromium against a real `openvaala serve` (docs/platform.md):
 * the header's project switcher narrows the conversation list and stays picked across a
 * reload; the secrets page sets a secret (written to the workspace `.env`) and removes it
 * (its line gone); the members page adds and removes a member. axe-core finds no serious
 * violation on the pages.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Project } from '../../src/protocol/projects.js';
import { screenshot, seriousAccessibilityViolations, startWebSession, type WebSession } from './web-session.js';

const SCRIPT = `
responses:
  - text: "answer in alpha"
  - text: "answer in beta"
`;

describe('web UI: projects', { timeout: 120_000 }, () => {
  let web: WebSession;
  let page: Page;
  let alpha: Project;
  let beta: Project;
  const conversations: Record<string, string> = {};

  beforeAll(async () => {
    web = await startWebSession({ script: SCRIPT, viewport: { width: 1280, height: 800 } });
    for (const name of ['Alpha', 'Beta']) {
      const directory = path.join(web.environment.workDir, name.toLowerCase());
      mkdirSync(directory, { recursive: true });
      const { project } = await web.client.request('projects/create', { name, workspace: { executor: 'local', directory } });
      if (name === 'Alpha') alpha = project;
      else beta = project;
      const { conversation } = await web.client.request('conversation/create', { projectId: project.id, title: `${name} chat` });
      await web.client.request('session/input', { conversationId: conversation.id, input: `hello ${name}` });
      conversations[name] = conversation.id;
    }
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
  });

  it('the project switcher narrows the conversation list and stays picked after a reload', async () => {
    page = await web.open('#/');
    const item = (name: string) => page.locator(`[data-conversation-id="${conversations[name]}"]`);
    await item('Alpha').waitFor();
    await item('Beta').waitFor();
    const switcher = page.getByLabel('Project');
    expect(await switcher.locator('option').allInnerTexts()).toEqual(['All conversations', 'Alpha', 'Beta']);
    await switcher.selectOption(alpha.id);
    await expect.poll(() => item('Beta').count()).toBe(0);
    expect(await item('Alpha').count()).toBe(1);
    await page.reload();
    await page.locator('[data-status="open"]').waitFor();
    await expect.poll(() => page.getByLabel('Project').inputValue()).toBe(alpha.id);
    await item('Alpha').waitFor();
    expect(await item('Beta').count()).toBe(0);
    // A new conversation goes to the picked project's workspace.
    await page.getByRole('button', { name: 'New', exact: true }).click();
    expect(await page.locator('.project-note').innerText()).toContain(`In project Alpha: it works in local:${alpha.workspace.directory}`);
    await page.getByLabel('Project').selectOption(beta.id);
    await page.getByRole('button', { name: 'Projects' }).click();
    await page.locator(`[data-project-id="${beta.id}"]`).waitFor();
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'projects-list');
  });

  it('the secrets page sets a secret into the workspace .env and removes it again', async () => {
    await page.goto(`${web.webUrl}#/p/${alpha.id}/secrets`);
    await page.getByRole('heading', { name: 'Secrets of Alpha' }).waitFor();
    await page.getByLabel('Name').fill('DEPLOY_TOKEN');
    await page.getByLabel('Value').fill('web-secret-value-42');
    await page.getByRole('button', { name: 'Set secret' }).click();
    await page.locator('[data-secret="DEPLOY_TOKEN"]').waitFor();
    // The local owner manages every project: the value is shown to them.
    expect(await page.locator('[data-secret="DEPLOY_TOKEN"] .secret-value').innerText()).toBe('web-secret-value-42');
    const envFile = path.join(alpha.workspace.directory, '.env');
    expect(readFileSync(envFile, 'utf8')).toContain('DEPLOY_TOKEN=web-secret-value-42\n');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'projects-secrets');
    await page.getByRole('button', { name: 'Remove DEPLOY_TOKEN' }).click();
    await expect.poll(() => page.locator('[data-secret="DEPLOY_TOKEN"]').count()).toBe(0);
    expect(readFileSync(envFile, 'utf8')).not.toContain('web-secret-value-42');
    // A name the server refuses: its error names the field.
    await page.getByLabel('Name').fill('SHORT_ONE');
    await page.getByLabel('Value').fill('abc');
    await page.getByRole('button', { name: 'Set secret' }).click();
    expect(await page.getByRole('alert').innerText()).toContain('params.value');
  });

  it('the members page adds and removes a member', async () => {
    await page.goto(`${web.webUrl}#/p/${beta.id}/members`);
    await page.getByRole('heading', { name: 'Members of Beta' }).waitFor();
    await page.getByLabel('User id').fill('alice');
    await page.getByLabel('Role').selectOption('manager');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.locator('[data-member="alice"]').waitFor();
    expect(await page.locator('[data-member="alice"]').innerText()).toContain('manager');
    expect((await web.client.request('projects/members/list', { projectId: beta.id })).members.map((member) => member.userId)).toEqual(['alice']);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Remove alice' }).click();
    await expect.poll(() => page.locator('[data-member="alice"]').count()).toBe(0);
    expect((await web.client.request('projects/members/list', { projectId: beta.id })).members).toEqual([]);
  });
});

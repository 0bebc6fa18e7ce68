/**
 * The web UI across a server restart in the middle of a turn: the page notices, reconnects by
 * itself with the same session cookie (the server keeps its browser sessions in the data
 * directory), resubscribes with `afterSeq`, and ends with the items of the log (`items/list`) —
 * none lost, none doubled — and goes on working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationIdOf, pageItemIds, screenshot, startWebSession, type WebSession } from './web-session.js';

const SCRIPT = `
responses:
  - text: "Before the restart."
  - deltas: ["Half ", "an ", "answer."]
    holds:
      - { afterDeltas: 1, gate: restart-here }
  - text: "Answered after the restart."
`;

describe('web UI across a server restart', { timeout: 120_000 }, () => {
  let web: WebSession;

  beforeAll(async () => {
    web = await startWebSession({ script: SCRIPT, viewport: { width: 1280, height: 800 } });
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
  });

  it('recovers from a restart mid-turn with an item list equal to the log', async () => {
    const { conversation } = await web.client.request('conversation/create', { cwd: web.environment.workDir, title: 'Restarted' });
    const page = await web.open(`#/c/${conversation.id}`);
    expect(conversationIdOf(page)).toBe(conversation.id);
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('first');
    await box.press('Control+Enter');
    await page.getByRole('log', { name: 'Transcript' }).getByText('Before the restart.').waitFor();
    await box.fill('second');
    await box.press('Control+Enter');
    await web.environment.mock.waitForHold('restart-here', 15_000);
    await page.locator('article.live[data-kind="assistant_message"]', { hasText: 'Half' }).waitFor();
    const before = await pageItemIds(page, conversation.id);

    const statuses: string[] = [];
    await page.exposeFunction('recordStatus', (status: string) => statuses.push(status));
    // Runs in the page (a string: the test's TypeScript has no DOM types).
    await page.evaluate(`(() => {
      const element = document.querySelector('[data-status]');
      new MutationObserver(() => window.recordStatus(element.getAttribute('data-status'))).observe(element, { attributes: true, attributeFilter: ['data-status'] });
    })()`);
    await web.restart();
    // No new sign-in: the session cookie still holds with the restarted server.
    await expect.poll(() => statuses.includes('reconnecting'), { timeout: 20_000 }).toBe(true);
    await page.locator('[data-status="open"]').waitFor({ timeout: 20_000 });
    expect(statuses).not.toContain('unauthorized');

    // The log is read again at each look: a turn may still record an item after its answer shows.
    const pageMatchesLog = async (): Promise<string[]> => {
      let log: string[] = [];
      await expect
        .poll(async () => {
          log = (await web.client.request('items/list', { conversationId: conversation.id, limit: 1000 })).items.map((stored) => stored.item.id);
          return { page: await pageItemIds(page, conversation.id), log };
        })
        .toSatisfy(({ page: shown, log: stored }: { page: string[]; log: string[] }) => JSON.stringify(shown) === JSON.stringify(stored));
      return log;
    };

    // The turn cut by the restart is recorded as interrupted; the page shows what the log holds.
    await page.locator('.transcript > .rows > .row > .turn-end').nth(1).waitFor({ timeout: 20_000 });
    const log = await pageMatchesLog();
    expect(log.slice(0, before.length)).toEqual(before);
    expect(await page.locator('article.live').count()).toBe(0);

    await box.fill('third');
    await box.press('Control+Enter');
    await page.getByRole('log', { name: 'Transcript' }).getByText('Answered after the restart.').waitFor({ timeout: 20_000 });
    const after = await pageMatchesLog();
    expect(new Set(after).size).toBe(after.length);
    await screenshot(page, 'restart-recovered');
  });
});

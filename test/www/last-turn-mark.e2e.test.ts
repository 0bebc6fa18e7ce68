/**
 * The web UI's conversation list marks a conversation whose last turn failed, or completed
 * with an answer that may be cut (the model's output limit), as the terminal UI's picker and
 * `openvaala conversations list` do; a normal finish has no mark. In Chromium, against a real
 * server with the mock provider, with axe-core on the list showing the marks.
 */
import { expect, it } from 'vitest';
import { screenshot, seriousAccessibilityViolations, startWebSession } from './web-session.js';

const SCRIPT = `
responses:
  - text: "An answer cut at the output limit"
    incompleteReason: max_output_tokens
  - error: { status: 400, message: "the request was refused" }
  - text: "A whole answer."
`;

it('marks a last turn that failed or may be cut in the list, beside the time, and a normal finish not at all', async () => {
  const web = await startWebSession({ script: SCRIPT, viewport: { width: 1280, height: 800 } });
  try {
    const ids: string[] = [];
    for (const title of ['Cut', 'Failed', 'Whole']) {
      const { conversation } = await web.client.request('conversation/create', { cwd: web.environment.workDir, title });
      ids.push(conversation.id);
      await web.client.request('session/input', { conversationId: conversation.id, input: `the ${title.toLowerCase()} one` });
      // One at a time: the mock answers in order.
      await expect
        .poll(async () => (await web.client.request('conversation/list', {})).conversations.find((summary) => summary.id === conversation.id)?.lastTurnStatus ?? null, { timeout: 20_000 })
        .not.toBeOneOf([null, 'running']);
    }
    const [cut, failed, whole] = ids as [string, string, string];
    const page = await web.open('#/');
    const entry = (id: string) => page.locator(`li[data-conversation-id="${id}"]`);
    await entry(whole).waitFor();
    await expect.poll(() => entry(cut).locator('.last-turn').textContent()).toContain('⚠ output limit reached');
    expect(await entry(cut).locator('.last-turn').getAttribute('class')).toContain('incomplete');
    expect(await entry(failed).locator('.last-turn').textContent()).toContain('✗ model error');
    expect(await entry(failed).locator('.last-turn').getAttribute('class')).toContain('failed');
    expect(await entry(whole).locator('.last-turn').count()).toBe(0);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'last-turn-marks');
  } finally {
    await web.stop();
  }
}, 120_000);

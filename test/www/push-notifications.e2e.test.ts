/**
 * Web Push in the browser (docs/notifications.md): in Chromium against a real `openvaala
 * serve`, the settings page offers the "Notifications on this device" toggle, and the page's
 * service worker turns a push message (delivered through the DevTools protocol, as a push
 * service would deliver it) into a notification with the conversation's title, the text, and
 * the conversation's route to open on click. Subscribing itself needs a push service, which
 * headless Chromium lacks: there the toggle shows the browser's refusal and stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebSession, type WebSession } from './web-session.js';

describe('push notifications in the browser', { timeout: 90_000 }, () => {
  let web: WebSession;

  beforeAll(async () => {
    web = await startWebSession({ script: 'responses: []\n', viewport: { width: 1280, height: 800 } });
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
  });

  it('shows a pushed message as a notification leading to its conversation, and offers the toggle in settings', async () => {
    const origin = new URL(web.webUrl).origin;
    await web.context.grantPermissions(['notifications'], { origin });
    const page = await web.open('#/settings');
    const toggle = page.getByRole('checkbox', { name: /Notifications on this device when no tab is open/ });
    await toggle.waitFor({ timeout: 15_000 });
    // Not subscribed yet: the server lists no subscription of this browser.
    await expect.poll(() => toggle.isEnabled(), { timeout: 15_000 }).toBe(true);
    expect(await toggle.isChecked()).toBe(false);

    const cdp = await web.context.newCDPSession(page);
    const registrations: { registrationId: string; scopeURL: string }[] = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (event: { registrations: { registrationId: string; scopeURL: string }[] }) => registrations.push(...event.registrations));
    await cdp.send('ServiceWorker.enable');
    await page.evaluate('navigator.serviceWorker.ready.then(() => true)');
    await expect.poll(() => registrations.find((registration) => registration.scopeURL === web.webUrl)?.registrationId, { timeout: 15_000 }).toBeDefined();
    const registrationId = registrations.find((registration) => registration.scopeURL === web.webUrl)!.registrationId;
    const payload = { kind: 'turn_completed', conversationId: 'conv_01abcdefghjkmnpqrstvwxyz0', title: 'Release checks', text: 'The build is green.', url: '#/c/conv_01abcdefghjkmnpqrstvwxyz0', at: Date.now() };
    const shownNow = async () => (await page.evaluate('navigator.serviceWorker.ready.then((registration) => registration.getNotifications()).then((all) => all.map((each) => ({ title: each.title, body: each.body, tag: each.tag, data: each.data })))')) as unknown[];
    // A push delivered by the debugging protocol while the worker is still starting can be
    // dropped by the browser: it is delivered again until one is shown (the tag makes a
    // second one replace the first, so one notification is expected either way).
    const shown = async () => {
      const now = await shownNow();
      if (now.length === 0) await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: JSON.stringify(payload) });
      return now;
    };
    await expect.poll(shown, { timeout: 15_000, interval: 500 }).toEqual([{ title: 'Release checks', body: 'The build is green.', tag: `${payload.conversationId}:turn_completed`, data: { url: payload.url } }]);
    // Headless Chromium has no push service and refuses to register: the browser's reason is
    // shown, the toggle stays off and the server stores nothing.
    await toggle.click();
    await page.locator('.push-notifications [role="alert"]').getByText(/Registration failed/).waitFor({ timeout: 15_000 });
    expect(await toggle.isChecked()).toBe(false);
    expect((await web.client.request('notifications/list', {})).subscriptions).toEqual([]);
    await page.close();
  });
});

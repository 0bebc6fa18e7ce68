/**
 * Composer drafts kept per tab (docs/web-ui.md, "Drafts"): in Chromium against a real
 * `openvaala serve`, unsent text survives switching conversations and a reload, is gone once
 * sent, and is not seen by a second tab; the storage bounds are checked on an in-memory
 * `Storage`.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearDraft, conversationDraftKey, loadDraft, MAX_DRAFT_CHARACTERS, MAX_DRAFTS, saveDraft, type DraftStorage } from '../../src/www/state/drafts.js';
import { startWebSession, type WebSession } from './web-session.js';

/** A `Storage` held in a map, as `sessionStorage` behaves. */
function memoryStorage(): DraftStorage {
  const entries = new Map<string, string>();
  return {
    get length() {
      return entries.size;
    },
    key: (index: number) => [...entries.keys()][index] ?? null,
    getItem: (name: string) => entries.get(name) ?? null,
    setItem: (name: string, value: string) => void entries.set(name, String(value)),
    removeItem: (name: string) => void entries.delete(name),
  };
}

describe('draft storage bounds', () => {
  it('cuts a long draft without splitting a surrogate pair, and keeps only the most recently saved drafts', () => {
    const storage = memoryStorage();
    saveDraft('long', 'a'.repeat(MAX_DRAFT_CHARACTERS - 1) + '😀tail', storage, 1);
    expect(loadDraft('long', storage)).toBe('a'.repeat(MAX_DRAFT_CHARACTERS - 1));
    for (let index = 0; index < MAX_DRAFTS + 5; index++) saveDraft(conversationDraftKey(`conv_${index}`), `draft ${index}`, storage, 10 + index);
    expect(storage.length).toBe(MAX_DRAFTS);
    expect(loadDraft('long', storage)).toBe('');
    // 56 drafts saved: the long one and conv_0 to conv_4 were the oldest.
    expect(loadDraft(conversationDraftKey('conv_4'), storage)).toBe('');
    expect(loadDraft(conversationDraftKey('conv_5'), storage)).toBe('draft 5');
    // Editing an old draft makes it recent: the next new draft drops another one.
    saveDraft(conversationDraftKey('conv_5'), 'draft 5, edited', storage, 100);
    saveDraft('newest', 'x', storage, 101);
    expect(storage.length).toBe(MAX_DRAFTS);
    expect(loadDraft(conversationDraftKey('conv_5'), storage)).toBe('draft 5, edited');
    expect(loadDraft(conversationDraftKey('conv_6'), storage)).toBe('');
    // An empty text and a sent message remove the draft; an entry that is not a draft reads as none.
    saveDraft('newest', '', storage, 102);
    clearDraft(conversationDraftKey('conv_5'), storage);
    expect(loadDraft('newest', storage)).toBe('');
    expect(loadDraft(conversationDraftKey('conv_5'), storage)).toBe('');
    storage.setItem('openvaala.draft.broken', '{not json');
    expect(loadDraft('broken', storage)).toBe('');
  });

  it('keeps the draft just saved when it ties with older ones, whatever order the storage lists its keys in', () => {
    const entries = new Map<string, string>();
    // Keys listed in alphabetical order, not the order they were set.
    const sorted: DraftStorage = {
      get length() {
        return entries.size;
      },
      key: (index: number) => [...entries.keys()].sort()[index] ?? null,
      getItem: (name: string) => entries.get(name) ?? null,
      setItem: (name: string, value: string) => void entries.set(name, String(value)),
      removeItem: (name: string) => void entries.delete(name),
    };
    for (let index = 0; index < MAX_DRAFTS; index++) saveDraft(`b_${index}`, `draft ${index}`, sorted, 7);
    saveDraft('a_new', 'just typed', sorted, 7);
    expect(sorted.length).toBe(MAX_DRAFTS);
    expect(loadDraft('a_new', sorted)).toBe('just typed');
  });

  it('never throws when the storage is full', () => {
    const full: DraftStorage = {
      ...memoryStorage(),
      getItem: () => null,
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    expect(() => saveDraft('key', 'text', full)).not.toThrow();
  });
});

describe('composer drafts in the browser', { timeout: 90_000 }, () => {
  let web: WebSession;

  beforeAll(async () => {
    web = await startWebSession({ script: 'responses:\n  - text: "Got the draft."\n', viewport: { width: 1280, height: 800 } });
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
  });

  const box = (page: Page) => page.getByRole('textbox', { name: 'Message' });
  const openConversation = async (page: Page, conversationId: string) => {
    await page.getByRole('navigation', { name: 'Conversations' }).locator(`li[data-conversation-id="${conversationId}"] a`).click();
    await page.waitForURL(new RegExp(`#/c/${conversationId}$`));
  };

  it('keeps a draft across conversation switches and reloads, per tab, until it is sent', async () => {
    const first = (await web.client.request('conversation/create', { cwd: web.environment.workDir, title: 'First' })).conversation;
    const second = (await web.client.request('conversation/create', { cwd: web.environment.workDir, title: 'Second' })).conversation;
    const page = await web.open(`#/c/${first.id}`);
    await box(page).fill('Half-written thought');

    await openConversation(page, second.id);
    await expect.poll(() => box(page).inputValue()).toBe('');
    await box(page).fill('Other draft');
    await openConversation(page, first.id);
    await expect.poll(() => box(page).inputValue()).toBe('Half-written thought');

    await page.reload();
    await page.locator('[data-status="open"]').waitFor({ timeout: 15_000 });
    await expect.poll(() => box(page).inputValue()).toBe('Half-written thought');

    // A second tab has its own sessionStorage: none of the first tab's drafts.
    const other = await web.open(`#/c/${first.id}`);
    await box(other).waitFor();
    expect(await box(other).inputValue()).toBe('');
    await box(other).fill('Second tab text');
    await other.close();

    // The new-conversation form keeps its first message as a draft of its own.
    await page.getByRole('button', { name: 'New', exact: true }).click();
    const firstMessage = page.getByRole('main', { name: 'New conversation' }).getByLabel('First message (optional)');
    await firstMessage.fill('Start with the tests');
    await openConversation(page, first.id);
    await expect.poll(() => box(page).inputValue()).toBe('Half-written thought');
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await expect.poll(() => firstMessage.inputValue()).toBe('Start with the tests');
    await openConversation(page, first.id);

    await box(page).press('Control+Enter');
    await page.getByRole('log', { name: 'Transcript' }).getByText('Got the draft.').waitFor({ timeout: 20_000 });
    expect(await box(page).inputValue()).toBe('');
    await page.reload();
    await page.locator('[data-status="open"]').waitFor({ timeout: 15_000 });
    await page.getByRole('log', { name: 'Transcript' }).getByText('Got the draft.').waitFor();
    expect(await box(page).inputValue()).toBe('');
    // The other conversation's draft was not touched by sending.
    await openConversation(page, second.id);
    await expect.poll(() => box(page).inputValue()).toBe('Other draft');
    await page.close();
  });
});
